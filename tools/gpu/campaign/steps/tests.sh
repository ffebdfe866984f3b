# shellcheck shell=bash
# The tests step; the gtest counts also summarise the sanitizer steps' logs (sanitize.sh).

gtest_count() {  # gtest_count LOG LABEL: the count of gtest's "[ LABEL ] N test(s)" summary line
  local count
  count=$(grep -o "\\[ *$2 *\\] [0-9][0-9]* tests\\?" "$1" | tail -n 1 | grep -o '[0-9][0-9]*')
  echo "${count:-0}"
}
gtest_counts() {  # PASSED/SKIPPED/FAILED counts of a gtest log (per-test SKIPPED lines have none)
  echo "passed $(gtest_count "$1" PASSED), skipped $(gtest_count "$1" SKIPPED)," \
       "failed $(gtest_count "$1" FAILED)"
}

step_tests() {
  local log="$work/tests/gpu_tests.log" status=0
  mkdir -p "$work/tests"
  bounded_bundle "$bundle/tests/tessera_kernels_tests" --gtest_filter="$test_filter" \
    --gtest_output="xml:$work/tests/gpu_tests.xml" >"$log" 2>&1 || status=$?
  cat "$log"
  step_note=$(gtest_counts "$log")
  [ "$status" -eq 0 ] || return "$status"
  # Host-only tests match the filter too (cuDNN's descriptor arithmetic): a GPU test that skips
  # where no GPU is seen tells whether one was, where the filter runs it.
  local probe='CudaDevice\.DescribesItself'
  if [ "$dry_run" -eq 0 ] && grep -q "\[ RUN      \] $probe" "$log" &&
     ! grep -q "\[       OK \] $probe" "$log"; then
    step_note="the GPU tests did not run ($step_note): is the GPU visible?"
    return 1
  fi
}
