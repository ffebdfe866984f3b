# shellcheck shell=bash
# One vDNN run: a scenario written from the run's line (vdnn_runs), trained for real on one device
# capped where the line says so (a run an earlier call measured is kept); its row of
# vdnn/summary.csv from the result's CSV.
vdnn_run() {
  local name=$1 model=$2 batch=$3 offload=$4 cap_gib=$5 folder="$work/vdnn"
  local file="$folder/scenarios/$name.yaml"
  {
    echo "# Written by tools/gpu/campaign.sh (step vdnn): vDNN on the GPU at hand."
    echo "name: vdnn-gpu-$name"
    echo "model: {zoo: $model${vdnn_model_options:+, options: $vdnn_model_options}, mini_batch: $batch, optimizer: momentum}"
    if [ "$cap_gib" = 0 ]; then
      echo "memory: {offload: $offload}"
    else
      echo "memory: {offload: $offload, device_capacity: $cap_gib GiB}"
    fi
    echo "platform: {preset: dgx_h100_superpod, nodes: 1}"
    echo "sweep: {scaling: strong, grow: data, gpus: [1]}"
    echo "real: {warmup_steps: 1, measured_steps: 3}"
  } >"$file"
  echo "== $name"
  local csv="$folder/$name/real.csv"
  if [ -f "$csv" ]; then
    echo "measured by an earlier call: $csv"
  else
    rm -rf "$folder/$name"
    (cd "$work" && bounded_bundle "$bundle/bin/tessera" run "$file" --backend real \
       --output "$folder/$name") || { rm -f "$csv"; return 1; }
    [ -f "$csv" ] || { echo "no $csv"; return 1; }
  fi
  "$python" - "$csv" "$name" "$model" "$batch" "$offload" "$cap_gib" >>"$folder/summary.csv" <<'PYTHON'
import csv, sys
path, name, model, batch, offload, cap = sys.argv[1:]
row = next(csv.DictReader(open(path)))
print(",".join([name, model, batch, offload, cap, row["status"], row["step_s"],
                row["peak_memory_bytes"], row["average_memory_bytes"],
                row.get("offloaded_bytes", ""), row["note"].replace(",", ";")]))
PYTHON
}

step_vdnn() {
  local failures=0 line
  mkdir -p "$work/vdnn/scenarios"
  echo "run,model,batch,offload,cap_gib,status,step_s,peak_memory_bytes,average_memory_bytes,offloaded_bytes,note" \
    >"$work/vdnn/summary.csv"
  while read -r line; do
    if [ $((deadline - (SECONDS - started) - 30)) -le 0 ]; then
      failures=$((failures + 1))
      step_note+="${line%% *} not run: out of time; "
      continue
    fi
    # shellcheck disable=SC2086  # the line's five words
    if vdnn_run $line; then
      step_note+="${line%% *} ok; "
    else
      failures=$((failures + 1))
      step_note+="${line%% *} FAILED; "
    fi
  done <<<"$vdnn_runs"
  # The kernels of each model's uncapped run without offloading, for the simulation of every run
  # (analysis/vdnn_gpu_compare.py --profiles): profiles/<device>/vdnn-gpu-<run>.csv.
  local name model batch offload cap_gib
  while read -r name model batch offload cap_gib; do
    [ "$offload" = none ] && [ "$cap_gib" = 0 ] || continue
    (cd "$work" && bounded_bundle "$bundle/bin/tessera" profile "$work/vdnn/scenarios/$name.yaml" \
       --device "$device" --seconds-per-measurement "$seconds_per_measurement" \
       "${cache_arguments[@]}") || { failures=$((failures + 1)); step_note+="profile of $name FAILED; "; }
  done <<<"$vdnn_runs"
  return $((failures > 0))
}
