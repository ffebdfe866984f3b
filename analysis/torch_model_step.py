#!/usr/bin/python3
"""Cross-check one training step of a whole Tessera model against PyTorch on the same weights.

    torch_model_step.py CHECK_DIR [--tolerance T] [--kink-tolerance K] [--csv FILE]

CHECK_DIR is what `tessera model-check` wrote: case.json (the model as `tessera describe --json`
gives it, the loss, the files' shapes) and raw float32 files: the batch (input.f32,
targets.f32), every layer's weights before the step and their gradients (LAYER.weights.f32,
LAYER.gradients.f32), every ReLU's output (LAYER.output.f32). This builds the same model in PyTorch (analysis/torch_model.py), loads
Tessera's weights into it, takes the step's forward and backward in float64 as the reference
and in float32 as PyTorch's own result, and reports the relative error ||out - ref|| / ||ref||
of the loss and of every layer's gradient, Tessera's and PyTorch float32's. Writes the table to
--csv (default CHECK_DIR/model_step.csv).

A ReLU's derivative jumps at zero: where its float64 input lies within float32 rounding of zero,
Tessera's float32 input may fall on the other side, a correct float32 answer whose gradients
below differ from the reference's by far more than rounding (one such element of 32,768 put
ResNet-18's lower gradients 1e-3 off). There, within --kink-tolerance x the input's RMS of zero,
the float64 reference takes the side Tessera's output shows; the report counts those inputs.

A Tessera result fails when its error exceeds --tolerance (default 1e-4) or holds NaN.
Exit codes: 0 all within tolerance, 1 some result off (or a runtime failure), 2 bad input.
Needs PyTorch (Debian's python3-torch).
"""

import argparse
import csv
import math
import os
import sys

import numpy
import torch

from script_exit import BadInput, exit_status, read_json
from torch_crosscheck import relative_error
from torch_model import TesseraNet


def load_floats(folder, entry):
    path = os.path.join(folder, entry["file"])
    try:
        values = numpy.fromfile(path, dtype="<f4")
    except OSError as error:
        raise BadInput(f"{path}: cannot read: {error.strerror}") from error
    if values.size != math.prod(entry["shape"]):
        raise BadInput(f"{path}: {values.size} floats, shape {entry['shape']} needs "
                       f"{math.prod(entry['shape'])}")
    return torch.from_numpy(values.reshape(entry["shape"]).copy())


def targets_for(graph, targets):
    """The batch's targets as the model's first loss takes them."""
    for layer in graph["layers"]:
        if layer["op"] == "softmax_cross_entropy":
            logits = layer["input_shapes"][0]
            return targets.reshape(targets.shape[0], *logits["spatial"]).long()
        if layer["op"] == "mse_loss":
            shape = layer["input_shapes"][0]
            return targets.reshape(targets.shape[0], shape["channels"], *shape["spatial"])
    raise BadInput(f"model {graph['name']} has no loss")


