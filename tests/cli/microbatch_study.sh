#!/usr/bin/env bash
# `tessera microbatch-study` in CI size: a DeepBench problem at a batch of 2 and one layer of a
# scenario's model and of a zoo model run end to end (profile, plan, measured runs) and write their tables; a rerun
# reuses the profile; bad options exit 2 naming the option. Timings are not checked.
set -u
tessera=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
export OMP_NUM_THREADS=1

expect() {  # expect CODE PATTERN COMMAND...: exit code and a substring of stdout+stderr
  local code=$1 pattern=$2
  shift 2
  local output
  output=$("$tessera" "$@" 2>&1)
  local actual=$?
  [ "$actual" -eq "$code" ] || fail "tessera $*: exit $actual, expected $code: $output"
  [[ "$output" == *"$pattern"* ]] || fail "tessera $*: output lacks '$pattern': $output"
}

rows() { tail -n +2 "$1" | wc -l; }  # data lines of a CSV

quick=(--seconds-per-measurement 0.001)
deepbench="$scratch/deepbench"
expect 0 "workspace limit 64.00 MiB" microbatch-study --problems 52 --mini-batch 2 \
  --limits 8,64 "${quick[@]}" --output "$deepbench"
# 3 kernels x 2 limits x 3 policies, and one summary per limit and policy.
[ "$(rows "$deepbench/rows.csv")" -eq 18 ] || fail "rows.csv: $(rows "$deepbench/rows.csv") rows"
[ "$(rows "$deepbench/summary.csv")" -eq 6 ] || fail "summary.csv: $(rows "$deepbench/summary.csv")"
grep -q "^52,backward_filter,2,.*,power_of_two," "$deepbench/rows.csv" ||
  fail "rows.csv lacks problem 52's backward-filter power_of_two row"
# Its runs go back to back, and its profile says so (a profile read later is timed by it).
grep -q '^# caches: warm$' "$deepbench/profile.csv" || fail "profile.csv does not say its caches"
expect 0 "0 sizes profiled" microbatch-study --problems 52 --mini-batch 2 --limits 8 \
  "${quick[@]}" --output "$deepbench"

layer="$scratch/layer"
expect 0 "3 kernels" microbatch-study scenarios/custom_model.yaml --layers branch_a \
  --mini-batch 4 --policies undivided,all --all-max-batch 2 "${quick[@]}" --output "$layer"
grep -q "^branch_a,forward,4,.*,all,.*not run: batch 4 > --all-max-batch 2" "$layer/rows.csv" ||
  fail "policy all above its cap is not reported as not run"

# A zoo model with no mini-batch of its own takes --mini-batch (or 1).
expect 0 "3 kernels" microbatch-study resnet50 --layers conv1 --mini-batch 2 --policies undivided \
  "${quick[@]}" --output "$scratch/zoo"

skipped="$scratch/skipped"
expect 0 "excluded" microbatch-study --problems 52 --mini-batch 2 --limits 8 --skip-algorithms ref: \
  "${quick[@]}" --output "$skipped"
grep -q ",ref:" "$skipped/profile.csv" && fail "--skip-algorithms ref: still profiled ref: rows"
grep -q ",ref:" "$skipped/rows.csv" && fail "--skip-algorithms ref: still planned with ref:"

expect 2 "--problems" microbatch-study --problems 94 --output "$scratch/x"
expect 2 "--problems" microbatch-study --problems 5-3 --output "$scratch/x"
expect 2 "--limits" microbatch-study --limits 8x --output "$scratch/x"
expect 2 "--policies" microbatch-study --policies none --output "$scratch/x"
expect 2 "--layers" microbatch-study scenarios/custom_model.yaml --layers nope --output "$scratch/x"
expect 2 "--device" microbatch-study --problems 52 --device tpu:0 --output "$scratch/x"
: >"$scratch/a-file"
expect 2 "--output" microbatch-study --problems 52 --output "$scratch/a-file/out"

[ "$failures" -eq 0 ] && echo "all microbatch-study checks passed"
exit $((failures > 0))
