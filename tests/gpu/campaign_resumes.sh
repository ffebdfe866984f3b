#!/usr/bin/env bash
# tools/gpu/campaign.sh with no step named resumes from its progress file: it runs the campaign's
# steps the file does not record as done, plus tests and racecheck every time, in the campaign's
# order; it keeps the other steps' rows and records the new outcomes. Run on this machine without
# a GPU, where tests fails (no GPU test passes) and racecheck fails (no compute-sanitizer or no
# GPU): their states must say so, and bench runs on the CPU alone.
# Usage: campaign_resumes.sh ARCHIVE NVIDIA_LIBRARY_DIR...
set -uo pipefail
archive=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

progress="$scratch/progress.tsv"
{
  printf 'step\tstate\tdevice\twhen\tnote\n'
  for step in tests memcheck racecheck validate vdnn onegpu profile microbatch; do
    printf '%s\tdone\tNVIDIA H200\t2026-11-27T00:00:00Z\tearlier call\n' "$step"
  done
} >"$progress"
library_options=()
for dir in "$@"; do library_options+=(--cuda-lib-dir "$dir"); done
output=$("$repo/tools/gpu/campaign.sh" --bundle "$archive" --work "$scratch/work" \
  --out "$scratch/out" --progress "$progress" --budget-s 120 --python /usr/bin/python3 \
  "${library_options[@]}" 2>&1)
echo "$output"

grep -q "steps left by $progress: tests racecheck bench$" <<<"$output" ||
  fail "expected the steps left to be 'tests racecheck bench'"
for step in versions tests racecheck bench; do
  grep -q "== \[$step\]" <<<"$output" || fail "step $step did not run"
done
for step in memcheck validate vdnn onegpu profile microbatch; do
  ! grep -q "== \[$step\]" <<<"$output" || fail "step $step ran although done"
done
returned="$scratch/out/progress.tsv"
[ -f "$returned" ] || { fail "no progress.tsv returned"; exit 1; }
state() { awk -F'\t' -v step="$1" '$1 == step { print $2 }' "$returned"; }
[ "$(state tests)" = failed ] || fail "tests: expected failed (no GPU here), got '$(state tests)'"
[ "$(state bench)" = done ] || fail "bench: expected done, got '$(state bench)'"
for step in memcheck validate vdnn onegpu profile microbatch; do
  [ "$(state "$step")" = done ] || fail "$step: the earlier row was not kept"
done
grep -q "Campaign steps not done yet (progress.tsv): tests" "$scratch/out/summary.txt" ||
  fail "the summary does not list the steps not done"
[ "$failures" -eq 0 ] && echo "campaign_resumes.sh: ok"
exit $((failures > 0))
