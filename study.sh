#!/usr/bin/env bash
# Sets up Tessera and runs the main job: a simulated scaling study on the built-in defaults
# (CosmoFlow-256, hybrid data + 4-way depth parallelism, weak scaling from 4 to 1,024 GPUs of a
# Lassen-like cluster). Writes results/<name>/sim.csv and sim.json, a Perfetto timeline of the
# largest point and the plots (PNG and SVG). Pass a scenario file to study another one; an
# interrupted study resumes where it stopped (add --fresh to start over).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# The main job needs the command alone: the tests and benchmarks are built by ./test.sh.
./setup.sh --unity --target tessera >&2
scenario=default
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  scenario=$1
  shift
fi
name=$(basename "$scenario" .yaml)
out="results/$name"
./build/app/tessera run "$scenario" --backend sim --output "$out" --trace "$out/trace.json" "$@"
/usr/bin/python3 analysis/plot_scaling.py "$out/sim.csv" --out "$out/plots"
echo "plots: $out/plots   timeline: $out/trace.json (open in ui.perfetto.dev)"
