#!/usr/bin/env bash
# Every file in the bad-scenario corpus must make `tessera validate` exit 2 with one line on stderr
# that starts with "error: <file>:<line>:" and names the key the file's "# expect-key:" comment gives.
set -u
tessera=$1
corpus=$2
failures=0
count=0
for file in "$corpus"/*.yaml; do
  count=$((count + 1))
  stderr=$("$tessera" validate "$file" 2>&1 >/dev/null)
  code=$?
  key=$(sed -n 's/^# expect-key: *//p' "$file" | head -n1)
  if [ "$code" -ne 2 ]; then
    echo "FAIL $file: exit code $code, expected 2 ($stderr)"; failures=$((failures + 1)); continue
  fi
  case "$stderr" in
    "error: $file:"[0-9]*) ;;
    *) echo "FAIL $file: error does not name file and line: $stderr"; failures=$((failures + 1)); continue ;;
  esac
  if [ -n "$key" ] && [[ "$stderr" != *"$key"* ]]; then
    echo "FAIL $file: error does not name key '$key': $stderr"; failures=$((failures + 1)); continue
  fi
  if [[ "$stderr" == *"yaml-cpp"* || "$stderr" == *"std::"* || "$stderr" == *"basic_string"* ]]; then
    echo "FAIL $file: raw library message: $stderr"; failures=$((failures + 1)); continue
  fi
done
echo "$((count - failures)) passed, $failures failed"
[ "$count" -ge 30 ] || { echo "corpus has $count files, expected at least 30"; exit 1; }
[ "$failures" -eq 0 ]
