#!/usr/bin/env bash
# Measured against simulated on this machine's CPU ranks: `tessera validate-sim` on the shipped
# CPU scenarios at 1 and 2 ranks, the MAPE of each and over all their points (the goal: at most
# 5%). A bench command, not a test: it prints the MAPE per scenario, and how far this machine's
# own GEMM rate moved while it ran (validate-sim's machine_speed.csv), then the MAPE over all
# points and over those whose machine held still (the GEMM rate within 10% at their rank count),
# and asserts nothing. Each scenario profiles its kernels first, then trains each point for
# about 20 s with the profile's rows timed again between the steps (validate-sim's defaults):
# 24 to 25 minutes in all on the 2-core development machine since each profiled run finds
# step-like caches (docs/measurements/2026-12-04-cpu-step-like-caches.md). Profiles are kept in OUTPUT and
# reused by a later run into it; a new OUTPUT measures them again.
# Usage: tests/bench/cpu_validate_sim.sh [TESSERA] [OUTPUT] [SCENARIO...] [-- OPTION...]
#   default scenarios: the shipped CPU ones (scenarios/*_real_cpu.yaml): CosmoFlow-32, ResNet-18
#   (data-parallel, pipelined, offloaded) and the 3D U-Net; options after `--` go to every
#   validate-sim (e.g. -- --jitter-seconds 10)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
tessera=${1:-build/app/tessera}
output=${2:-results/bench-cpu-validate-sim}
shift $(($# > 2 ? 2 : $#))
scenarios=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  scenarios+=("$1")
  shift
done
[ $# -gt 0 ] && shift  # the --
options=("$@")
[ ${#scenarios[@]} -gt 0 ] ||
  scenarios=(scenarios/*_real_cpu.yaml)
[ -x "$tessera" ] || { echo "cpu_validate_sim.sh: $tessera is not built" >&2; exit 2; }
mkdir -p "$output"
# Open MPI refuses to start as root (CI and the lent machines run as root) unless told both.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
errors=()
# Points measured while the machine's GEMM rate held within this many percent (at their rank
# count, from before profiling to after training) are also summed apart.
held_percent=10
held_errors=()
for scenario in "${scenarios[@]}"; do
  name=$(basename "$scenario" .yaml)
  # oneDNN's reference implementations (ref:) are 100 to 300 times slower than the others (never
  # the fastest in CosmoFlow-32's profiles) and most of a profile's time: the 3D U-Net's 2-rank
  # profile had not finished after 42 minutes with them.
  if "$tessera" validate-sim "$scenario" --max-ranks 2 --output "$output/$name" \
      --skip-algorithms ref: "${options[@]}" >"$output/$name.log" 2>&1; then
    mape=$(sed -n 's/^MAPE,,,,,,\([^,]*\).*/\1/p' "$output/$name/comparison.csv")
    # How far the machine's own GEMM rate moved between profiling and training (machine_speed.csv).
    drift=$(awk -F, 'NR > 1 { if ($1 != ranks) { ranks = $1; first = $4 }
      else { change = 100 * ($4 / first - 1); if (change < 0) change = -change;
             if (change > largest) largest = change } } END { printf "%.0f", largest }' \
      "$output/$name/machine_speed.csv" 2>/dev/null)
    printf '%-28s MAPE %s%% (1 and 2 ranks; %s/comparison.csv; machine GEMM rate moved up to %s%%)\n' \
      "$name" "${mape:-?}" "$output/$name" "${drift:-?}"
    # Every compared point's error, for the MAPE over all the scenarios, and the largest change of
    # the GEMM rate at its rank count (profiling to training), to tell the method's error from the
    # machine's drift.
    while read -r error change; do
      errors+=("$error")
      if awk -v c="$change" -v held="$held_percent" 'BEGIN { exit !(c != "?" && c <= held) }'; then
        held_errors+=("$error")
      fi
    done < <(awk -F, 'FNR == NR { if (FNR > 1) { if (!($1 in first)) first[$1] = $4
        change = 100 * ($4 / first[$1] - 1); if (change < 0) change = -change
        if (change > largest[$1]) largest[$1] = change }; next }
      $4 == "yes" { printf "%s %s\n", ($7 < 0 ? -$7 : $7),
        ($2 in first ? sprintf("%.1f", largest[$2]) : "?") }' \
      "$output/$name/machine_speed.csv" "$output/$name/comparison.csv" 2>/dev/null)
  else
    echo "$name: validate-sim failed (see $output/$name.log)"
    status=1
  fi
done
if [ ${#errors[@]} -gt 0 ]; then
  printf '%-28s MAPE %s%% over %d points\n' "all" \
    "$(printf '%s\n' "${errors[@]}" | awk '{ sum += $1 } END { printf "%.1f", sum / NR }')" \
    "${#errors[@]}"
  if [ ${#held_errors[@]} -gt 0 ]; then
    printf '%-28s MAPE %s%% over the %d of %d points whose machine GEMM rate held within %d%%\n' \
      "held" "$(printf '%s\n' "${held_errors[@]}" | awk '{ sum += $1 } END { printf "%.1f", sum / NR }')" \
      "${#held_errors[@]}" "${#errors[@]}" "$held_percent"
  else
    echo "held                         no point was measured while the machine's GEMM rate held within ${held_percent}%"
  fi
fi
exit "$status"
