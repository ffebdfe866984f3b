#!/usr/bin/env bash
# `tessera plan` end to end on a small case (CosmoFlow-128 on 8 GPUs of Lassen): it prints the
# ranking, the Pareto front and, with --explain, why; writes plan.csv, plan.json, summary.json and
# best.yaml, which validates and runs to the predicted step; a second run keeps every simulated
# candidate; under mpirun with 2 and 4 ranks it prints and writes the same as one process; pinned
# pipelined stages stay in the ranking and best.yaml. Bad input exits 2 naming the option.
# Usage: plan_command.sh TESSERA MPIEXEC
set -u
tessera=$1
mpiexec=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cat >"$scratch/small.yaml" <<'YAML'
name: plan-small
model: {zoo: cosmoflow, options: {width: 128}, mini_batch: 1}
parallelism: {data: 8}
platform: {preset: lassen}
YAML

# The output without the lines naming the output directory.
report() { grep -v '^best scenario: \|^results: ' "$1"; }

"$tessera" plan "$scratch/small.yaml" --gpus 8 --output "$scratch/one" --explain \
  >"$scratch/one.out" 2>"$scratch/one.err" || fail "exit $?: $(cat "$scratch/one.err")"
for text in 'candidates: .* invalid, .* bounded, .* evaluated' 'Best 5 by step' \
  'Pareto front, step per sample against memory per GPU' 'beats candidate .* (the runner-up)' \
  'breakdown, winner minus runner-up' 'Not simulated, invalid' 'Not simulated, bounded'; do
  grep -q "$text" "$scratch/one.out" || fail "no '$text' in: $(cat "$scratch/one.out")"
done
for file in plan.csv plan.json summary.json best.yaml; do
  [ -s "$scratch/one/$file" ] || fail "no $file"
done
grep -q "^plan: .* candidates screened in" "$scratch/one.err" ||
  fail "no progress line in a log: $(cat "$scratch/one.err")"
# The front drawn from the simulated candidates by default; --pareto proves it, simulating at
# least as many, and the best stays the same.
grep -q 'among the simulated candidates (--pareto proves it)' "$scratch/one.out" ||
  fail "the default front is not said to be among the simulated candidates"
"$tessera" plan "$scratch/small.yaml" --gpus 8 --output "$scratch/pareto" --pareto \
  >"$scratch/pareto.out" 2>&1 || fail "--pareto: $(cat "$scratch/pareto.out")"
grep -q 'among the simulated' "$scratch/pareto.out" && fail "--pareto front still 'among the simulated'"
simulated() { sed -n 's/.*(\([0-9]*\) simulated,.*/\1/p' "$1"; }
[ "$(simulated "$scratch/pareto.out")" -ge "$(simulated "$scratch/one.out")" ] ||
  fail "--pareto simulated fewer: $(simulated "$scratch/pareto.out") < $(simulated "$scratch/one.out")"
cmp -s <(grep -A3 '^Best 5' "$scratch/one.out") <(grep -A3 '^Best 5' "$scratch/pareto.out") ||
  fail "--pareto changed the best"
cp "$scratch/one/summary.json" "$scratch/one-summary.json"  # the resumed run counts kept rows
"$tessera" validate "$scratch/one/best.yaml" >/dev/null || fail "best.yaml does not validate"
predicted=$(sed -n 's/^# predicted step \([0-9.]* [mu]*s\),.*/\1/p' "$scratch/one/best.yaml")
"$tessera" run "$scratch/one/best.yaml" --output "$scratch/one/run" >"$scratch/run.out" 2>&1 ||
  fail "best.yaml does not run: $(cat "$scratch/run.out")"
grep -q "^ *0 .* $predicted " "$scratch/run.out" ||
  fail "best.yaml runs to another step than $predicted: $(cat "$scratch/run.out")"

# Resumed: nothing simulated again, the same report.
"$tessera" plan "$scratch/small.yaml" --gpus 8 --output "$scratch/one" --explain \
  >"$scratch/again.out" 2>/dev/null || fail "second run failed"
grep -q '(0 simulated, .* kept from an earlier run)' "$scratch/again.out" ||
  fail "not resumed: $(sed -n 2p "$scratch/again.out")"
diff <(report "$scratch/one.out" | sed 2d) <(report "$scratch/again.out" | sed 2d) >/dev/null ||
  fail "the resumed report differs"

# MPI ranks share the waves; rank 0 writes the same files and prints the same report.
for ranks in 2 4; do
  "$mpiexec" -np "$ranks" --oversubscribe "$tessera" plan "$scratch/small.yaml" --gpus 8 \
    --output "$scratch/mpi$ranks" --explain >"$scratch/mpi$ranks.out" 2>"$scratch/mpi$ranks.err" ||
    fail "$ranks ranks: exit $?: $(cat "$scratch/mpi$ranks.err")"
  diff <(report "$scratch/one.out") <(report "$scratch/mpi$ranks.out") ||
    fail "$ranks ranks print another report"
  cmp -s "$scratch/one/plan.csv" "$scratch/mpi$ranks/plan.csv" ||
    fail "$ranks ranks write another plan.csv"
  cmp -s "$scratch/one-summary.json" "$scratch/mpi$ranks/summary.json" ||
    fail "$ranks ranks write another summary.json"
  grep -q "($ranks ranks x 1 job)" "$scratch/mpi$ranks.err" || fail "$ranks ranks not used"
