#!/usr/bin/python3
"""Carry a network's convolution times measured on one GPU to a GPU this project does not have.

    scale_profile.py NETWORK.csv [MORE.csv...] --deepbench DEEPBENCH.csv --reference-cluster REF.yaml \\
                     --target-cluster TARGET.yaml --output OUT.csv

The rule (docs/design/published-validation.md, "Next round"), decided before any profile of the
MLPerf HPC v0.7 network existed:

    t_target = t_reference x (peak_reference x e_reference) / (peak_target x e_target)

for every convolution row (forward, backward-data, backward-filter; every algorithm and
micro-batch) of NETWORK.csv, a `tessera profile` file of the network on the reference GPU.
peak_* is the fp32 peak of each cluster file's gpu; e_target is the target cluster file's
gpu.compute_efficiency (DeepBench's published median for that GPU, deepbench_efficiency.py);
e_reference is the same median measured on the reference GPU: over every DeepBench kernel of
DEEPBENCH.csv (a `tessera profile` of DeepBench's convolutions on that GPU, as `tessera
microbatch-study deepbench` writes it), the fastest algorithm's direct-convolution FLOPs
(2 N K C/g P Q R S: Tessera's and DeepBench's count) over its time and peak_reference. A kernel
thus runs on the target at the fraction of the DeepBench median that it runs at on the
reference: what is hard about its shape is carried over, what is fast about the reference GPU
is not. Rows of other ops are dropped (the simulator times them by the target's roofline);
copies and collectives too (they describe the reference machine). The output names the target
cluster's gpu.model as its device, so `tessera run --profiles OUT.csv` uses it there. Further
profiles of the same network on the same GPU (MORE.csv, e.g. torch_cosmoflow_kernels.py's
--profile-output) add their rows as more algorithms; the simulator takes the fastest.

The reference is the interface the submissions called: cuDNN 7.6's legacy algorithms (the graph
API came with cuDNN 8). So NETWORK.csv's and DEEPBENCH.csv's rows of cuDNN graph-API engines
(algorithms named ENGINE_..., kernels/src/cudnn_engine_names.hpp) are left out; a further
profile keeps them (NETWORK.csv given again as MORE.csv adds Tessera's own engine rows).

Exit codes: 0 ok, 2 bad input (a file missing or malformed, naming it).
"""

import argparse
import csv
import math
import re
import statistics
import sys

EXIT_OK = 0
EXIT_BAD_INPUT = 2
HEADER = "device,op,direction,shape,dtype,micro_batch,algorithm,time_s,workspace_bytes,ok"
SHAPE = re.compile(r"^conv k(?P<k>[\dx]+) s[\dx]+ p[\dx]+ d[\dx]+ g(?P<g>\d+) "
                   r"in (?P<inp>[\dx]+) out (?P<out>[\dx]+)$")
GRAPH_ENGINE_PREFIX = "ENGINE_"
UNITS = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


class BadInput(Exception):
    pass


def product(values):
    result = 1
    for v in values:
        result *= v
    return result


def convolution_flops(shape, micro_batch):
    """Direct-convolution FLOPs of one call: 2 N K (C/g) (output voxels) (filter taps)."""
    m = SHAPE.match(shape)
    if m is None:
        return None
    taps = product(int(v) for v in m["k"].split("x"))
    inp = [int(v) for v in m["inp"].split("x")]
    out = [int(v) for v in m["out"].split("x")]
    channels_per_group = inp[0] // int(m["g"])
    return 2.0 * micro_batch * out[0] * product(out[1:]) * channels_per_group * taps


def read_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")


def read_profile(path):
    """(comment lines, rows as dicts) of a tessera-profile/1 file."""
    lines = read_lines(path)
    comments = [line for line in lines if line.startswith("#")]
    body = [line for line in lines if line and not line.startswith("#")]
    if not body or body[0] != HEADER:
        raise BadInput(f"{path}: expected the header '{HEADER}' after the comments")
    rows = list(csv.DictReader(body))
    for number, row in enumerate(rows, start=2):
        try:
            row["micro_batch"] = int(row["micro_batch"])
            row["time_s"] = float(row["time_s"])
        except (TypeError, ValueError):
            raise BadInput(f"{path}: row {number}: micro_batch or time_s is not a number")
    return comments, rows


def legacy_rows(rows):
    """The rows of cuDNN's legacy algorithms and of other libraries: graph-API engines left out."""
    return [row for row in rows if not row["algorithm"].startswith(GRAPH_ENGINE_PREFIX)]


