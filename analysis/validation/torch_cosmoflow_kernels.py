#!/usr/bin/python3
"""Time the MLPerf HPC v0.7 CosmoFlow network's convolutions and whole training step in PyTorch
on a GPU, as a second opinion on `tessera profile`'s rows of the same kernels.

    torch_cosmoflow_kernels.py [--batches 1,2] [--repeats 20] [--output FILE.csv]
                               [--profile-output PROFILE.csv]
    torch_cosmoflow_kernels.py --rows FILE.csv --device NAME --profile-output PROFILE.csv

The network is scenarios/models/mlperf_cosmoflow.yaml's (2^3 kernels, padding 0, ceil-mode max
pools, leaky ReLU 0.3, three dense layers, dropout 0.5, MSE, SGD with momentum). Float32 with
TF32 off, as the v0.7 submissions trained. cuDNN's benchmark mode is on, so PyTorch picks the
fastest engine cuDNN 9 offers it (through cuDNN's graph API), where `tessera profile` times each
algorithm of cuDNN's legacy enumeration. Each convolution direction is timed apart
(aten.convolution_backward with one output asked for), in the channels-first (NCDHW) and the
channels-last (NDHWC) layout; then the whole step (forward, backward, update) in each layout.
Times are medians of --repeats runs by CUDA events, after warm-up, on random data.

Prints a table; with --output writes one CSV row per timing. --profile-output writes the
convolution timings as a `tessera-profile/1` file, one algorithm per layout
(`torch_benchmark_NCDHW`, `torch_benchmark_NDHWC`; workspace unknown, written as 0), which
scale_profile.py takes beside `tessera profile`'s rows; --rows does that from an earlier
--output file, on any machine, --device naming the GPU it was measured on.
Exit codes: 0 ok, 1 no GPU, 2 bad input.
"""

import argparse
import csv
import statistics
import sys

try:
    import torch
except ImportError:  # --rows converts an earlier measurement without PyTorch
    torch = None

# Its sibling in this folder, found as when run (the script's folder is on the path).
from scale_profile import HEADER as PROFILE_HEADER
from scale_profile import write_profile as write_profile_rows

CHANNELS = [4, 32, 64, 128, 256, 512]
SIDE = 128


def median_ms(function, repeats):
    for _ in range(3):
        function()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        function()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def layout(tensor, channels_last):
    return tensor.contiguous(memory_format=torch.channels_last_3d) if channels_last else tensor


def convolution_rows(batch, channels_last, repeats):
    rows = []
    side = SIDE
    for index in range(5):
        c_in, c_out = CHANNELS[index], CHANNELS[index + 1]
        x = layout(torch.randn(batch, c_in, side, side, side, device="cuda"), channels_last)
        w = layout(torch.randn(c_out, c_in, 2, 2, 2, device="cuda") * 0.1, channels_last)
        b = torch.randn(c_out, device="cuda")
        y = torch.nn.functional.conv3d(x, w, b)
        dy = layout(torch.randn_like(y), channels_last)
        conv_args = ([1, 1, 1], [0, 0, 0], [1, 1, 1], False, [0, 0, 0], 1)
        flops = 2 * batch * c_out * y.shape[2] ** 3 * c_in * 8
        timings = {
            "forward": lambda: torch.nn.functional.conv3d(x, w, b),
            "backward_data": lambda: torch.ops.aten.convolution_backward(
                dy, x, w, [c_out], *conv_args, [True, False, False]),
            "backward_filter": lambda: torch.ops.aten.convolution_backward(
                dy, x, w, [c_out], *conv_args, [False, True, True]),
        }
        for direction, function in timings.items():
            ms = median_ms(function, repeats)
            rows.append({"what": f"conv{index + 1}", "direction": direction, "batch": batch,
                         "layout": "NDHWC" if channels_last else "NCDHW", "ms": ms,
                         "tflops": flops / (ms * 1e-3) / 1e12})
        side = (side - 1 + 1) // 2  # a 2^3 valid convolution, then a ceil-mode pool of 2
    return rows


