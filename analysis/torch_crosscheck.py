#!/usr/bin/python3
"""Cross-check Tessera's layers against PyTorch on the same operands.

    torch_crosscheck.py CHECK_DIR [--device cpu|cuda] [--runs N] [--tolerance T] [--csv FILE]

CHECK_DIR is what `tessera layer-check` wrote: one folder per layer with case.json and the raw
float32 operands (x, w, dy) and Tessera's results (y, dx, dw; pooling y, dx; the transformers'
layers y, dx and each parameter's gradient). For each layer this runs the same convolution,
transposed convolution, pooling, GELU, LayerNorm (over the channels) or multi-head
self-attention (torch.nn.functional.multi_head_attention_forward) through PyTorch on the same
operands, in float64 as the reference and in float32 as PyTorch's own result, and reports per
result the relative error ||out - ref|| / ||ref|| of Tessera and of PyTorch float32, and per
direction the median time of both (Tessera's as it measured it; PyTorch's with CUDA events on a
GPU, a wall clock on the CPU, after a warm-up). PyTorch's float32 convolutions run without TF32,
as Tessera's (CUDNN_FMA_MATH). Writes the table to --csv (default CHECK_DIR/crosscheck.csv).

A Tessera result fails when its error exceeds --tolerance (default 1e-3: float32 arithmetic lands
far under it, and cuDNN's FFT and Winograd algorithms within it) or holds NaN.

Exit codes: 0 all within tolerance, 1 some result off (or a runtime failure), 2 bad input.
Needs PyTorch (Debian's python3-torch here; the GPU machine's python3 has it).
"""

import argparse
import csv
import json
import math
import os
import statistics
import sys
import time

import numpy
import torch

EXIT_OFF = 1
EXIT_BAD_INPUT = 2


def load_tensor(folder, description, name):
    entry = description["tensors"][name]
    values = numpy.fromfile(os.path.join(folder, entry["file"]), dtype="<f4")
    shape = entry["shape"]
    if values.size != math.prod(shape):
        raise ValueError(f"{folder}/{entry['file']}: {values.size} floats, shape {shape} needs "
                         f"{math.prod(shape)}")
    return torch.from_numpy(values.reshape(shape).copy())


def convolution_function(geometry, rank):
    """PyTorch's forward for the layer, taking (x, w) and computing y."""
    transposed = geometry["op"] == "transposed_convolution"
    if rank not in (1, 2, 3):
        raise ValueError(f"spatial rank {rank} is not 1, 2 or 3")
    if transposed:
        function = getattr(torch.nn.functional, f"conv_transpose{rank}d")
        return lambda x, w: function(x, w, stride=geometry["stride"], padding=geometry["padding"],
                                     groups=geometry["groups"], dilation=geometry["dilation"])
    function = getattr(torch.nn.functional, f"conv{rank}d")
    return lambda x, w: function(x, w, stride=geometry["stride"], padding=geometry["padding"],
                                 dilation=geometry["dilation"], groups=geometry["groups"])


def convolution_directions(geometry):
    """Each direction as a function of the operands, returning its result."""
    forward = lambda x, w: convolution_function(geometry, x.dim() - 2)(x, w)
    transposed = geometry["op"] == "transposed_convolution"

    def backward(mask):
        def run(x, w, dy):
            grads = torch.ops.aten.convolution_backward(
                dy, x, w, None, geometry["stride"], geometry["padding"], geometry["dilation"],
                transposed, [0] * (x.dim() - 2), geometry["groups"], mask)
            return grads[0] if mask[0] else grads[1]
        return run

    return [("forward", "y", lambda o: forward(o["x"], o["w"])),
            ("backward_data", "dx", lambda o: backward([True, False, False])(o["x"], o["w"], o["dy"])),
            ("backward_filter", "dw",
             lambda o: backward([False, True, False])(o["x"], o["w"], o["dy"]))]


