#!/usr/bin/python3
"""Every shipped scenario trains for real: a tiny variant of each (the same strategy, sweep and
platform; the model shrunk to the smallest size its definition allows; one measured step, no
warm-up, which would double the check's time: later steps are cli_run_real_backend's and
RealTrainer's) under mpirun with 4 CPU ranks. Points that fit 4 ranks must be ok or
does_not_fit (never failed); points needing more must be skipped with the reason. A scenario
none of whose points fits 4 ranks has its sweep shrunk to the fewest GPUs its strategy takes
(the data-parallel width cut to 1, the spatial grid and model stages kept; up to 8 ranks for a
grid of 8), and every scenario must train at least one point, except one whose every point
needs more ranks than that or a tensor split the real backend skips with its reason (simulator
only). Of a sweep over GPU counts only the largest count that fits the ranks trains, beside the
smallest that does not (skipped): the smaller points run the same code on fewer ranks, which
cli_run_real_backend and the RealTrainer tests train, and each trained point costs seconds.

    shipped_scenarios_real.py TESSERA MPIEXEC SCENARIO_DIR

Needs Debian's python3-yaml (setup.sh installs it). Exit 0 when every scenario passes.
"""

import csv
import os
import subprocess
import sys
import tempfile
import time

import yaml

RANKS = 4
MOST_RANKS = 8  # for a strategy that takes more GPUs than RANKS even without data parallelism

# Sizes to try for each zoo model, smallest first (the smallest its definition allows, and
# larger ones for scenarios naming layers that only a larger model has), with few classes.
TINY_OPTIONS = {
    "cosmoflow": [{"width": w} for w in (16, 32, 64, 128, 256)],
    "unet3d": [{"width": w, "classes": 3} for w in (16, 32, 64)],
    "alexnet": [{"image_size": 223, "classes": 10}],
    "overfeat": [{"image_size": 71, "classes": 10}],
    "vgg16": [{"image_size": 224, "classes": 10}],
    "googlenet": [{"image_size": 32, "classes": 10}],
    "resnet18": [{"image_size": 32, "classes": 10}],
    "resnet50": [{"image_size": 32, "classes": 10}],
    "inception_v3": [{"image_size": 75, "classes": 10, "aux_logits": False}],
    "gnmt": [{"vocabulary": 64, "hidden": 16, "layers": 2, "sequence_length": 4}],
    "biglstm": [{"vocabulary": 64, "hidden": 16, "projection": 8, "sequence_length": 4,
                 "sampled": 0}],
    "gpt2": [{"layers": 2, "hidden": 64, "heads": h, "sequence_length": 16, "vocabulary": 64}
             for h in (4, 8)],
}
# The real backend runs a transformer's tensor splits on CPU ranks and skips others (GPU ranks,
# grouped convolutions' splits), ending its note with this.
TENSOR_SKIP = "the simulator predicts it"


def fewest_gpus(scenario):
    """The sweeps to try, in order, for a scenario none of whose points fits RANKS ranks: the
    sweep's GPU counts replaced by small ones, the data-parallel width cut to 1."""
    sweep = scenario.get("sweep", {})
    if not sweep.get("gpus") or min(int(g) for g in sweep["gpus"]) <= RANKS:
        return [None]
    return [[2, 4], [4], [2], [1], [MOST_RANKS]]


def tiny_variant(path, scratch, tessera):
    """The smallest variant of the scenario that still validates, written into `scratch`, and
    the ranks to run it on (None where no variant validates)."""
    with open(path, encoding="utf-8") as stream:
        original = stream.read()
    candidates = TINY_OPTIONS.get(yaml.safe_load(original)["model"].get("zoo"), [{}])
    for gpus in fewest_gpus(yaml.safe_load(original)):
        for options in candidates:
            scenario = yaml.safe_load(original)
            if gpus is not None:
                scenario["sweep"]["gpus"] = gpus
                if "data" in scenario.get("parallelism", {}):
                    scenario["parallelism"]["data"] = 1
            variant = write_variant(scenario, options, path, scratch, tessera)
            if subprocess.run([tessera, "validate", variant], capture_output=True).returncode == 0:
                return variant, max(RANKS, max(gpus) if gpus else 0)
    return variant, None  # none validates: the run reports why


