#!/usr/bin/env bash
# The real backend's training step against PyTorch's on this CPU, same model, batch, optimizer
# and threads (scenarios/bench_*_cpu.yaml): the median step of each and their ratio. PyTorch is
# timed as it comes and with glibc's malloc keeping freed memory (it otherwise returns large
# blocks to the kernel and faults them in again every step; Tessera allocates once): the ratio
# is against the faster. The target is Tessera within 1.25x of PyTorch.
#   analysis/bench_against_torch.sh [--threads T] [--repeats R]     (from the repository root)
# Needs a built tessera (build/app/tessera) and PyTorch (Debian's python3-torch).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
threads=1
repeats=3
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    *) echo "bench_against_torch.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "PyTorch does not import" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf "%-22s %6s %11s %11s %15s %7s\n" scenario repeat "tessera s" "pytorch s" \
  "pytorch kept s" ratio
for scenario in scenarios/bench_cosmoflow32_cpu.yaml scenarios/bench_resnet18_cpu.yaml; do
  build/app/tessera describe "$scenario" --json >"$scratch/model.json"
  for repeat in $(seq "$repeats"); do
    OMP_NUM_THREADS=$threads build/app/tessera run "$scenario" --backend real \
      --output "$scratch/out" --fresh >/dev/null 2>&1
    tessera=$(awk -F, 'NR == 2 { print $11 }' "$scratch/out/real.csv")
    pytorch=$(/usr/bin/python3 analysis/torch_step_benchmark.py "$scratch/model.json" \
      --threads "$threads" --warmup 3 --steps 20)
    kept=$(MALLOC_MMAP_THRESHOLD_=17179869184 MALLOC_TRIM_THRESHOLD_=17179869184 \
      /usr/bin/python3 analysis/torch_step_benchmark.py "$scratch/model.json" \
      --threads "$threads" --warmup 3 --steps 20)
    printf "%-22s %6s %11.4g %11.4g %15.4g %7.3f\n" "$(basename "$scenario" .yaml)" "$repeat" \
      "$tessera" "$pytorch" "$kept" \
      "$(awk -v a="$tessera" -v b="$pytorch" -v c="$kept" 'BEGIN { print a / (b < c ? b : c) }')"
  done
done
