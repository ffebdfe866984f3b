#!/usr/bin/env bash
# `tessera run --backend real` on malformed HDF5 data sets, under mpirun with 2 ranks: every one
# stops the run with exit 2 and an error naming the file (or directory) and the dataset; none is
# merely a failed point in a run that exits 0. The files are written with h5py.
# Usage: real_bad_data.sh TESSERA MPIEXEC PYTHON (Debian's, which has python3-h5py)
set -u
tessera=$1
mpiexec=$2
python=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# One sample file per case, CosmoFlow-16's layout (4 x 16^3 float32 `full`, 4 `unitPar`) but for
# the one thing each case breaks; U-Net cases use the `volume` + `segmentation` layout.
"$python" - "$scratch" <<'PY' || { echo "FAIL could not write the malformed files (h5py?)"; exit 1; }
import os, sys
import h5py
import numpy as np

root = sys.argv[1]
rng = np.random.default_rng(0)

def cosmoflow(case, full=None, unitpar=None, make=None):
    os.makedirs(os.path.join(root, case))
    for sample in range(2):
        with h5py.File(os.path.join(root, case, f"sample_{sample:06d}.h5"), "w") as f:
            if make:
                make(f)
                continue
            f["full"] = rng.random((4, 16, 16, 16), dtype=np.float32) if full is None else full
            f["unitPar"] = rng.random(4, dtype=np.float32) if unitpar is None else unitpar

os.makedirs(os.path.join(root, "empty"))
cosmoflow("full_is_group", make=lambda f: (f.create_group("full"),
                                           f.create_dataset("unitPar", data=np.zeros(4, "f4"))))
cosmoflow("wrong_rank", full=np.zeros((4, 16, 256), np.float32))
cosmoflow("wrong_dtype", full=np.zeros((4, 16, 16, 16), np.float64))
cosmoflow("wrong_channels", full=np.zeros((2, 16, 16, 16), np.float32))
cosmoflow("wrong_extent", full=np.zeros((4, 8, 16, 16), np.float32))
cosmoflow("nan_volume", full=np.full((4, 16, 16, 16), np.nan, np.float32))
cosmoflow("inf_target", unitpar=np.array([0, np.inf, 0, 0], np.float32))
cosmoflow("missing_targets", make=lambda f: f.create_dataset(
    "full", data=np.zeros((4, 16, 16, 16), np.float32)))
cosmoflow("unwritten", make=lambda f: (
    f.create_dataset("full", shape=(4, 16, 16, 16), dtype="f4"),
    f.create_dataset("unitPar", data=np.zeros(4, "f4"))))
cosmoflow("absurd_size", make=lambda f: (
    f.create_dataset("full", shape=(4, 2**20, 2**20, 2**20), dtype="f4", chunks=(1, 1, 16, 16)),
    f.create_dataset("unitPar", data=np.zeros(4, "f4"))))