def network():
    layers = []
    for index in range(5):
        layers += [torch.nn.Conv3d(CHANNELS[index], CHANNELS[index + 1], 2),
                   torch.nn.LeakyReLU(0.3), torch.nn.MaxPool3d(2, ceil_mode=True)]
    layers += [torch.nn.Flatten(), torch.nn.Linear(512 * 4 ** 3, 128), torch.nn.LeakyReLU(0.3),
               torch.nn.Dropout(0.5), torch.nn.Linear(128, 64), torch.nn.LeakyReLU(0.3),
               torch.nn.Dropout(0.5), torch.nn.Linear(64, 4)]
    return torch.nn.Sequential(*layers)


def step_row(batch, channels_last, repeats):
    model = network().cuda()
    if channels_last:
        model = model.to(memory_format=torch.channels_last_3d)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = layout(torch.randn(batch, 4, SIDE, SIDE, SIDE, device="cuda"), channels_last)
    target = torch.randn(batch, 4, device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()

    ms = median_ms(step, repeats)
    parameters = sum(p.numel() for p in model.parameters())
    return {"what": f"step ({parameters} parameters)", "direction": "all", "batch": batch,
            "layout": "NDHWC" if channels_last else "NCDHW", "ms": ms, "tflops": float("nan")}


def convolution_shape(index):
    """Tessera's shape key of convolution conv<index + 1> (profile_database.hpp)."""
    side = SIDE >> index
    c_in, c_out = CHANNELS[index], CHANNELS[index + 1]
    return (f"conv k2x2x2 s1x1x1 p0x0x0 d1x1x1 g1 bias in {c_in}x{side}x{side}x{side} "
            f"out {c_out}x{side - 1}x{side - 1}x{side - 1}")


def write_profile(path, rows, device):
    comments = ["# tessera-profile/1", f"# device: {device}",
                "# written by analysis/validation/torch_cosmoflow_kernels.py: PyTorch's cuDNN "
                "benchmark mode, float32 without TF32; workspace not known (0)"]
    profile_rows = [{"device": device, "op": "conv", "direction": row["direction"],
                     "shape": convolution_shape(int(row["what"][4:]) - 1), "dtype": "float32",
                     "micro_batch": row["batch"], "algorithm": f"torch_benchmark_{row['layout']}",
                     "time_s": float(row["ms"]) * 1e-3, "workspace_bytes": 0, "ok": "true"}
                    for row in rows if row["what"].startswith("conv")]
    write_profile_rows(path, comments, profile_rows)


def read_rows(path):
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}")
    expected = {"what", "direction", "batch", "layout", "ms"}
    if not rows or not expected <= set(rows[0]):
        raise ValueError(f"{path}: expected the columns {sorted(expected)} of --output")
    for number, row in enumerate(rows, start=2):
        try:
            float(row["ms"])
            int(row["batch"])
        except ValueError:
            raise ValueError(f"{path}: line {number}: ms or batch is not a number")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", default="1,2")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--output")
    parser.add_argument("--profile-output")
    parser.add_argument("--rows", help="an earlier --output file: convert it, measure nothing")
    parser.add_argument("--device", help="with --rows: the GPU it was measured on")
    args = parser.parse_args(argv)
    if args.rows:
        if not args.device or not args.profile_output:
            print("error: --rows needs --device and --profile-output", file=sys.stderr)
            return 2
        try:
            write_profile(args.profile_output, read_rows(args.rows), args.device)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    if torch is None or not torch.cuda.is_available():
        print("error: no CUDA GPU", file=sys.stderr)
        return 1
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for batch in (int(b) for b in args.batches.split(",")):
        for channels_last in (False, True):
            rows += convolution_rows(batch, channels_last, args.repeats)
            rows.append(step_row(batch, channels_last, args.repeats))
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    for row in rows:
        print(f"{row['what']:<28} {row['direction']:<16} batch {row['batch']} {row['layout']}  "
              f"{row['ms']:9.3f} ms  {row['tflops']:6.2f} TFLOP/s")
    if args.output:
        with open(args.output, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    if args.profile_output:
        write_profile(args.profile_output, rows, torch.cuda.get_device_name())
    return 0


if __name__ == "__main__":
    sys.exit(main())
