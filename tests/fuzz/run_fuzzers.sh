#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR (tests/*_fuzz) for SECONDS each, from a fresh
# copy of its seeds (tests/fuzz/corpus/<target without _fuzz>/ and the test data of its format,
# tests/fuzz/README.md), so CI never grows the checked-in corpora.
# As many run at once as the machine has cores. Fails when a target finds a crash, a leak or an
# unexpected exception, printing the end of its log.
# Usage: run_fuzzers.sh BUILD_DIR SECONDS
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build_dir=$1
seconds=$2
shopt -s nullglob
fuzzers=("$build_dir"/tests/*_fuzz)
[ ${#fuzzers[@]} -gt 0 ] || { echo "run_fuzzers.sh: no *_fuzz binary in $build_dir/tests" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for fuzzer in "${fuzzers[@]}"; do
  name=$(basename "$fuzzer")
  corpus="$scratch/$name"
  mkdir -p "$corpus"
  seeds="tests/fuzz/corpus/${name%_fuzz}"
  [ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
  case "$name" in
    scenario_loader_fuzz) extra=(scenarios/*.yaml tests/data/scenarios/*/*.yaml) ;;
    profile_database_fuzz) extra=(tests/data/profiles/*/*.csv) ;;
    cluster_file_fuzz) extra=(scenarios/clusters/*.yaml tests/data/clusters/*.yaml
                              tests/data/clusters/*/*.yaml) ;;
    model_file_fuzz) extra=(scenarios/models/*.yaml tests/data/models/*.yaml
                            tests/data/models/*/*.yaml) ;;
    simgrid_platform_fuzz) extra=(tests/data/platforms/*.xml tests/data/platforms/bad/*.xml) ;;
    *) extra=() ;;
  esac
  # Seeds of one name in two folders are different files: number them apart.
  for seed in "${extra[@]}"; do cp "$seed" "$corpus/$(echo "$seed" | tr '/' '_')"; done
  echo "-- $name: $(find "$corpus" -type f | wc -l) seed(s), ${seconds} s"
  # libFuzzer's own -timeout once hung in its report on an input yaml-cpp looped on (its process
  # stopped, a thread spinning): a fuzzer still running two minutes past its time is killed.
  {
    status=0
    timeout -s KILL $((seconds + 120)) "$fuzzer" "$corpus" -max_total_time="$seconds" \
      -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      >"$scratch/$name.log" 2>&1 || status=$?
    echo "$status" >"$scratch/$name.status"
  } &
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
done
wait
failed=0
for fuzzer in "${fuzzers[@]}"; do
  name=$(basename "$fuzzer")
  status=$(cat "$scratch/$name.status")
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$scratch/$name.log"
    [ "$status" -eq 137 ] && echo "run_fuzzers.sh: $name still ran $((seconds + 120)) s after starting" >&2
    echo "run_fuzzers.sh: $name failed (its log above)" >&2
    failed=1
    continue
  fi
  echo "-- $name: $(grep -E "^stat::(number_of_executed_units|new_units_added)" "$scratch/$name.log" | tr '\n' ' ')"
done
exit "$failed"
