#!/usr/bin/python3
"""Time a training step of a Tessera model in PyTorch on this CPU, the reference the real
backend's speed is judged against (the same layers, batch, optimizer and threads).

    tessera describe SCENARIO --json > model.json
    torch_step_benchmark.py model.json [--threads T] [--warmup W] [--steps N]
    torch_step_benchmark.py --check model.json [model.json ...]

Prints the median step in seconds over N measured steps after W warm-up steps (random inputs of
the model's shapes, targets of its loss's kind). The optimizer is the scenario's: Adam at 1e-3,
SGD at 1e-2 with momentum 0.9 or without. On a CPU PyTorch allocates its tensors every step
through glibc's malloc, which hands large blocks back to the kernel and faults them in again;
Tessera allocates once. analysis/bench_against_torch.sh times PyTorch both as it comes and with
malloc keeping its memory (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_). --check instead compares
the PyTorch network of each model given with its graph (parameter count, every layer's output
shape) and exits 1 on any mismatch: several models in one process, which imports torch once.
Needs PyTorch (Debian's python3-torch).
"""

import argparse
import json
import statistics
import sys
import time

import torch

from torch_model import TesseraNet, synthetic_batch


def optimizer_for(name, parameters):
    if name == "adam":
        return torch.optim.Adam(parameters, lr=1e-3)
    if name == "momentum":
        return torch.optim.SGD(parameters, lr=1e-2, momentum=0.9)
    return torch.optim.SGD(parameters, lr=1e-2)


def check(graph, net):
    problems = []
    count = sum(p.numel() for p in net.parameters())
    if count != graph["parameters"]:
        problems.append(f"{count} parameters in PyTorch, {graph['parameters']} in Tessera")
    inputs, targets = synthetic_batch(graph, 2)
    shapes = {}
    with torch.no_grad():
        net.eval()
        net(inputs, targets, shapes)
    for layer in graph["layers"]:
        if layer["name"] not in shapes:
            continue
        expected = [layer["output_shape"]["channels"], *layer["output_shape"]["spatial"]]
        if shapes[layer["name"]] != expected:
            problems.append(f"layer {layer['name']}: PyTorch {shapes[layer['name']]}, "
                            f"Tessera {expected}")
    for problem in problems:
        print(f"{graph['name']}: {problem}")
    if not problems:
        print(f"{graph['name']}: {count} parameters and {len(shapes)} layer shapes as in Tessera")
    return 1 if problems else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", metavar="model",
                        help="tessera describe SCENARIO --json output (several with --check)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--check", action="store_true")
    arguments = parser.parse_args(argv)
    if not arguments.check and len(arguments.models) != 1:
        parser.error("times one model; --check takes several")
    torch.manual_seed(0)
    torch.set_num_threads(arguments.threads)
    graphs = []
    for path in arguments.models:
        with open(path, encoding="utf-8") as stream:
            graphs.append(json.load(stream))
    if arguments.check:
        return max(check(graph, TesseraNet(graph)) for graph in graphs)
    graph = graphs[0]
    net = TesseraNet(graph)
    net.train()
    optimizer = optimizer_for(graph["optimizer"], net.parameters())
    inputs, targets = synthetic_batch(graph, graph["mini_batch"])
    seconds = []
    for step in range(arguments.warmup + arguments.steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=False)
        loss = net(inputs, targets)
        loss.backward()
        optimizer.step()
        if step >= arguments.warmup:
            seconds.append(time.perf_counter() - start)
    print(f"{statistics.median(seconds):.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
