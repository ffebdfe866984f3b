#!/usr/bin/env bash
# Every file in a bad-profile or bad-cluster corpus must make `tessera validate --profiles FILE`
# (or --cluster FILE) exit 2 with one line on stderr that starts with "error: <file>:<line>:", and
# contains the fragment the file's "# expect:" comment gives and the key its "# expect-key:"
# comment gives (both comments are allowed in either format).
# Usage: expect_bad_profiles_and_clusters.sh TESSERA --profiles|--cluster CORPUS_DIRECTORY
set -u
tessera=$1
flag=$2
corpus=$3
case "$flag" in
  --profiles) pattern="*.csv" ;;
  --cluster) pattern="*.yaml" ;;
  *) echo "usage: $0 TESSERA --profiles|--cluster CORPUS"; exit 1 ;;
esac
failures=0
count=0
fail() { echo "FAIL $file: $*"; failures=$((failures + 1)); }
for file in "$corpus"/$pattern; do
  count=$((count + 1))
  stderr=$("$tessera" validate "$flag" "$file" 2>&1 >/dev/null)
  code=$?
  fragment=$(sed -n 's/^# expect: *//p' "$file" | head -n1)
  key=$(sed -n 's/^# expect-key: *//p' "$file" | head -n1)
  if [ "$code" -ne 2 ]; then fail "exit code $code, expected 2 ($stderr)"; continue; fi
  if [ "$(printf '%s\n' "$stderr" | wc -l)" -ne 1 ]; then fail "more than one line: $stderr"; continue; fi
  case "$stderr" in
    "error: $file:"[0-9]*) ;;
    *) fail "error does not name file and line: $stderr"; continue ;;
  esac
  if [ -z "$fragment" ]; then fail "no '# expect:' comment"; continue; fi
  if [[ "$stderr" != *"$fragment"* ]]; then fail "error lacks '$fragment': $stderr"; continue; fi
  if [ -n "$key" ] && [[ "$stderr" != *": $key: "* ]]; then
    fail "error does not name key '$key': $stderr"; continue
  fi
  if [[ "$stderr" == *"yaml-cpp"* || "$stderr" == *"std::"* || "$stderr" == *"basic_string"* ]]; then
    fail "raw library message: $stderr"; continue
  fi
done
echo "$((count - failures)) passed, $failures failed"
[ "$count" -ge 20 ] || { echo "corpus has $count files, expected at least 20"; exit 1; }
[ "$failures" -eq 0 ]
