#!/usr/bin/env bash
# `tessera run --points`: only the points named run, a later selection keeps their rows beside its
# own (even with --fresh), and an index out of range exits 2 naming --points; a --trace-point out
# of range or outside --points exits 2 naming it; a traced point kept from an earlier run still gets
# its simulated timeline.
# Usage: run_points.sh TESSERA SCENARIO (a scenario of at least 4 points)
set -u
tessera=$1
scenario=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
rows() { tail -n +2 "$scratch/sim.csv" | cut -d, -f2 | paste -sd' '; }

"$tessera" run "$scenario" --points 0,2 --output "$scratch" >/dev/null 2>&1 || fail "--points 0,2: exit $?"
[ "$(rows)" = "0 2" ] || fail "--points 0,2 wrote points $(rows)"
"$tessera" run "$scenario" --points 3 --fresh --output "$scratch" >"$scratch/out" 2>&1 ||
  fail "--points 3: exit $?"
[ "$(rows)" = "0 2 3" ] || fail "--points 3 after 0,2 left points $(rows)"
grep -q "kept 2 points; 1 point not selected (--points)" "$scratch/out" ||
  fail "no summary of the kept and left-out points: $(tail -1 "$scratch/out")"
"$tessera" run "$scenario" --points 99 --output "$scratch" >"$scratch/bad" 2>&1
status=$?
[ "$status" -eq 2 ] || fail "--points 99 exited $status, not 2"
grep -q -- "--points: a sweep point index below" "$scratch/bad" || fail "no --points error: $(cat "$scratch/bad")"
# An index as written: not negative (once read as 18446744073709551615), not octal ("010" was 8).
for index in -1 010 0x1; do
  "$tessera" run "$scenario" --points "$index" --output "$scratch" >"$scratch/bad" 2>&1
  status=$?
  [ "$status" -eq 2 ] || fail "--points $index exited $status, not 2"
  grep -q -- "expected a sweep point index (0, 1, 2, ...), got '$index'" "$scratch/bad" ||
    fail "--points $index: $(cat "$scratch/bad")"
done
# A kept point is not simulated again for its row, but --trace asks for its timeline.
"$tessera" run "$scenario" --points 2 --output "$scratch" --trace "$scratch/kept.json" \
  >"$scratch/out" 2>&1 || fail "--points 2 --trace: exit $?"
grep -q "(kept 3 points" "$scratch/out" || fail "points 0, 2 and 3 were not kept: $(tail -2 "$scratch/out")"
grep -q "simulated timeline of point 2: $scratch/kept.json" "$scratch/out" ||
  fail "no timeline reported: $(tail -2 "$scratch/out")"
grep -q '"traceEvents"' "$scratch/kept.json" 2>/dev/null || fail "no timeline of the kept point"
# --trace-point out of range, or left out by --points (nothing would be traced): exit 2 naming it,
# on either backend, before anything runs.
for backend in sim real; do
  for args in "--trace-point 99" "--points 0,2 --trace-point 1"; do
    # shellcheck disable=SC2086
    "$tessera" run "$scenario" --backend "$backend" $args --trace "$scratch/t.json" \
      --output "$scratch/trace" >"$scratch/bad" 2>&1
    status=$?
    [ "$status" -eq 2 ] || fail "$backend $args exited $status, not 2"
    grep -q -- "--trace-point: a" "$scratch/bad" || fail "$backend $args: $(cat "$scratch/bad")"
  done
done
"$tessera" run "$scenario" --trace-point 1 --output "$scratch/trace" >"$scratch/bad" 2>&1
status=$?
[ "$status" -eq 2 ] && grep -q -- "--trace-point: names the point --trace writes" "$scratch/bad" ||
  fail "--trace-point without --trace: exit $status: $(cat "$scratch/bad")"
[ -e "$scratch/trace" ] && fail "a bad --trace-point left an output directory"
# Where nothing can be written, the run stops before simulating: exit 2 naming the option.
for args in "--output $scratch/sim.csv/x" "--output $scratch/ok --trace $scratch/sim.csv/t.json"; do
  # shellcheck disable=SC2086
  "$tessera" run "$scenario" $args >"$scratch/bad" 2>&1
  status=$?
  [ "$status" -eq 2 ] || fail "$args exited $status, not 2"
  grep -q -- "expected a folder Tessera can write" "$scratch/bad" || fail "$args: $(cat "$scratch/bad")"
done
[ -e "$scratch/ok" ] && fail "a bad --trace left an output directory"
# A --trace naming a folder (or, with {point}, a point's file that is a folder) or nothing.
mkdir -p "$scratch/folder/t1.json"
for trace in "$scratch/folder" "$scratch/folder/t{point}.json" ""; do
  "$tessera" run "$scenario" --output "$scratch/ok" --trace "$trace" >"$scratch/bad" 2>&1
  status=$?
  [ "$status" -eq 2 ] || fail "--trace '$trace' exited $status, not 2"
  grep -q -- "--trace: expected" "$scratch/bad" || fail "--trace '$trace': $(cat "$scratch/bad")"
done
[ -e "$scratch/ok" ] && fail "a --trace naming a folder left an output directory"
# The scenario's own outputs.directory, unwritable: the error names the scenario's key.
{ cat "$scenario"; printf '\noutputs: {directory: %s}\n' "$scratch/sim.csv/results"; } \
  >"$scratch/unwritable.yaml"
for command in run plan; do
  "$tessera" "$command" "$scratch/unwritable.yaml" >"$scratch/bad" 2>&1
  status=$?
  [ "$status" -eq 2 ] && grep -q "^error: $scratch/unwritable.yaml:[0-9]*:[0-9]*: outputs.directory: expected a folder" "$scratch/bad" ||
    fail "$command, unwritable outputs.directory: exit $status: $(cat "$scratch/bad")"
done
[ "$failures" -eq 0 ] && echo "run --points: all checks passed"
exit $((failures > 0))
