#!/usr/bin/env bash
# Prints again the output of every test that failed in the last ctest run of BUILD_DIR, after
# ctest's own summary: a CI log keeps only its tail, and on the CUDA build that tail is the list
# of tests skipped without a GPU, which pushes the failure's own words out of sight.
# Usage: print_failures.sh BUILD_DIR
set -u
log_dir="$1/Testing/Temporary"
failed="$log_dir/LastTestsFailed.log"
# ctest leaves this file from an earlier failing run in place: call this only after a failure.
[ -s "$failed" ] || exit 0
while IFS=: read -r _ name; do
  echo "== output of failed test $name"
  # The block from the test's start line to its end time, as ctest logged it.
  awk -v name="$name" '
    { heading = $0; sub(/^[0-9]+\/[0-9]+ /, "", heading) }
    heading == "Testing: " name { printing = 1 }
    printing { print }
    printing && index($0, "\"" name "\" end time:") == 1 { exit }
  ' "$log_dir/LastTest.log" | tail -n 200
done <"$failed"