def take_step(description, folder, dtype, kink_tolerance=None):
    """PyTorch's loss and each checked layer's gradient (flat, Tessera's order) on the case's
    weights and batch, and the ReLU inputs (per layer) taken on Tessera's side: with a
    kink_tolerance, where an input lies within it (x the input's RMS) of zero."""
    graph = description["model"]
    layers = {layer["name"]: layer for layer in graph["layers"]}
    try:
        net = TesseraNet(graph).to(dtype)
    except (KeyError, ValueError) as error:
        raise BadInput(f"{folder}/case.json: {error}") from error
    if kink_tolerance is not None:
        net.kink_tolerance = kink_tolerance
        for entry in description.get("kinks", []):
            if entry["layer"] not in layers:
                raise BadInput(f"{folder}/case.json: kinks of an unknown layer "
                               f"{entry['layer']!r}")
            net.kink_sides[entry["layer"]] = load_floats(folder, entry["output"]) > 0
    checked = []
    with torch.no_grad():
        for entry in description["parameters"]:
            if entry["layer"] not in layers:
                raise BadInput(f"{folder}/case.json: parameters of an unknown layer "
                               f"{entry['layer']!r}")
            layer = layers[entry["layer"]]
            try:
                parameters = net.tessera_parameters(layer)
            except ValueError as error:
                raise BadInput(f"{folder}/case.json: {error}") from error
            flat = load_floats(folder, entry["weights"]).to(dtype)
            if flat.numel() != sum(p.numel() for p in parameters):
                raise BadInput(f"{folder}/{entry['weights']['file']}: {flat.numel()} weights, "
                               f"PyTorch's {layer['op']} {layer['name']} has "
                               f"{sum(p.numel() for p in parameters)}")
            offset = 0
            for parameter in parameters:
                parameter.copy_(flat[offset:offset + parameter.numel()].reshape(parameter.shape))
                offset += parameter.numel()
            checked.append((entry, parameters))
    tensors = description["tensors"]
    inputs = load_floats(folder, tensors["input"]).to(dtype)
    targets = targets_for(graph, load_floats(folder, tensors["targets"]))
    net.train()  # batch-norm on the batch's statistics, as Tessera trains (no dropout: refused)
    loss = net(inputs, targets.to(dtype) if targets.is_floating_point() else targets)
    loss.backward()
    gradients = {}
    for entry, parameters in checked:
        gradients[entry["layer"]] = torch.cat([
            (p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
            for p in parameters])
    return loss.detach(), gradients, net.kinks_taken


def compare(folder, kink_tolerance):
    """The table's rows, and the reference's ReLU inputs taken on Tessera's side per layer."""
    description = read_json(os.path.join(folder, "case.json"))
    try:
        reference_loss, reference, taken = take_step(description, folder, torch.float64,
                                                     kink_tolerance)
        fp32_loss, fp32, _ = take_step(description, folder, torch.float32)
    except KeyError as error:
        raise BadInput(f"{folder}/case.json: no key {error}") from error
    rows = [{"result": "loss", "elements": 1,
             "tessera_error": relative_error(torch.tensor(description["loss"]), reference_loss),
             "torch_fp32_error": relative_error(fp32_loss, reference_loss)}]
    for entry in description["parameters"]:
        name = entry["layer"]
        tessera = load_floats(folder, entry["gradients"])
        rows.append({"result": f"{name} gradient", "elements": tessera.numel(),
                     "tessera_error": relative_error(tessera, reference[name]),
                     "torch_fp32_error": relative_error(fp32[name], reference[name])})
    return description, rows, {layer: count for layer, count in taken.items() if count}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("check_dir")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--kink-tolerance", type=float, default=1e-5,
                        help="reach, x the input's RMS, of a ReLU kink within which the "
                             "reference takes Tessera's side (default 1e-5; 0: never)")
    parser.add_argument("--csv", help="default: CHECK_DIR/model_step.csv")
    arguments = parser.parse_args()

    def body():
        if not arguments.kink_tolerance >= 0:
            raise BadInput(f"--kink-tolerance: expected a number >= 0, got "
                           f"{arguments.kink_tolerance}")
        description, rows, taken = compare(arguments.check_dir, arguments.kink_tolerance)
        out = arguments.csv or os.path.join(arguments.check_dir, "model_step.csv")
        with open(out, "w", newline="") as file:
            writer = csv.DictWriter(file, ["result", "elements", "tessera_error",
                                           "torch_fp32_error"])
            writer.writeheader()
            writer.writerows(rows)
        print(f"{description['model']['name']}: one step at a mini-batch of "
              f"{description['mini_batch']}, Tessera on {description['device']} against "
              f"PyTorch {torch.__version__} (float64 reference)")
        print(f"{'result':40} {'elements':>9} {'tessera err':>11} {'torch32 err':>11}")
        off = []
        for row in rows:
            print(f"{row['result']:40} {row['elements']:9d} {row['tessera_error']:11.2e} "
                  f"{row['torch_fp32_error']:11.2e}")
            if not row["tessera_error"] <= arguments.tolerance:  # NaN fails too
                off.append(row["result"])
        sides = ", ".join(f"{layer} {count}" for layer, count in taken.items()) or "none"
        print(f"ReLU inputs within {arguments.kink_tolerance:g} x RMS of zero where the "
              f"reference took Tessera's side, not its own: {sides}")
        print(f"{len(rows) - len(off)} passed, {len(off)} failed (tolerance "
              f"{arguments.tolerance:g}); table: {out}")
        if off:
            raise RuntimeError("off: " + ", ".join(off))

    return exit_status(body)


if __name__ == "__main__":
    sys.exit(main())
