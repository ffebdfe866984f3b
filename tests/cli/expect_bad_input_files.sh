#!/usr/bin/env bash
# Every file of a corpus of malformed inputs must make `tessera validate` exit 2 with one line on
# stderr that starts with "error: <file>:<line>:", names the key the file's "expect-key:" comment
# gives and contains the fragment its "expect:" comment gives (required but for scenarios), and
# carries no raw library message. Comments: "# expect: ..." (YAML, CSV) or "<!-- expect: ... -->"
# (XML).
# Usage: expect_bad_input_files.sh TESSERA scenario|--profiles|--cluster|--model|--simgrid-xml
#                                  CORPUS_DIRECTORY MINIMUM_FILES
set -u
tessera=$1
mode=$2
corpus=$3
minimum=$4
case "$mode" in
  scenario) pattern="*.yaml"; flag=() ;;
  --profiles) pattern="*.csv"; flag=("$mode") ;;
  --cluster | --model) pattern="*.yaml"; flag=("$mode") ;;
  --simgrid-xml) pattern="*.xml"; flag=("$mode") ;;
  *) echo "usage: $0 TESSERA scenario|--profiles|--cluster|--model|--simgrid-xml CORPUS MINIMUM"
     exit 1 ;;
esac
comment() {  # the text of the first "NAME: text" comment of a file
  sed -n "s/^\(# \|.*<!-- \)$1: *//p" "$2" | sed 's/ *-->.*//' | head -n1
}
failures=0
count=0
fail() { echo "FAIL $file: $*"; failures=$((failures + 1)); }
for file in "$corpus"/$pattern; do
  count=$((count + 1))
  stderr=$("$tessera" validate "${flag[@]}" "$file" 2>&1 >/dev/null)
  code=$?
  fragment=$(comment expect "$file")
  key=$(comment expect-key "$file")
  if [ "$code" -ne 2 ]; then fail "exit code $code, expected 2 ($stderr)"; continue; fi
  if [ "$(printf '%s\n' "$stderr" | wc -l)" -ne 1 ]; then fail "more than one line: $stderr"; continue; fi
  case "$stderr" in
    "error: $file:"[0-9]*) ;;
    *) fail "error does not name file and line: $stderr"; continue ;;
  esac
  if [ -z "$fragment" ] && [ "$mode" != scenario ]; then fail "no 'expect:' comment"; continue; fi
  if [[ "$stderr" != *"$fragment"* ]]; then fail "error lacks '$fragment': $stderr"; continue; fi
  if [ -n "$key" ] && [[ "$stderr" != *": $key: "* ]]; then
    fail "error does not name key '$key': $stderr"; continue
  fi
  if [[ "$stderr" == *"yaml-cpp"* || "$stderr" == *"std::"* || "$stderr" == *"basic_string"* ]]; then
    fail "raw library message: $stderr"; continue
  fi
done
echo "$((count - failures)) passed, $failures failed"
[ "$count" -ge "$minimum" ] || { echo "corpus has $count files, expected at least $minimum"; exit 1; }
[ "$failures" -eq 0 ]