done

# A time budget under MPI: the ranks stop at the same wave (rank 0's clock) and write the run.
"$mpiexec" -np 2 --oversubscribe "$tessera" plan "$scratch/small.yaml" --gpus 8 --budget-s 1 \
  --output "$scratch/budget" >"$scratch/budget.out" 2>&1 || fail "budget over 2 ranks: $(cat "$scratch/budget.out")"
[ -s "$scratch/budget/plan.csv" ] || fail "budget over 2 ranks wrote no plan.csv"

# Energy per sample, at the presets' GPU power (TDP), over several GPU counts.
"$tessera" plan "$scratch/small.yaml" --gpus 4 8 --objective samples-per-joule --top 2 \
  --output "$scratch/energy" >"$scratch/energy.out" 2>&1 || fail "samples-per-joule failed"
grep -q 'Best 2 by samples-per-joule' "$scratch/energy.out" && grep -q 'samples/J' "$scratch/energy.out" ||
  fail "no energy ranking: $(cat "$scratch/energy.out")"

# Pipelined stages kept as the scenario has them: the ranking shows the pipeline, best.yaml keeps
# it and validates.
sed 's/mini_batch: 1/mini_batch: 2/; s/data: 8}/data: 4, model: {degree: 2, micro_batches: 2, schedule: 1f1b}}/' \
  "$scratch/small.yaml" >"$scratch/piped.yaml"
"$tessera" plan "$scratch/piped.yaml" --gpus 8 --top 3 --output "$scratch/piped" \
  --pin parallelism.model.degree parallelism.model.micro_batches parallelism.model.schedule \
  >"$scratch/piped.out" 2>&1 || fail "pinned pipeline failed: $(cat "$scratch/piped.out")"
grep -q '^ *1 .* 2 1f1b x2 ' "$scratch/piped.out" || fail "no pipeline ranked: $(cat "$scratch/piped.out")"
grep -q 'model: {degree: 2, micro_batches: 2, schedule: 1f1b}' "$scratch/piped/best.yaml" ||
  fail "best.yaml lost the pipeline: $(cat "$scratch/piped/best.yaml")"
"$tessera" validate "$scratch/piped/best.yaml" >/dev/null || fail "pipelined best.yaml does not validate"

# Bad input: exit 2, naming the option.
expect_bad() {
  local needle=$1
  shift
  output=$("$tessera" plan "$scratch/small.yaml" --output "$scratch/bad" "$@" 2>&1)
  code=$?
  [ "$code" -eq 2 ] || fail "exit $code (expected 2) for $*: $output"
  grep -q -- "$needle" <<<"$output" || fail "no '$needle' in: $output"
}
expect_bad "--pin: expected one of" --pin parallelism.bogus
expect_bad "--memory-limit: expected a size" --memory-limit "12 parsecs"
expect_bad "--objective: time-to-train needs" --objective time-to-train
expect_bad "--memory-limit: expected a size such as 512 MiB, 16 GiB or 1e9 (bytes) from 1 KiB to 1 EiB" \
  --memory-limit "8 EiB"
expect_bad "--global-batch: expected a whole number from 1 to 16777216, got '9223372036854775807'" \
  --global-batch 9223372036854775807
expect_bad "--top: expected a whole number from 1 to 1000000, got '2.5'" --top 2.5
expect_bad "--budget-s: expected a finite number of at least 0, got '-1'" --budget-s -1
expect_bad "--budget-s: expected a finite number" --budget-s nan
expect_bad "--gpus: expected at most the" --gpus 4 99999
expect_bad "--global-batch: give --global-batch or --mini-batch" --global-batch 8 --mini-batch 1
expect_bad "--global-batch: no strategy splits" --gpus 8 --global-batch 3 --pin parallelism.data
# An output folder that cannot be written is refused before the search.
output=$("$tessera" plan "$scratch/small.yaml" --output "$scratch/small.yaml/plan" 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q -- "--output: expected a folder Tessera can write" <<<"$output" ||
  fail "an unwritable --output: exit $code: $output"
sed 's/data: 8/data: 4/' "$scratch/small.yaml" >"$scratch/four.yaml"
output=$("$tessera" plan "$scratch/four.yaml" --objective samples-per-joule \
  --cluster "$(dirname "$0")/../data/clusters/two_pcie_nodes.yaml" 2>&1)
code=$?
[ "$code" -eq 2 ] && grep -q -- "--objective: samples-per-joule needs the GPU's power" <<<"$output" ||
  fail "a cluster without gpu.power: exit $code: $output"

[ "$failures" -eq 0 ] && echo "plan command: all checks passed"
exit $((failures > 0))
