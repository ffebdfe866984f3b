#!/usr/bin/env bash
# `tessera validate --profiles` and `--cluster` on good files, alone and with a scenario: good
# files exit 0; a scenario reports how many profile rows match its kernels, and lists the rows
# that match none as a warning (exit 0); a bad file among good ones exits 2.
# Usage: validate_profiles.sh TESSERA TEST_DATA_DIRECTORY PRESET_CLUSTER_DIRECTORY
set -u
tessera=$1
data=$2
presets=$3
scenario="$data/scenarios/good/profile_small_cnn.yaml"
profiles="$data/profiles/good"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
# Runs tessera validate with the arguments; sets code, out and err.
validate() {
  local stderr_file
  stderr_file=$(mktemp)
  out=$("$tessera" validate "$@" 2>"$stderr_file")
  code=$?
  err=$(cat "$stderr_file")
  rm -f "$stderr_file"
}

for file in "$presets"/*.yaml "$data"/clusters/*.yaml; do
  validate --cluster "$file"
  [ "$code" -eq 0 ] && [[ "$out" == "$file: ok (cluster "* ]] || fail "cluster $file: $code $out $err"
done

for file in "$profiles"/*.csv; do
  validate --profiles "$file"
  [ "$code" -eq 0 ] && [ -z "$err" ] && [[ "$out" == "$file: ok ("*" rows"* ]] ||
    fail "profile $file: $code $out $err"
  # Files without the lines were timed alone and do not say what their runs found in the caches.
  [[ "$out" == *"; micro-batches timed alone; caches unrecorded)" ]] ||
    fail "profile $file: timing or caches not said: $out"
done

# 8 of the 12 kernel rows are the scenario's; 4 match nothing and are listed; the copy is apart.
validate "$scenario" --profiles "$profiles/small_cnn_v100.csv"
[ "$code" -eq 0 ] || fail "scenario with profiles: exit $code: $err"
[[ "$out" == *"profiles: 8 of 12 kernel rows match its kernels on 'V100-SXM2-16GB'"* ]] ||
  fail "no match count: $out"
[[ "$out" == *"1 machine row not read"* ]] || fail "no transfer count: $out"
[[ "$err" == "warning: $scenario: no kernel of this scenario on 'V100-SXM2-16GB' matches 4 profile rows"* ]] ||
  fail "no warning: $err"
for line in 17 18 19 20; do
  [[ "$err" == *"small_cnn_v100.csv:$line: "* ]] || fail "unmatched row on line $line not listed: $err"
done

# Later files replace rows of earlier ones with the same key; more than ten unmatched rows are
# listed as ten and a count.
validate "$scenario" --profiles "$profiles/small_cnn_v100.csv" "$profiles/small_cnn_v100_more.csv" \
  "$profiles/other_model_v100.csv"
[ "$code" -eq 0 ] || fail "three profiles: exit $code: $err"
[[ "$out" == *"later files replace 1 row of earlier ones"* ]] || fail "no replacement note: $out"
[[ "$out" == *"profiles: 9 of 25 kernel rows match"* ]] || fail "three profiles count: $out"
[ "$(grep -c '^  .*\.csv:[0-9]*: ' <<<"$err")" -eq 10 ] || fail "not 10 rows listed: $err"
[[ "$err" == *"... and 6 more"* ]] || fail "no count of the rest: $err"

# Another cluster: its GPU is not the profile's device; nothing matches and the warning says why.
validate "$scenario" --profiles "$profiles/small_cnn_v100.csv" \
  --cluster "$data/clusters/two_pcie_nodes.yaml"
[ "$code" -eq 0 ] || fail "other cluster: exit $code: $err"
[[ "$out" == *"on two_pcie_nodes)"* ]] || fail "--cluster did not replace the platform: $out"
[[ "$out" == *"0 of 12 kernel rows match its kernels on 'test-gpu'"* ]] || fail "other GPU: $out"
[[ "$err" == *"the rows name device 'V100-SXM2-16GB', the cluster's gpu.model is 'test-gpu'"* ]] ||
  fail "no device hint: $err"

# The commands that simulate with --profiles warn as plainly when no row times a kernel: another
# device's rows, or rows whose algorithms all failed; a profile that times some kernels is quiet.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
simulate() {  # simulate COMMAND ARGS...: sets code and err
  "$tessera" "$@" >/dev/null 2>"$scratch/err"
  code=$?
  err=$(cat "$scratch/err")
}
simulate run "$scenario" --profiles "$profiles/small_cnn_v100.csv" --output "$scratch/run"
[ "$code" -eq 0 ] && [[ "$err" != *warning* ]] || fail "run with a matching profile: $code $err"
simulate run "$scenario" --profiles "$profiles/small_cnn_v100.csv" \
  --cluster "$data/clusters/two_pcie_nodes.yaml" --output "$scratch/other"
[ "$code" -eq 0 ] || fail "run with another device's profile: exit $code: $err"
[[ "$err" == "warning: $scenario: no row of the --profiles times a kernel of this scenario"*"the rows name device 'V100-SXM2-16GB', the cluster's gpu.model is 'test-gpu'"* ]] ||
  fail "run: no warning of another device's profile: $err"
simulate describe "$scenario" --profiles "$profiles/other_model_v100.csv"
[ "$code" -eq 0 ] || fail "describe with another model's profile: exit $code: $err"
[[ "$err" == *"the rows of 'V100-SXM2-16GB' hold other kernels, dtypes or micro-batches"* ]] ||
  fail "describe: no warning of another model's profile: $err"
sed 's/,true$/,false/' "$profiles/small_cnn_v100.csv" >"$scratch/failed.csv"
simulate run "$scenario" --profiles "$scratch/failed.csv" --output "$scratch/failed"
[[ "$err" == *"matching rows say ok=false"* ]] || fail "run: no warning of failed rows: $err"

# A bad file among good ones: exit 2, and no coverage from a partial set of profiles.
validate "$scenario" --profiles "$profiles/small_cnn_v100.csv" "$data/profiles/bad/time_nan.csv"
[ "$code" -eq 2 ] || fail "bad profile among good: exit $code"
[[ "$err" == "error: $data/profiles/bad/time_nan.csv:7:"* ]] || fail "bad profile error: $err"
[[ "$out" != *"kernel rows match"* ]] || fail "coverage from a partial set: $out"
validate "$scenario" --cluster "$data/clusters/bad/memory_nan.yaml"
[ "$code" -eq 2 ] && [[ "$err" == "error: $data/clusters/bad/memory_nan.yaml:"* ]] ||
  fail "bad cluster with a scenario: $code $err"

validate
[ "$code" -eq 2 ] || fail "validate without files: exit $code"
validate --profiles "$data/profiles/no_such_file.csv"
[ "$code" -eq 2 ] || fail "missing profile: exit $code"
validate --profiles "$data/profiles"
[ "$code" -eq 2 ] && [[ "$err" == *"is a directory"* ]] || fail "directory as profile: $code $err"

[ "$failures" -eq 0 ] && echo "validate --profiles and --cluster: ok"
exit "$failures"
