#!/usr/bin/env bash
# Whether two tessera binaries simulate every shipped scenario (and the built-in default) to the
# same bytes: for a change that must not move a result (a refactor), build the tree before and
# after, then
#   tools/same_simulated_results.sh OLD_TESSERA NEW_TESSERA [SCRATCH_DIR]
# Runs `tessera run FILE --backend sim` with each binary and compares the sim.csv files. Prints
# one line per scenario; exits 1 when any differs or fails with one binary only, 0 otherwise.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 OLD_TESSERA NEW_TESSERA [SCRATCH_DIR]" >&2; exit 2; }
old=$(readlink -f "$1")
new=$(readlink -f "$2")
for binary in "$old" "$new"; do
  [ -x "$binary" ] || { echo "same_simulated_results.sh: $binary is not an executable" >&2; exit 2; }
done
scratch=${3:-$(mktemp -d)}
mkdir -p "$scratch"
differ=0
for scenario in default "$here"/scenarios/*.yaml; do
  name=$(basename "$scenario" .yaml)
  # Each binary from the scratch folder: results go where --output says, nothing lands elsewhere.
  (cd "$scratch" && "$old" run "$scenario" --backend sim --output "old/$name" --fresh >/dev/null 2>&1)
  old_exit=$?
  (cd "$scratch" && "$new" run "$scenario" --backend sim --output "new/$name" --fresh >/dev/null 2>&1)
  new_exit=$?
  if [ ! -f "$scratch/old/$name/sim.csv" ] && [ ! -f "$scratch/new/$name/sim.csv" ]; then
    echo "$name: no results from either (exit $old_exit / $new_exit)"
    [ "$old_exit" -eq "$new_exit" ] || differ=1
  elif cmp -s "$scratch/old/$name/sim.csv" "$scratch/new/$name/sim.csv"; then
    echo "$name: identical"
  else
    echo "$name: DIFFERS (exit $old_exit / $new_exit; $scratch/old/$name/sim.csv against new)"
    differ=1
  fi
done
exit "$differ"
