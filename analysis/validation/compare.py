#!/usr/bin/python3
"""Tessera's predictions against published MLPerf HPC throughputs, one row per submission.

    compare.py MEASURED.csv [--output DIR] [--tessera BIN] [--systems systems.csv]
               [--model MODEL.yaml] [--keep]
               [--reference-profiles P.csv[,MORE.csv] --reference-deepbench D.csv
                --reference-cluster C.yaml | --profiles-dir DIR | --roofline]
    compare.py MEASURED.csv --scenarios-only DIR     (write the scenarios, simulate nothing)

MEASURED.csv is what analysis/validation/mlperf_extract.py writes from a round's logs (one row per
GPU submission; columns used: org, system, accelerator, nodes, gpus, global_batch,
per_gpu_batch, throughput_samples_per_s, first_epoch_samples_per_s, division, framework). Nothing
in here knows a round: any round's extracted CSV runs unchanged.

Per row:
  1. The system name (column `system`) is looked up in the mapping file (--systems, default
     systems.csv beside this script; `match` is a regular expression searched in `system`, the
     first matching line wins): it gives the cluster file (relative to the mapping file), the
     data staging as Tessera's io.store (none, memory, node_local or page_cache) and why. A row no line
     matches is not predicted ("no cluster mapping").
  2. A scenario is written from one template (scenario_text): the model file (--model, default
     scenarios/models/mlperf_cosmoflow.yaml), mini_batch = per_gpu_batch, float32, SGD with
     momentum, pure data parallelism over all the row's GPUs on its nodes, HDF5 samples with the
     mapped io.store, prefetching, volumes stored as --stored-dtype (default int16: the
     reference data set's counts), io.samples = train_samples (whether a store fits) and
     io.validation_samples = eval_samples (staged with them). A row whose global batch is not gpus x per_gpu_batch (a
     fractional or uneven per-GPU batch) is not predicted.
  3. `tessera run SCENARIO --backend sim --output DIR/sim/<name> --profiles
     PROFILES/<cluster file name>.csv`. PROFILES is DIR/profiles, written first by
     scale_profile.py from the reference GPU's profiles of the network (--reference-profiles,
     default scenarios/profiles/h200/mlperf-cosmoflow-profile.csv), its DeepBench profile
     (--reference-deepbench) and its cluster file (--reference-cluster), one file per cluster of
     the mapping (compare_reference.py); or --profiles-dir, profiles scaled beforehand; with
     --roofline no profile, every kernel on the roofline (the first rounds' method). With
     `--trace DIR/sim/<name>/trace.json`, whose three longest operations of one GPU
     (compare_trace.py) say where the predicted step goes. Its sim.csv gives the
     predicted steady-state throughput (samples_per_s) and the first epoch's
     (global_batch / first_epoch_step_s), and the step's breakdown (compute, all-reduce, io, ...).
  4. comparison.csv: measured, predicted, error % = 100 (predicted - measured) / measured, the same
     for the first epoch, and scaling efficiency. Scaling efficiency of a row is its throughput per
     GPU over that of the smallest run (fewest GPUs) of the same cluster (the mapping's line),
     measured and predicted alike; the smallest run's is 1. Its error is in points
     (100 x (predicted - measured)). MAPE is the mean of |error %| over the predicted rows.

Outputs in DIR (default results/validation-mlperf-v0.7): scenarios/*.yaml, sim/<name>/sim.{csv,json},
comparison.csv, comparison.md (the tables and MAPE), comparison.png and .svg (predicted against
measured with y = x; scaling efficiency per cluster, measured and predicted).

--keep keeps the points of an earlier run in DIR (tessera keeps unchanged points anyway; without
--keep every point is simulated afresh with --fresh).

Exit codes: 0 ok (also when some rows cannot be predicted: comparison.csv says why),
1 runtime failure (tessera not found), 2 bad input (unreadable CSV or mapping file).
"""

import argparse
import os
import re
import sys

# Its siblings in this folder, found as when run (the script's folder is on the path).
from compare_inputs import BadInput, map_system, read_measured, read_systems, whole
from compare_plot import plot
from compare_report import markdown, write_csv
from compare_rows import compare, summary
from compare_reference import (DEFAULT_CLUSTER, DEFAULT_DEEPBENCH, DEFAULT_PROFILES,
                               scale_for_clusters)
