#!/usr/bin/env bash
# Pal et al. 2019 reproduced end to end: build tessera, simulate scenarios/pal_*.yaml and their
# hybrid variants on the DGX-1 preset, sweep B_noise, write the tables and the plot
# (results/pal-study/{table,summary}.{csv,md}, pal_study.png). About 5 minutes on 2 cores.
#   analysis/pal_study.sh [pal_study.py options]      (from anywhere; results under the repository)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -x build/app/tessera ]; then
  ./setup.sh --no-install --build-dir build >&2
fi
cmake --build build -j2 --target tessera >&2
/usr/bin/python3 analysis/pal_study.py --tessera build/app/tessera --output results/pal-study "$@"
