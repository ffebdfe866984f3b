#!/usr/bin/python3
"""Parameters and multiply-adds of the CosmoFlow network the MLPerf HPC v0.7 submissions trained.

    mlperf_cosmoflow_params.py [--torch] [--forward]

Why: an independent count to hold Tessera's model file (scenarios/models/mlperf_cosmoflow.yaml)
against, and a measure of what Tessera's symmetric padding changes.

The network (mlcommons/hpc_results_v0.7 at 3edadef,
LBNL/benchmarks/cosmoflow/implementations/tf-cosmoflow-benchmark/models/cosmoflow.py, build_model,
with the options of configs/cosmo_runs_gpu.yaml; every v0.7 GPU submission's config sets the same
model options and none sets kernel_size, so its default 2 holds):
  input 4 x 128^3 (channels first here; the reference is channels last, 128^3 x 4)
  5 x [Conv3D(filters 32, 64, 128, 256, 512; kernel 2^3; stride 1; padding 'same'; bias)
       -> LeakyReLU (Keras default alpha 0.3) -> MaxPool3D(2)]
  Flatten (4^3 x 512 = 32768)
  Dense 128 -> LeakyReLU -> Dropout(0.5) -> Dense 64 -> LeakyReLU -> Dropout(0.5)
  Dense 4, tanh, then x1.2 (a Lambda, no parameters)

TensorFlow's 'same' padding with an even kernel pads 0 before and 1 after each axis, so a
convolution keeps the volume (128 -> 128). Tessera's `padding` is symmetric; the count below also
gives the multiply-adds of the two symmetric stand-ins: padding 1 (the volume grows by one,
then the floor max-pool drops it: 129 -> 64) and padding 0 with a ceil-mode pool (127 -> 64).
Both end at 4^3 x 512, so their parameters equal the reference's.

The count is done by formula in plain Python (conv: k^3 * C_in * C_out + C_out; dense: in * out +
out). With --torch (when PyTorch is installed) the same network is built in torch (an explicit
F.pad(0, 1) on every axis reproduces 'same') and its parameters are counted by torch as well;
--forward also runs one zero sample through it to check the output shape (about 1 GiB of memory).
Debian's python3 often lacks torch: then only the formula runs, and it says so.

Exit codes: 0 ok, 1 the torch count disagrees with the formula, 2 --torch without torch.
"""

import argparse
import sys

INPUT = (4, 128, 128, 128)  # C, D, H, W
KERNEL = 2
FILTERS = [32, 64, 128, 256, 512]
DENSE = [128, 64, 4]
LEAKY_SLOPE = 0.3
DROPOUT = 0.5


def layers(padding_mode="same"):
    """[(name, kind, output shape, parameters, multiply-adds per sample)]; padding_mode: 'same'
    (TensorFlow), 'pad1' (symmetric 1, floor pool) or 'pad0_ceil' (no padding, ceil pool)."""
    rows = []
    channels, edge = INPUT[0], INPUT[1]
    for index, filters in enumerate(FILTERS, start=1):
        if padding_mode == "same":
            out_edge = edge
        elif padding_mode == "pad1":
            out_edge = edge + 2 * 1 - KERNEL + 1
        elif padding_mode == "pad0_ceil":
            out_edge = edge - KERNEL + 1
        else:
            raise ValueError(padding_mode)
        params = KERNEL ** 3 * channels * filters + filters
        macs = out_edge ** 3 * KERNEL ** 3 * channels * filters
        rows.append((f"conv{index}", "conv3d", (filters, out_edge, out_edge, out_edge), params, macs))
        rows.append((f"act{index}", "leaky_relu", (filters,) + (out_edge,) * 3, 0, 0))
        pooled = -(-out_edge // 2) if padding_mode == "pad0_ceil" else out_edge // 2
        rows.append((f"pool{index}", "max_pool 2", (filters,) + (pooled,) * 3, 0, 0))
        channels, edge = filters, pooled
    features = channels * edge ** 3
    for index, width in enumerate(DENSE, start=1):
        params = features * width + width
        rows.append((f"fc{index}", "dense", (width,), params, features * width))
        if index < len(DENSE):
            rows.append((f"fc{index}_act", "leaky_relu", (width,), 0, 0))
            rows.append((f"drop{index}", f"dropout {DROPOUT}", (width,), 0, 0))
        features = width
    rows.append(("output", "tanh x 1.2", (DENSE[-1],), 0, 0))
    return rows


def torch_count(forward):
    import torch  # noqa: F401 (import inside: optional)
    from torch import nn
    import torch.nn.functional as F

    class SamePad(nn.Module):
        def forward(self, x):
            return F.pad(x, (0, 1, 0, 1, 0, 1))  # W, H, D: 0 before, 1 after (TF 'same', k=2)

    class Scale(nn.Module):
        def forward(self, x):
            return torch.tanh(x) * 1.2

    modules, channels = [], INPUT[0]
    for filters in FILTERS:
        modules += [SamePad(), nn.Conv3d(channels, filters, KERNEL),
                    nn.LeakyReLU(LEAKY_SLOPE), nn.MaxPool3d(2)]
        channels = filters
    modules.append(nn.Flatten())
    features = channels * 4 ** 3
    for index, width in enumerate(DENSE):
        modules.append(nn.Linear(features, width))
        if index < len(DENSE) - 1:
            modules += [nn.LeakyReLU(LEAKY_SLOPE), nn.Dropout(DROPOUT)]
        features = width
    modules.append(Scale())
    network = nn.Sequential(*modules)
    count = sum(p.numel() for p in network.parameters())
    shape = None
    if forward:
        with torch.no_grad():
            shape = tuple(network.eval()(torch.zeros(1, *INPUT)).shape)
    return count, shape


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--torch", action="store_true", help="also count with PyTorch")
    parser.add_argument("--forward", action="store_true", help="with --torch: run one sample")
    arguments = parser.parse_args(argv)

    rows = layers("same")
    print(f"{'layer':<10} {'kind':<12} {'output (C, D, H, W)':<24} {'parameters':>11} "
          f"{'MACs/sample':>15}")
    for name, kind, shape, params, macs in rows:
        print(f"{name:<10} {kind:<12} {str(shape):<24} {params:>11,} {macs:>15,}")
    total = sum(row[3] for row in rows)
    macs = sum(row[4] for row in rows)
    print(f"total parameters {total:,}; multiply-adds per sample (forward) {macs:,} "
          f"({2 * macs / 1e9:.2f} GFLOP)")
    for mode, what in (("pad1", "padding 1, floor pool"), ("pad0_ceil", "padding 0, ceil pool")):
        other = layers(mode)
        other_macs = sum(row[4] for row in other)
        assert sum(row[3] for row in other) == total
        print(f"symmetric stand-in ({what}): same parameters, multiply-adds "
              f"{other_macs:,} ({100 * (other_macs / macs - 1):+.1f}%)")

    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    if not have_torch:
        print("torch: not installed; the count above is the plain-Python formula only")
        return 2 if arguments.torch else 0
    count, shape = torch_count(arguments.forward)
    print(f"torch: {count:,} parameters" + (f", output shape {shape}" if shape else ""))
    if count != total or (shape is not None and shape != (1, DENSE[-1])):
        print("torch and the formula disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