from compare_simulation import simulate
# Not used here: whoever loads this script as a module (tests/analysis/test_mlperf_compare.py)
# reaches the whole comparison through it.
from compare_arithmetic import error_pct, mape, points, scaling_efficiencies  # noqa: F401

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SYSTEMS = os.path.join(HERE, "systems.csv")
DEFAULT_MODEL = os.path.join(REPO, "scenarios", "models", "mlperf_cosmoflow.yaml")
DEFAULT_TESSERA = os.path.join(REPO, "build", "app", "tessera")
DEFAULT_OUTPUT = os.path.join(REPO, "results", "validation-mlperf-v0.7")
STORED_DTYPES = ("int16", "float32")


# ---------------------------------------------------------------------------------------------
# Scenarios

def scenario_name(row):
    return "mlperf-" + re.sub(r"[^A-Za-z0-9_.-]", "_", row["system"])


def plan_row(row, systems):
    """What to simulate for one measured row, or why not: a dict with 'why_not' or the figures."""
    plan = {"system": row["system"], "org": row.get("org", ""),
            "accelerator": row.get("accelerator", ""), "name": scenario_name(row)}
    entry = map_system(systems, row["system"])
    gpus, nodes = whole(row["gpus"]), whole(row["nodes"])
    global_batch, per_gpu = whole(row["global_batch"]), whole(row["per_gpu_batch"])
    plan.update(gpus=gpus, nodes=nodes, global_batch=global_batch, per_gpu_batch=per_gpu,
                cluster="", store="")
    if entry is None:
        plan["why_not"] = f"no cluster mapping for system {row['system']!r} in the systems file"
        return plan
    plan.update(cluster=entry["cluster"], store=entry["store"], why=entry["why"],
                samples=whole(row.get("train_samples", "")),
                validation_samples=whole(row.get("eval_samples", "")))
    if gpus is None or nodes is None or global_batch is None:
        plan["why_not"] = "gpus, nodes or global_batch missing or not a positive whole number"
    elif per_gpu is None or per_gpu * gpus != global_batch:
        plan["why_not"] = (f"global batch {row['global_batch']} is not a whole number of samples "
                           f"per GPU on {row['gpus']} GPUs (data parallelism with equal batches)")
    return plan


def scenario_text(plan, row, model, scenario_dir, measured_name, stored_dtype):
    rel = lambda p: os.path.relpath(p, scenario_dir)
    cluster_name = os.path.splitext(os.path.basename(plan["cluster"]))[0]
    description = (f"MLPerf HPC {row.get('org', '')} {row['system']} ({row.get('division', '')}, "
                   f"{row.get('framework', '')}): {plan['gpus']} x {row.get('accelerator', '')} "
                   f"on {plan['nodes']} nodes, global batch {plan['global_batch']}")
    description = description.replace('"', "'")
    samples_line = f"  samples: {plan['samples']}\n" if plan.get("samples") else ""
    if plan.get("validation_samples"):
        samples_line += f"  validation_samples: {plan['validation_samples']}\n"
    return f"""# Generated by analysis/validation/compare.py from row {row['system']} of {measured_name};
# do not edit (the template is scenario_text in compare.py).
# Staging: {plan['why'].replace(chr(10), ' ')}
name: {plan['name']}
description: "{description}"
model:
  file: {rel(model)}
  mini_batch: {plan['per_gpu_batch']}
  dtype: float32
  optimizer: momentum
parallelism:
  data: {plan['gpus']}
  gpus: {plan['gpus']}
platform:
  cluster: {rel(plan['cluster'])}   # {cluster_name}
  nodes: {plan['nodes']}
io:
  format: hdf5
  stored_dtype: {stored_dtype}
  store: {plan['store']}
  prefetch: true
{samples_line}sweep:
  scaling: weak
  grow: data
  gpus: [{plan['gpus']}]
"""


def write_scenarios(measured_rows, systems, model, scenario_dir, measured_name,
                    stored_dtype="int16"):
    os.makedirs(scenario_dir, exist_ok=True)
    plans = []
    for row in measured_rows:
        plan = plan_row(row, systems)
        if "why_not" not in plan:
            path = os.path.join(scenario_dir, plan["name"] + ".yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(scenario_text(plan, row, model, scenario_dir, measured_name,
                                      stored_dtype))
            plan["scenario"] = path
        plans.append(plan)
    return plans


