#!/usr/bin/env bash
# Sets up and runs the whole test suite: what CI runs (.ci/run calls this).
#   1. Release build with warnings as errors (CUDA parts compiled when nvcc, cuDNN, NCCL exist):
#      every unit and command-line test but the speed checks (label bench); then the check that
#      setup.sh installs every Debian package the build uses (tests/setup/check_packages.sh), that
#      every C++ source is formatted as .clang-format says (tests/style/check_format.sh), and that
#      core's folders include no header of a folder above them (tests/style/check_core_layers.sh).
#   2. One CPU-only clang build with AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's
#      coverage:
#      a. every test again but those labelled `heavy` (4-rank MPI runs, command-line training
#         runs, plan searches, sweeps over MPI ranks and the Python studies, which step 1 ran;
#         under the sanitizers they take a minute or more each), the cases in
#         sanitizer_skipped_cases below,
#         `setup` (the package check, which sanitizers do not change) and `analysis` (the
#         Python scripts' own tests: nothing sanitized runs there);
#      b. libFuzzer over every input format's reader (tests/fuzz/: scenarios, profile databases,
#         cluster files, model files, ...) for a bounded time each (--fuzz-seconds, default 30).
# Both builds are unity builds (setup.sh --unity: the clean sanitized build in 41% of the time);
# a plain ./setup.sh compiles each file alone, which checks that each includes what it uses. Both
# run each test binary in 8 shards (test_shards below; setup.sh --test-shards) rather than a
# process per test case.
# Each step prints how long it took. Budget: 40 minutes on a 2-core machine, from a fresh clone
# (what it took: docs/measurements/, "./test.sh from a fresh clone").
#   ./test.sh --quick             only step 1
#   ./test.sh --fuzz-seconds N    each fuzzer for N seconds
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
quick=0
fuzz_seconds=${TESSERA_FUZZ_SECONDS:-30}
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --fuzz-seconds) fuzz_seconds=${2:-}; shift $(($# > 1 ? 1 : 0)) ;;
    *) echo "test.sh: unknown option '$1' (see the comment at the top of test.sh)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$fuzz_seconds" =~ ^[1-9][0-9]*$ ]] ||
  { echo "test.sh: --fuzz-seconds takes a whole number of seconds, not '$fuzz_seconds'" >&2; exit 2; }
jobs=$(nproc)
test_shards=8
started=$SECONDS
step_started=$SECONDS
step() {
  [ "$step_started" -lt "$SECONDS" ] && [ "$#" -gt 0 ] &&
    echo "   (took $(((SECONDS - step_started) / 60)) min $(((SECONDS - step_started) % 60)) s)"
  step_started=$SECONDS
  [ "$#" -gt 0 ] && echo "== $*"
  return 0
}
# ctest over BUILD_DIR with the given options; a failure's output is printed again at the end.
run_tests() {
  local build_dir=$1
  shift
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" "$@" && return 0
  tests/ctest/print_failures.sh "$build_dir"
  return 1
}
finish() {
  echo "== test.sh: all steps passed in $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
}

step "[1/2] Release build (warnings as errors) and tests"
./setup.sh --werror --unity --test-shards "$test_shards"
# The speed checks (label bench: a simulated step's cost against reference work) are benchmarks,
# run by hand (ctest --test-dir build -L bench): on a shared 2-core machine their ratio moved from
# 1.7 to 2.4-3.5 with the same code (docs/measurements/2026-12-05-test-shards.md).
run_tests build --label-exclude bench
tests/setup/check_packages.sh build setup.sh
tests/style/check_format.sh
tests/style/check_core_layers.sh
if [ "$quick" -eq 1 ]; then
  finish
  exit 0
fi

step "[2/2] CPU-only clang build with ASan + UBSan: tests (labels heavy, setup, analysis excluded), fuzzers"
./setup.sh --no-install --werror --unity --sanitize --fuzz --no-benchmarks --build-dir build-sanitize \
  --test-shards "$test_shards"
# GoogleTest cases left out under the sanitizers (the shards read the filter from the environment)
sanitizer_skipped_cases=(
  # every candidate simulated: 100 to 150 s each under the sanitizers
  'PlanSearchSim.EqualsExhaustive*'
  # a plan search in 1 to 4 child processes: a minute; the search itself runs in the others
  'PlanSearchSim.TheSameInputsGiveTheSameRankingWithAnyNumberOfChildren'
  # whole plan searches, 85 to 175 s each; the candidates' simulations are sanitized elsewhere
  'PlanSearchSim.CandidatesWithOneSignatureSimulateAlike'
  'PlanSearchSim.PlainDataParallelismWinsForResNet50AtFewGpus'
  'PlanSearchSim.CosmoFlow512NeedsASpatialSplitOn16GBGpus'
)
# Left out too: the bad-input command-line tests (cli_bad_*), whose files the fuzzers below start
# from, sanitized.
GTEST_FILTER="-$(IFS=':'; echo "${sanitizer_skipped_cases[*]}")" \
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_tests build-sanitize --label-exclude "heavy|setup|analysis" --exclude-regex 'cli_bad_[a-z]+_exit_2'
echo "-- fuzzing every input format's reader, $fuzz_seconds s each"
tests/fuzz/run_fuzzers.sh build-sanitize "$fuzz_seconds"
step
finish
