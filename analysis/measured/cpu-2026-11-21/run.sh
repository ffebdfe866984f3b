#!/usr/bin/env bash
# Reproduces this folder: the mu-cuDNN micro-batching study on this machine's CPU (oneDNN, one
# thread), run from the repository root on a quiet machine:
#   analysis/measured/cpu-2026-11-21/run.sh [path/to/tessera]
# Each study runs twice: with the profiler's isolated timings (what `tessera profile` records)
# and with --in-context timings (each micro-batch size timed as a plan runs it). Profiles already
# in a study folder are reused; delete profile*.csv there to measure from scratch.
# oneDNN's reference implementations (ref:) are skipped: 100 to 300 times slower than the others,
# they would take most of the time budget.
set -eu
tessera=${1:-build/app/tessera}
here=analysis/measured/cpu-2026-11-21
export OMP_NUM_THREADS=1
common=(--skip-algorithms ref: --seconds-per-measurement 0.05)
# The 24 DeepBench problems cheapest to profile at every size 1..N (N = 4 to 16).
problems=0,8,12,31,34,37,39,40,42,43,44,46,48,49,51,52,62-68,73
for mode in isolated in-context; do
  flag=()
  [ "$mode" = in-context ] && flag=(--in-context)
  "$tessera" microbatch-study deepbench --problems "$problems" "${common[@]}" "${flag[@]}" \
    --output "$here/deepbench-$mode"
  for network in alexnet resnet18; do
    "$tessera" microbatch-study "scenarios/microbatching_$network.yaml" --mini-batch 8 \
      "${common[@]}" "${flag[@]}" --output "$here/$network-$mode"
  done
done
/usr/bin/python3 analysis/plot_microbatching.py "$here"/*-isolated "$here"/*-in-context
