#!/usr/bin/env bash
# Sets up Tessera and runs the main job on the built-in defaults: the default scenario
# (CosmoFlow-256, hybrid data + 4-way depth parallelism, weak scaling on a Lassen-like cluster).
# Until the simulator backend lands this describes the study: per-layer shards, halos, FLOPs and
# per-GPU memory at every sweep point. Pass another scenario file to describe that one instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
./setup.sh >&2
./build/app/tessera describe "${1:-default}"
