#!/usr/bin/env bash
# Tessera against published MLPerf HPC throughputs: simulate every row of an extracted round
# (mlperf_extract.py's CSV) and compare, in one command. Builds nothing.
#   analysis/validation/run.sh [MEASURED.csv [OUTPUT_DIR [TESSERA]]] [-- compare.py options]
# Defaults: analysis/validation/mlperf_hpc_v0.7.csv, results/validation-mlperf-v0.7,
# build/app/tessera. Writes OUTPUT_DIR/comparison.{csv,md,png,svg}, the scenarios and each
# row's sim.csv/sim.json (method: docs/design/published-validation.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
positional=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do positional+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
measured="${positional[0]:-$here/mlperf_hpc_v0.7.csv}"
output="${positional[1]:-$repo/results/validation-mlperf-v0.7}"
tessera="${positional[2]:-$repo/build/app/tessera}"
exec /usr/bin/python3 "$here/compare.py" "$measured" --output "$output" --tessera "$tessera" "$@"