def pooling_directions(geometry, x, dy):
    rank = x.dim() - 2
    kernel, stride, padding = geometry["kernel"], geometry["stride"], geometry["padding"]
    # Tessera gives the output extent; PyTorch reaches a larger one only with ceil_mode.
    floor_extent = [(x.shape[2 + axis] + 2 * padding[axis] - kernel[axis]) // stride[axis] + 1
                    for axis in range(rank)]
    ceil_mode = list(dy.shape[2:]) != floor_extent
    if geometry["mode"] == "max":
        function = getattr(torch.nn.functional, f"max_pool{rank}d")
        forward = lambda x: function(x, kernel, stride, padding, ceil_mode=ceil_mode)
    else:
        function = getattr(torch.nn.functional, f"avg_pool{rank}d")
        forward = lambda x: function(x, kernel, stride, padding, ceil_mode=ceil_mode,
                                     count_include_pad=False)

    def backward(o):
        x = o["x"].detach().requires_grad_(True)
        return torch.autograd.grad(forward(x), x, o["dy"])[0]

    return [("forward", "y", lambda o: forward(o["x"])),
            ("backward", "dx", backward)]


def sequence_forward(geometry, operands):
    """The transformer layer on N x C x T operands (PyTorch's functions take C last)."""
    x = operands["x"]
    op = geometry["op"]
    if op == "gelu":
        return torch.nn.functional.gelu(x, approximate=geometry["approximate"])
    if op == "layer_norm":
        normalised = torch.nn.functional.layer_norm(x.transpose(1, 2), (x.shape[1],),
                                                    operands["scale"], operands["shift"], 1e-5)
        return normalised.transpose(1, 2)
    steps = x.shape[2]
    sequence = x.permute(2, 0, 1)  # T x N x C, MultiheadAttention's layout
    mask = None
    if geometry["causal"]:
        mask = torch.ones(steps, steps, dtype=torch.bool, device=x.device).triu(1)
    out, _ = torch.nn.functional.multi_head_attention_forward(
        sequence, sequence, sequence, x.shape[1], geometry["heads"],
        operands["in_proj_weight"], operands["in_proj_bias"], None, None, False, 0.0,
        operands["out_proj_weight"], operands["out_proj_bias"], training=False,
        need_weights=False, attn_mask=mask)
    return out.permute(1, 2, 0)


def sequence_directions(geometry, operands):
    """forward's y; backward's dx and every parameter's gradient, by autograd."""
    parameters = [name for name in operands if name not in ("x", "dy")]

    def gradient(name):
        def run(o):
            leaves = {key: (value.detach().requires_grad_(True) if key != "dy" else value)
                      for key, value in o.items()}
            y = sequence_forward(geometry, leaves)
            return torch.autograd.grad(y, leaves[name], o["dy"])[0]
        return run

    directions = [("forward", "y", lambda o: sequence_forward(geometry, o)),
                  ("backward", "dx", gradient("x"))]
    return directions + [("backward", gradient_name(name), gradient(name)) for name in parameters]


def gradient_name(parameter):
    """Tessera's name for a parameter's gradient: dscale, d_in_proj_weight."""
    return ("d_" if "_" in parameter else "d") + parameter


def directions_of(geometry, operands):
    """(direction, result name, function of the operands) for every result Tessera wrote."""
    if geometry["op"] in ("convolution", "transposed_convolution"):
        return convolution_directions(geometry)
    if geometry["op"] == "pooling":
        return pooling_directions(geometry, operands["x"], operands["dy"])
    if geometry["op"] in ("gelu", "layer_norm", "self_attention"):
        return sequence_directions(geometry, operands)
    raise ValueError(f"unknown op {geometry['op']!r}")


def relative_error(result, reference):
    result = result.to(torch.float64)
    if torch.isnan(result).any():
        return math.nan
    norm = torch.linalg.vector_norm(reference).item()
    difference = torch.linalg.vector_norm(result - reference).item()
    return difference / norm if norm > 0 else difference


def median_seconds(function, device, runs):
    function()  # warm-up: algorithm choice, workspace, lazy loading
    seconds = []
    for _ in range(runs):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            function()
            end.record()
            end.synchronize()
            seconds.append(start.elapsed_time(end) / 1000)
        else:
            begin = time.perf_counter()
            function()
            seconds.append(time.perf_counter() - begin)
    return statistics.median(seconds)