# ---------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("measured", help="CSV of mlperf_extract.py (one row per submission)")
    parser.add_argument("--output", default=DEFAULT_OUTPUT)
    parser.add_argument("--tessera", default=DEFAULT_TESSERA)
    parser.add_argument("--systems", default=DEFAULT_SYSTEMS,
                        help="mapping file: system name regex -> cluster file and io.store")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the model file of the round")
    parser.add_argument("--stored-dtype", choices=STORED_DTYPES, default="int16",
                        help="the data set's volume values in its files (io.stored_dtype; "
                             "default int16, the CosmoFlow reference data set's counts)")
    kernels = parser.add_mutually_exclusive_group()
    kernels.add_argument("--profiles-dir", metavar="DIR",
                         help="kernel profiles per cluster, scaled beforehand: DIR/<cluster file "
                              "name>.csv, if present, is passed to tessera run --profiles; rows "
                              "without one are timed by the roofline")
    kernels.add_argument("--roofline", action="store_true",
                         help="no kernel profile: every kernel on its cluster's roofline")
    parser.add_argument("--reference-profiles", default=",".join(DEFAULT_PROFILES),
                        help="comma-separated profiles of the network on the reference GPU, "
                             "scaled to each cluster by scale_profile.py")
    parser.add_argument("--reference-deepbench", default=DEFAULT_DEEPBENCH,
                        help="DeepBench's training convolutions profiled on the reference GPU")
    parser.add_argument("--reference-cluster", default=DEFAULT_CLUSTER,
                        help="a cluster file of the reference GPU")
    parser.add_argument("--scenarios-only", metavar="DIR",
                        help="write the scenarios into DIR and stop")
    parser.add_argument("--keep", action="store_true",
                        help="keep points simulated before (no --fresh)")
    args = parser.parse_args(argv)
    try:
        measured_rows = read_measured(args.measured)
        systems = read_systems(args.systems)
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not os.path.exists(args.model):
        print(f"error: {args.model}: no such model file", file=sys.stderr)
        return EXIT_BAD_INPUT
    model = os.path.abspath(args.model)
    measured_name = os.path.basename(args.measured)
    if args.scenarios_only:
        plans = write_scenarios(measured_rows, systems, model,
                                os.path.abspath(args.scenarios_only), measured_name,
                                args.stored_dtype)
        for plan in plans:
            print(plan.get("scenario") or f"{plan['system']}: {plan['why_not']}")
        return EXIT_OK
    if not (os.path.isfile(args.tessera) and os.access(args.tessera, os.X_OK)):
        print(f"error: {args.tessera}: not an executable (build it, or pass --tessera)",
              file=sys.stderr)
        return EXIT_RUNTIME
    out_dir = os.path.abspath(args.output)
    os.makedirs(out_dir, exist_ok=True)
    plans = write_scenarios(measured_rows, systems, model, os.path.join(out_dir, "scenarios"),
                            measured_name, args.stored_dtype)
    profiles_dir = args.profiles_dir
    if not args.roofline and not profiles_dir:
        try:
            profiles_dir = scale_for_clusters(
                [plan["cluster"] for plan in plans if plan.get("cluster")],
                [p for p in args.reference_profiles.split(",") if p], args.reference_deepbench,
                args.reference_cluster, os.path.join(out_dir, "profiles"))
        except BadInput as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
    sim_rows = []
    for plan in plans:
        if "why_not" in plan:
            sim_rows.append({})
        else:
            sim_rows.append(simulate(plan, os.path.abspath(args.tessera),
                                     os.path.join(out_dir, "sim"), fresh=not args.keep,
                                     profiles_dir=profiles_dir))
    rows = compare(plans, measured_rows, sim_rows)
    stats = summary(rows)
    write_csv(rows, os.path.join(out_dir, "comparison.csv"))
    text = markdown(rows, stats, measured_name)
    with open(os.path.join(out_dir, "comparison.md"), "w", encoding="utf-8") as f:
        f.write(text)
    plot(rows, out_dir)
    print(text)
    print(f"wrote {out_dir}/comparison.csv, comparison.md, comparison.png, comparison.svg")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
