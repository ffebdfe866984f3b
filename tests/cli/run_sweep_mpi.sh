#!/usr/bin/env bash
# `mpirun -np N tessera run FILE` (simulator) shares the sweep's points out over the ranks and
# rank 0 records them: with 2 and 4 ranks it prints the same table and writes the same sim.csv
# and trace as one process; run again, it keeps every point.
# Usage: run_sweep_mpi.sh TESSERA MPIEXEC
set -u
tessera=$1
mpiexec=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

cat >"$scratch/sweep.yaml" <<'YAML'
name: run-sweep-mpi
model: {zoo: cosmoflow, options: {width: 128}, mini_batch: 1}
parallelism: {data: 1, spatial: {grid: [2, 1, 1], until: pool4}}
platform: {preset: lassen}
sweep: {scaling: weak, gpus: [2, 4, 8, 16, 32]}
YAML
table() { grep -v 'results: \|^simulated timeline of point' "$1"; }

"$tessera" run "$scratch/sweep.yaml" --output "$scratch/one" --trace "$scratch/one/trace.json" \
  >"$scratch/one.out" 2>/dev/null || fail "one process: exit $?"
for ranks in 2 4; do
  out="$scratch/mpi$ranks"
  "$mpiexec" -np "$ranks" --oversubscribe "$tessera" run "$scratch/sweep.yaml" --output "$out" \
    --trace "$out/trace.json" >"$out.out" 2>"$out.err" || fail "$ranks ranks: exit $?: $(cat "$out.err")"
  diff <(table "$scratch/one.out") <(table "$out.out") || fail "$ranks ranks print another table"
  cmp -s "$scratch/one/sim.csv" "$out/sim.csv" || fail "$ranks ranks write another sim.csv"
  cmp -s "$scratch/one/trace.json" "$out/trace.json" || fail "$ranks ranks write another trace"
  again=$("$mpiexec" -np "$ranks" --oversubscribe "$tessera" run "$scratch/sweep.yaml" \
    --output "$out" 2>/dev/null | tail -1)
  grep -q '(kept 5 points)' <<<"$again" || fail "$ranks ranks did not resume: $again"
done
[ "$failures" -eq 0 ] && echo "run over MPI ranks: all checks passed"
exit $((failures > 0))