def read_gpu(path):
    """{model, fp32_peak (FLOP/s), compute_efficiency} from a cluster file's gpu section."""
    lines = read_lines(path)
    gpu, inside = {}, False
    for line in lines:
        if re.match(r"^gpu:\s*$", line):
            inside = True
            continue
        if inside and re.match(r"^\S", line):
            break
        m = re.match(r"^\s+(model|fp32_peak|compute_efficiency):\s*([^#]*?)\s*(#.*)?$", line)
        if inside and m:
            gpu[m[1]] = m[2].strip().strip('"')
    if "model" not in gpu or "fp32_peak" not in gpu:
        raise BadInput(f"{path}: gpu.model and gpu.fp32_peak expected")
    m = re.match(r"^([\d.eE+-]+)\s*([kMGTP]?)FLOP/s$", gpu["fp32_peak"])
    if m is None:
        raise BadInput(f"{path}: gpu.fp32_peak: expected e.g. '15.7 TFLOP/s', "
                       f"got {gpu['fp32_peak']!r}")
    gpu["fp32_peak"] = float(m[1]) * UNITS[m[2]]
    gpu["compute_efficiency"] = float(gpu.get("compute_efficiency", "1") or 1)
    return gpu


def median_efficiency(rows, peak_flops):
    """The median over kernels (shape, direction, undivided batch) of the fastest algorithm's
    FLOPs / (time x peak)."""
    best = {}
    for row in rows:
        if row["op"] != "conv" or row.get("ok", "true") != "true":
            continue
        key = (row["shape"], row["direction"])
        batch, time = best.get(key, (0, math.inf))
        if row["micro_batch"] > batch or (row["micro_batch"] == batch and row["time_s"] < time):
            best[key] = (row["micro_batch"], row["time_s"])
    efficiencies = []
    for (shape, _), (batch, time) in best.items():
        flops = convolution_flops(shape, batch)
        if flops is not None and time > 0:
            efficiencies.append(flops / (time * peak_flops))
    if not efficiencies:
        raise BadInput("the DeepBench profile has no convolution kernel to take a median of")
    return statistics.median(efficiencies), len(efficiencies)


def scale(rows, factor, device):
    out = []
    for row in rows:
        if row["op"] != "conv":
            continue
        scaled = dict(row)
        scaled["device"] = device
        scaled["time_s"] = row["time_s"] * factor
        out.append(scaled)
    return out


def write_profile(path, comments, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        for line in comments:
            f.write(line + "\n")
        f.write(HEADER + "\n")
        writer = csv.writer(f, lineterminator="\n")
        for r in rows:
            writer.writerow([r["device"], r["op"], r["direction"], r["shape"], r["dtype"],
                             r["micro_batch"], r["algorithm"], f"{r['time_s']:.9g}",
                             r["workspace_bytes"], r["ok"]])


class Reference:
    """The reference GPU's side of the rule, read once: its cluster's gpu, the network's rows
    (from every given profile, as algorithms) and the DeepBench median measured there."""

    def __init__(self, network_paths, deepbench_path, cluster_path):
        self.paths = list(network_paths)
        self.gpu = read_gpu(cluster_path)
        self.comments, network = read_profile(self.paths[0])
        self.network = legacy_rows(network)
        for more in self.paths[1:]:
            self.network += read_profile(more)[1]
        _, deepbench = read_profile(deepbench_path)
        self.efficiency, self.kernels = median_efficiency(legacy_rows(deepbench),
                                                          self.gpu["fp32_peak"])


def write_scaled(reference, target_cluster_path, output):
    """The network's convolution rows carried to the target's GPU, into `output`."""
    target = read_gpu(target_cluster_path)
    gpu = reference.gpu
    factor = (gpu["fp32_peak"] * reference.efficiency) / (
        target["fp32_peak"] * target["compute_efficiency"])
    rows = scale(reference.network, factor, target["model"])
    kept = [c for c in reference.comments if not c.startswith("# device:")]
    kept.insert(1 if kept else 0, f"# device: {target['model']}")
    kept.append(f"# scaled by analysis/validation/scale_profile.py from "
                f"{' + '.join(reference.paths)}: x{factor:.4g} = ({gpu['fp32_peak'] / 1e12:g} "
                f"TFLOP/s x {reference.efficiency:.4f}, the DeepBench median of "
                f"{reference.kernels} kernels on {gpu['model']}) / "
                f"({target['fp32_peak'] / 1e12:g} TFLOP/s x {target['compute_efficiency']:g})")
    write_profile(output, kept, rows)
    print(f"{output}: {len(rows)} convolution rows for {target['model']}, times x{factor:.4g} "
          f"(reference DeepBench median {reference.efficiency:.4f} over {reference.kernels} "
          f"kernels)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("network", nargs="+",
                        help="tessera profile of the network on the reference GPU (then any "
                             "further profiles of it on the same GPU)")
    parser.add_argument("--deepbench", required=True,
                        help="tessera profile of DeepBench's convolutions on the same GPU")
    parser.add_argument("--reference-cluster", required=True,
                        help="a cluster file of the reference GPU (its gpu.fp32_peak)")
    parser.add_argument("--target-cluster", required=True,
                        help="the target's cluster file (gpu.model, fp32_peak, compute_efficiency)")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    try:
        reference = Reference(args.network, args.deepbench, args.reference_cluster)
        write_scaled(reference, args.target_cluster, args.output)
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
