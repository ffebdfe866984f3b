#!/usr/bin/env bash
# Tessera's Chakra export replayed in ASTRA-sim: six sweep points exported with `tessera export
# --chakra`, each simulated by Tessera (`tessera run`) and by ASTRA-sim's analytical
# (congestion-unaware) backend from the exported traces, side by side. A check of the traces
# (dependencies, compute times, collective sizes, groups, stragglers), not of the two network
# models: the rings in configs/ are given the bandwidth at which Tessera plays the same
# all-reduces. Build ASTRA-sim first (its README: build/astra_analytical/build.sh), then
#   tools/astra_sim/replay.sh ASTRA_SIM_BINARY [TESSERA] [OUTPUT]
# ASTRA_SIM_BINARY: .../build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware.
# Prints one line per point; exits 1 when ASTRA-sim fails on one, 2 on bad arguments.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 ASTRA_SIM_BINARY [TESSERA] [OUTPUT]" >&2; exit 2; }
astra=$(readlink -f "$1")
tessera=$(readlink -f "${2:-$root/build/app/tessera}")
output=$(mkdir -p "${3:-results/astra-sim-replay}" && cd "${3:-results/astra-sim-replay}" && pwd)
for binary in "$astra" "$tessera"; do
  [ -x "$binary" ] || { echo "replay.sh: $binary is not an executable" >&2; exit 2; }
done
configs=$here/configs
# ResNet-18 with ZeRO-3's sharded weights: all-gathers and reduce-scatters in the traces.
sed 's/^name: .*/name: resnet18-zero-weights/' "$root/scenarios/resnet18_real_cpu.yaml" \
  >"$output/resnet18_zero_weights.yaml"
printf 'memory: {shard: weights}\n' >>"$output/resnet18_zero_weights.yaml"

status=0
printf '%-26s %5s %14s %14s %8s\n' point GPUs "Tessera step" "ASTRA-sim" difference
# name | scenario | point | network | memory | extra tessera options
while IFS='|' read -r name scenario point network memory extra; do
  [ -n "$name" ] || continue
  case $scenario in /* | default) ;; *) scenario=$root/$scenario ;; esac
  read -r -a options <<<"${extra//\$root/$root}"
  mkdir -p "$output/$name"
  "$tessera" export --chakra "$scenario" --point "$point" --output "$output/$name/et" \
    "${options[@]}" >"$output/$name/export.log" 2>&1 ||
    { echo "replay.sh: the export of $name failed (see $output/$name/export.log)" >&2; exit 1; }
  "$tessera" run "$scenario" --points "$point" --output "$output/$name/tessera" "${options[@]}" \
    >"$output/$name/tessera.log" 2>&1
  step=$(awk -F, -v p="$point" 'NR == 1 { for (i = 1; i <= NF; ++i) { if ($i == "step_s") c = i
      if ($i == "point") k = i }; next } $k == p { print $c }' "$output/$name/tessera/sim.csv")
  gpus=$(ls "$output/$name/et"/*.et | wc -l)
  prefix=$(ls "$output/$name/et"/*.0.et)
  prefix=${prefix%.0.et}
  (cd "$output/$name" && "$astra" --workload-configuration="$prefix" \
    --system-configuration="$configs/system.json" \
    --remote-memory-configuration="$configs/$memory" \
    --network-configuration="$configs/$network" \
    --comm-group-configuration="$output/$name/et/comm_groups.json" \
    --logging-folder="$output/$name/astra-log" >"$output/$name/astra-sim.log" 2>&1)
  astra_status=$?
  # The step: the last GPU to finish (ASTRA-sim counts cycles of 1 ns).
  replayed=$(grep -o 'finished, [0-9]* cycles' "$output/$name/astra-sim.log" |
    awk '{ if ($2 + 0 > most) most = $2 + 0 } END { if (NR) printf "%.9f", most / 1e9 }')
  if [ -z "$replayed" ]; then
    printf '%-26s %5s %12.3f ms %14s  (exit %s, see %s)\n' "$name" "$gpus" \
      "$(awk -v s="$step" 'BEGIN { print s * 1000 }')" failed "$astra_status" \
      "$output/$name/astra-sim.log"
    status=1
    continue
  fi
  awk -v n="$name" -v g="$gpus" -v t="$step" -v a="$replayed" \
    'BEGIN { printf "%-26s %5s %12.3f ms %11.3f ms %+7.1f%%\n", n, g, t * 1000, a * 1000, 100 * (a / t - 1) }'
done <<LIST
resnet18-data-parallel|scenarios/resnet18_real_cpu.yaml|2|ring_4_75GBps.yml|no_memory.json|
resnet18-pipeline|scenarios/resnet18_pipeline_real_cpu.yaml|1|ring_4_75GBps.yml|no_memory.json|
resnet18-zero-weights|$output/resnet18_zero_weights.yaml|2|ring_4_75GBps.yml|no_memory.json|
cosmoflow-spatial-reads|default|0|ring_4_75GBps.yml|reads_75GBps.json|
dgx1-healthy|scenarios/resnet18_stragglers.yaml|0|ring_8_150GBps.yml|no_memory.json|--cluster \$root/scenarios/clusters/dgx1_v100.yaml
dgx1-stragglers|scenarios/resnet18_stragglers.yaml|0|ring_8_150GBps.yml|no_memory.json|
LIST
exit $status