cosmoflow("full_is_scalar", full=np.float32(1))
cosmoflow("integer_volume", full=np.zeros((4, 16, 16, 16), np.int32))
cosmoflow("inf_volume", full=np.full((4, 16, 16, 16), np.inf, np.float32))
cosmoflow("three_targets", unitpar=np.zeros(3, np.float32))
cosmoflow("targets_2d", unitpar=np.zeros((2, 2), np.float32))
for case, content in (("not_hdf5", b"this is not an HDF5 file\n"), ("truncated", None)):
    os.makedirs(os.path.join(root, case))
    for sample in range(2):
        path = os.path.join(root, case, f"sample_{sample:06d}.h5")
        if content is None:
            with h5py.File(path, "w") as f:
                f["full"] = rng.random((4, 16, 16, 16), dtype=np.float32)
                f["unitPar"] = rng.random(4, dtype=np.float32)
            data = open(path, "rb").read()
            content_of_file = data[: len(data) // 2]
        else:
            content_of_file = content
        open(path, "wb").write(content_of_file)

def unet(case, volume=None, labels=None, make=None):
    os.makedirs(os.path.join(root, case))
    for sample in range(2):
        with h5py.File(os.path.join(root, case, f"sample_{sample:06d}.h5"), "w") as f:
            if make:
                make(f)
                continue
            f["volume"] = rng.random((1, 16, 16, 16), dtype=np.float32) if volume is None else volume
            f["segmentation"] = np.zeros((1, 16, 16, 16), np.int32) if labels is None else labels

too_large = np.zeros((1, 16, 16, 16), np.int32)
too_large[0, 15, 15, 15] = 7
negative = np.zeros((1, 16, 16, 16), np.int32)
negative[0, 0, 0, 0] = -1
unet("bad_label", labels=too_large)
unet("negative_label", labels=negative)
unet("labels_wrong_extent", labels=np.zeros((1, 8, 16, 16), np.int32))
unet("missing_segmentation", make=lambda f: f.create_dataset(
    "volume", data=np.zeros((1, 16, 16, 16), np.float32)))
PY

scenario() {  # scenario CASE [unet]
  local model="{zoo: cosmoflow, options: {width: 16}, mini_batch: 2, optimizer: sgd}"
  [ "${2:-}" = unet ] && model="{zoo: unet3d, options: {width: 16, classes: 3}, mini_batch: 1}"
  cat >"$scratch/$1.yaml" <<YAML
name: bad-data-$1
model: $model
parallelism: {spatial: {grid: [2, 1, 1]}}
io: {format: hdf5, dataset: $scratch/$1}
platform: {preset: lassen}
real: {warmup_steps: 1, measured_steps: 1}
YAML
}

expect_bad() {  # expect_bad CASE EXPECTED-TEXT [unet]
  scenario "$1" "${3:-}"
  output=$("$mpiexec" -np 2 --oversubscribe "$tessera" run "$scratch/$1.yaml" --backend real \
    --output "$scratch/out-$1" 2>&1)
  code=$?
  if [ "$code" -ne 2 ]; then
    fail "$1: exit $code, expected 2: $output"
  elif [[ "$output" != *"error: $scratch/$1"*"$2"* ]]; then
    fail "$1: expected 'error: $scratch/$1...$2', got: $output"
  fi
}

expect_bad empty "no sample files"
expect_bad full_is_group "full"
expect_bad wrong_rank "full: expected rank 4"
expect_bad wrong_dtype "full: expected float32 or int16 values, got 8-byte float"
expect_bad wrong_channels "io.dataset: expected samples of"
expect_bad wrong_extent "io.dataset: expected samples of"
expect_bad nan_volume "full: expected finite values, got nan"
expect_bad inf_target "unitPar: expected finite targets, got inf"
expect_bad missing_targets "unitPar: dataset is missing"
expect_bad unwritten "but none are written"
expect_bad absurd_size "declares more than the 1 TiB per sample"
expect_bad full_is_scalar "full: expected rank 4"
expect_bad integer_volume "full: expected float32 or int16 values"
expect_bad inf_volume "full: expected finite values, got inf"
expect_bad three_targets "unitPar: expected 4 targets, got 3"
expect_bad targets_2d "unitPar: expected rank 1 (targets), got rank 2"
expect_bad not_hdf5 "not an HDF5 file"
expect_bad truncated "cannot open the HDF5 file: truncated file"
expect_bad bad_label "segmentation: expected class labels 0..2, got 7" unet
expect_bad negative_label "segmentation: expected class labels 0..2, got -1" unet
expect_bad labels_wrong_extent "segmentation: expected a class per voxel of the volume" unet
expect_bad missing_segmentation "segmentation: dataset is missing" unet

cases=$(grep -c '^expect_bad ' "${BASH_SOURCE[0]}")
[ "$cases" -ge 20 ] || { echo "FAIL only $cases malformed data sets, expected at least 20"; exit 1; }
[ "$failures" -eq 0 ] && echo "all $cases malformed data sets stopped the run with exit 2"
exit "$failures"