def write_variant(scenario, options, path, scratch, tessera):
    base = os.path.dirname(os.path.abspath(path))
    model = scenario["model"]
    if options:
        model["options"] = {**model.get("options", {}), **options}
    if "file" in model:
        model["file"] = os.path.join(base, model["file"])
    # Two samples, or one per micro-batch of a pipeline.
    micro_batches = int(scenario.get("parallelism", {}).get("model", {}).get("micro_batches", 1))
    model["mini_batch"] = min(int(model.get("mini_batch", 2)), max(2, micro_batches))
    platform = scenario.get("platform", {})
    if "cluster" in platform:
        platform["cluster"] = os.path.join(base, platform["cluster"])
    scenario["real"] = {"warmup_steps": 0, "measured_steps": 1}
    scenario.pop("outputs", None)
    # A scenario training on files gets a tiny data set of its samples (CosmoFlow's layout).
    io = scenario.get("io", {})
    if io.get("format") == "hdf5":
        width = str(model.get("options", {}).get("width", 16))
        dataset = os.path.join(scratch, "data-" + width)
        if not os.path.isdir(dataset):
            subprocess.run([tessera, "data", "generate", "--output", dataset, "--samples", "8",
                            "--width", width], check=True, capture_output=True)
        io["dataset"] = dataset
    variant = os.path.join(scratch, os.path.basename(path))
    with open(variant, "w", encoding="utf-8") as stream:
        yaml.safe_dump(scenario, stream)
    return variant


def largest_fitting_point(variant, ranks, tessera):
    """Cuts the variant's sweep to its largest GPU count within `ranks` and its smallest above,
    where the cut sweep still validates (a sweep's first point can set its strategy's base)."""
    with open(variant, encoding="utf-8") as stream:
        scenario = yaml.safe_load(stream)
    gpus = [int(g) for g in scenario.get("sweep", {}).get("gpus", [])]
    fitting = [g for g in gpus if g <= ranks]
    beyond = [g for g in gpus if g > ranks]
    kept = fitting[-1:] + beyond[:1]
    if not fitting or kept == gpus:
        return
    cut = dict(scenario, sweep={**scenario["sweep"], "gpus": kept})
    candidate = variant[:-5] + "-cut.yaml"
    with open(candidate, "w", encoding="utf-8") as stream:
        yaml.safe_dump(cut, stream)
    if subprocess.run([tessera, "validate", candidate], capture_output=True).returncode == 0:
        os.replace(candidate, variant)


def tensor_parallel(path):
    with open(path, encoding="utf-8") as stream:
        return int(yaml.safe_load(stream).get("parallelism", {}).get("tensor", 1)) > 1


def check(rows, name, ranks):
    problems = []
    for row in rows:
        gpus, status, note = int(row["gpus"]), row["status"], row["note"]
        if gpus > ranks:
            if status != "skipped" or "launch with mpirun" not in note:
                problems.append(f"point {row['point']} ({gpus} GPUs) not skipped: {status} {note}")
        elif status == "skipped" and "not yet run on GPUs by the real backend" in note:
            pass  # GPU ranks: recurrent models' layers run on CPU ranks only (no cuDNN RNN)
        elif status == "skipped" and TENSOR_SKIP in note:
            pass
        elif status not in ("ok", "does_not_fit"):
            problems.append(f"point {row['point']} ({gpus} GPUs): {status}: {note}")
        elif status == "ok" and not float(row["step_s"]) > 0:
            problems.append(f"point {row['point']}: ok without a step time")
    sim_only = all(TENSOR_SKIP in row["note"] or int(row["gpus"]) > ranks for row in rows)
    if not sim_only and not any(row["status"] == "ok" for row in rows):
        problems.append("no point trained")
    return [f"{name}: {problem}" for problem in problems]


def main():
    tessera, mpiexec, scenario_dir = sys.argv[1:4]
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        for entry in sorted(os.listdir(scenario_dir)):
            if not entry.endswith(".yaml"):
                continue
            variant, ranks = tiny_variant(os.path.join(scenario_dir, entry), scratch, tessera)
            if ranks is None and tensor_parallel(variant):
                # Its tensor groups and stages take more ranks than this check launches.
                print(f"{entry}: simulator only (no tiny variant of its tensor-parallel "
                      "strategy fits the ranks here)")
                continue
            ranks = ranks or RANKS
            largest_fitting_point(variant, ranks, tessera)
            started = time.monotonic()
            output = os.path.join(scratch, "out-" + entry[:-5])
            result = subprocess.run(
                [mpiexec, "-np", str(ranks), "--oversubscribe", tessera, "run", variant,
                 "--backend", "real", "--output", output],
                capture_output=True, text=True, timeout=1200)
            if result.returncode != 0:
                failures.append(f"{entry}: exit {result.returncode}: {result.stderr[-2000:]}")
                continue
            with open(os.path.join(output, "real.csv"), encoding="utf-8") as stream:
                rows = list(csv.DictReader(stream))
            problems = check(rows, entry, ranks)
            failures.extend(problems)
            ran = sum(1 for row in rows if row["status"] == "ok")
            print(f"{entry}: {len(rows)} point(s), {ran} trained on {ranks} ranks in "
                  f"{time.monotonic() - started:.1f} s" + (" FAIL" if problems else ""))
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