def check_layer(folder, device, runs):
    with open(os.path.join(folder, "case.json")) as file:
        description = json.load(file)
    geometry = description["geometry"]
    operands = {name: load_tensor(folder, description, name) for name in description["operands"]}
    tessera = {name: load_tensor(folder, description, name) for name in description["results"]}
    tessera_times = {entry["direction"]: entry for entry in description["times"]}
    rows = []
    for dtype in (torch.float64, torch.float32):
        on_device = {name: tensor.to(device=device, dtype=dtype) for name, tensor in operands.items()}
        for direction, result_name, function in directions_of(geometry, on_device):
            result = function(on_device)
            if dtype == torch.float64:
                rows.append({"layer": description["layer"], "op": geometry["op"],
                             "direction": direction, "result": result_name,
                             "elements": result.numel(),
                             "tessera_error": relative_error(tessera[result_name].to(device),
                                                             result),
                             "reference": result})
                continue
            row = next(row for row in rows
                       if row["direction"] == direction and row["result"] == result_name)
            row["torch_fp32_error"] = relative_error(result, row.pop("reference"))
            row["tessera_seconds"] = tessera_times[direction]["median_seconds"]
            row["tessera_algorithm"] = tessera_times[direction]["algorithm"]
            row["torch_seconds"] = median_seconds(lambda: function(on_device), device, runs)
    return description, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("check_dir")
    parser.add_argument("--device", choices=("cpu", "cuda"),
                        help="default: cuda when PyTorch sees a GPU, else cpu")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per direction")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--csv", help="default: CHECK_DIR/crosscheck.csv")
    arguments = parser.parse_args()

    if not os.path.isdir(arguments.check_dir):
        print(f"error: {arguments.check_dir} is not a folder", file=sys.stderr)
        return EXIT_BAD_INPUT
    folders = sorted(entry.path for entry in os.scandir(arguments.check_dir)
                     if entry.is_dir() and os.path.exists(os.path.join(entry.path, "case.json")))
    if not folders:
        print(f"error: no layer folders with case.json in {arguments.check_dir}", file=sys.stderr)
        return EXIT_BAD_INPUT
    device = torch.device(arguments.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda":
        torch.backends.cudnn.allow_tf32 = False  # Tessera's convolutions use CUDNN_FMA_MATH

    rows, tessera_device = [], None
    for folder in folders:
        try:
            description, layer_rows = check_layer(folder, device, arguments.runs)
        except (KeyError, ValueError, OSError) as error:
            print(f"error: {folder}: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
        tessera_device = description["device"]
        rows.extend(layer_rows)

    columns = ["layer", "op", "direction", "result", "elements", "tessera_error",
               "torch_fp32_error", "tessera_seconds", "torch_seconds", "tessera_algorithm"]
    out = arguments.csv or os.path.join(arguments.check_dir, "crosscheck.csv")
    with open(out, "w", newline="") as file:
        writer = csv.DictWriter(file, columns)
        writer.writeheader()
        writer.writerows(rows)

    print(f"Tessera on {tessera_device} against PyTorch {torch.__version__} on {device} "
          f"(float64 reference)")
    print(f"{'layer':22} {'direction':16} {'result':18} {'tessera err':>11} {'torch32 err':>11} "
          f"{'tessera ms':>11} {'torch ms':>11}  algorithm")
    off = []
    for row in rows:
        print(f"{row['layer']:22} {row['direction']:16} {row['result']:18} "
              f"{row['tessera_error']:11.2e} "
              f"{row['torch_fp32_error']:11.2e} {row['tessera_seconds'] * 1e3:11.3f} "
              f"{row['torch_seconds'] * 1e3:11.3f}  {row['tessera_algorithm']}")
        if not row["tessera_error"] <= arguments.tolerance:  # NaN fails too
            off.append(f"{row['layer']} {row['direction']} ({row['result']})")
    print(f"{len(rows) - len(off)} passed, {len(off)} failed (tolerance {arguments.tolerance:g}); "
          f"table: {out}")
    if off:
        print("off: " + ", ".join(off), file=sys.stderr)
    return EXIT_OFF if off else 0


if __name__ == "__main__":
    sys.exit(main())
