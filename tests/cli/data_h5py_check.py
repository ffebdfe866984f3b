"""Files written by `tessera data generate` open in h5py with the CosmoFlow layout.

Usage: data_h5py_check.py TESSERA. Registered with CTest only where Debian's python3 has h5py.
"""
import math
import subprocess
import sys
import tempfile

import h5py
import numpy


def main():
    tessera = sys.argv[1]
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([tessera, "data", "generate", "--output", scratch, "--samples", "2",
                        "--width", "16", "--seed", "9"], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(f"{scratch}/sample_000001.h5", "r") as sample:
            volume = sample["full"][...]
            targets = sample["unitPar"][...]
            assert volume.shape == (4, 16, 16, 16), volume.shape
            assert volume.dtype == numpy.float32, volume.dtype
            assert targets.shape == (4,) and targets.dtype == numpy.float32, targets
            assert numpy.all(numpy.abs(targets) <= 1.0), targets
            # The documented relation: targets are projections of the volume on fixed patterns.
            axis = numpy.cos(2 * math.pi * numpy.arange(16) / 16)
            estimated = [volume.mean(),
                         2 * (volume * axis[None, :, None, None]).mean(),
                         2 * (volume * axis[None, None, :, None]).mean(),
                         2 * (volume * axis[None, None, None, :]).mean()]
            assert numpy.allclose(estimated, targets, atol=0.06), (estimated, targets)
            # A depth slab read by h5py equals the same slice of the whole volume.
            assert numpy.array_equal(sample["full"][:, 4:8, :, :], volume[:, 4:8, :, :])
    print("h5py reads the generated files")


if __name__ == "__main__":
    main()
