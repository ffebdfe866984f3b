# shellcheck shell=bash
step_bench() {
  local program="$bundle/bench/tessera_device_memory_bench"
  [ -x "$program" ] || { echo "no $program: the bundle was built without the benchmarks"; return 1; }
  mkdir -p "$work/bench"
  bounded_bundle "$program" \
    --benchmark_out="$work/bench/device_memory.json" --benchmark_out_format=json
}
