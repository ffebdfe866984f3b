# shellcheck shell=bash
# The memcheck and racecheck steps; compute_sanitizer also serves the versions step.

compute_sanitizer() {
  command -v compute-sanitizer 2>/dev/null && return 0
  local nvcc
  nvcc=$(command -v nvcc 2>/dev/null) && [ -x "$(dirname "$nvcc")/compute-sanitizer" ] &&
    echo "$(dirname "$nvcc")/compute-sanitizer"
}

# sanitize TOOL FILTER: compute-sanitizer's TOOL over the GPU tests FILTER selects, into
# tests/TOOL.log.
sanitize() {
  if [ "$dry_run" -eq 1 ]; then
    step_note="skipped: $1 needs a GPU"
    return 0
  fi
  local sanitizer log="$work/tests/$1.log" status=0
  sanitizer=$(compute_sanitizer) || { step_note="compute-sanitizer not found"; return 1; }
  mkdir -p "$work/tests"
  # API errors are left out: NCCL probes its kernels for other architectures at initialisation
  # and gets cudaErrorNoKernelImageForDevice, by design (32 such reports on 2026-11-27, all in
  # ncclInitKernelsForDevice); the program checks the status of every CUDA call itself.
  bounded_bundle "$sanitizer" --tool "$1" --report-api-errors no --error-exitcode 99 \
    "$bundle/tests/tessera_kernels_tests" --gtest_filter="$2" >"$log" 2>&1 || status=$?
  cat "$log"
  step_note="$(gtest_counts "$log"); $(grep -o 'ERROR SUMMARY: [0-9]* errors\?' "$log" | tail -n 1)"
  return "$status"
}
step_memcheck() { sanitize memcheck "$memcheck_filter"; }
step_racecheck() { sanitize racecheck "$racecheck_filter"; }
