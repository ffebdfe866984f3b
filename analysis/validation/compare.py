#!/usr/bin/python3
"""Tessera's predictions against published MLPerf HPC throughputs, one row per submission.

    compare.py MEASURED.csv [--output DIR] [--tessera BIN] [--systems systems.csv]
               [--model MODEL.yaml] [--keep]
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
  3. `tessera run SCENARIO --backend sim --output DIR/sim/<name>` (with `--profiles
     PROFILES_DIR/<cluster file name>.csv` where --profiles-dir has one); its sim.csv gives the
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
import csv
import math
import os
import re
import subprocess
import sys

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_SYSTEMS = os.path.join(HERE, "systems.csv")
DEFAULT_MODEL = os.path.join(REPO, "scenarios", "models", "mlperf_cosmoflow.yaml")
DEFAULT_TESSERA = os.path.join(REPO, "build", "app", "tessera")
DEFAULT_OUTPUT = os.path.join(REPO, "results", "validation-mlperf-v0.7")
STORES = ("none", "memory", "node_local", "page_cache")
STORED_DTYPES = ("int16", "float32")

MEASURED_COLUMNS = ("system", "gpus", "nodes", "global_batch", "per_gpu_batch",
                    "throughput_samples_per_s")

COLUMNS = [
    "org", "system", "accelerator", "cluster", "store", "nodes", "gpus", "global_batch",
    "per_gpu_batch", "measured_samples_per_s", "predicted_samples_per_s", "error_pct",
    "measured_first_epoch_samples_per_s", "predicted_first_epoch_samples_per_s",
    "first_epoch_error_pct", "measured_staging_s", "predicted_staging_s", "staging_error_pct",
    "baseline_gpus", "measured_scaling_efficiency",
    "predicted_scaling_efficiency", "scaling_error_points", "step_s", "first_epoch_step_s",
    "compute_s", "halo_s", "allreduce_s", "other_comm_s", "io_s", "offload_s", "idle_s",
    "input_source", "scenario", "status", "why_not_predicted", "note",
]

BREAKDOWN = ["compute_s", "halo_s", "allreduce_s", "other_comm_s", "io_s", "offload_s", "idle_s"]


class BadInput(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Arithmetic (tests/analysis/test_mlperf_compare.py)

def error_pct(predicted, measured):
    """100 (predicted - measured) / measured; None where either is missing or measured is 0."""
    if predicted is None or measured is None or measured == 0:
        return None
    return 100.0 * (predicted - measured) / measured


def mape(errors):
    """Mean of |error %| over the values that are not None; None when there are none."""
    values = [abs(e) for e in errors if e is not None]
    return sum(values) / len(values) if values else None


def scaling_efficiencies(rows, value_key, group_key="cluster", gpus_key="gpus"):
    """Per row: (throughput / gpus) over that of its group's row with the fewest GPUs.

    Rows whose value is None get None; a group's baseline is its smallest run that has a value
    (ties: the first such row). Returns a list parallel to rows of (efficiency, baseline_gpus).
    """
    baseline = {}
    for row in rows:
        value = row.get(value_key)
        if value is None:
            continue
        group = row[group_key]
        if group not in baseline or row[gpus_key] < baseline[group][gpus_key]:
            baseline[group] = row
    out = []
    for row in rows:
        value = row.get(value_key)
        base = baseline.get(row[group_key])
        if value is None or base is None:
            out.append((None, None))
            continue
        per_gpu = value / row[gpus_key]
        base_per_gpu = base[value_key] / base[gpus_key]
        out.append((per_gpu / base_per_gpu if base_per_gpu else None, base[gpus_key]))
    return out


def points(predicted, measured):
    """Difference of two efficiencies (fractions) in percentage points."""
    if predicted is None or measured is None:
        return None
    return 100.0 * (predicted - measured)


# ---------------------------------------------------------------------------------------------
# Inputs

def read_csv_rows(path):
    """The rows of a CSV file as dictionaries; BadInput naming the file if it cannot be read."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")


def read_measured(path):
    rows = read_csv_rows(path)
    if not rows:
        raise BadInput(f"{path}: no rows")
    missing = [c for c in MEASURED_COLUMNS if c not in rows[0]]
    if missing:
        raise BadInput(f"{path}: missing column(s) {', '.join(missing)}")
    return rows


def read_systems(path):
    rows = read_csv_rows(path)
    base = os.path.dirname(os.path.abspath(path))
    systems = []
    for line, row in enumerate(rows, start=2):
        for key in ("match", "cluster", "store"):
            if not (row.get(key) or "").strip():
                raise BadInput(f"{path}:{line}: {key}: empty")
        if row["store"] not in STORES:
            raise BadInput(f"{path}:{line}: store: expected one of {', '.join(STORES)}, "
                           f"got {row['store']!r}")
        try:
            pattern = re.compile(row["match"])
        except re.error as e:
            raise BadInput(f"{path}:{line}: match: {e}")
        systems.append({"pattern": pattern, "match": row["match"],
                        "cluster": os.path.normpath(os.path.join(base, row["cluster"])),
                        "store": row["store"], "why": row.get("why", "")})
    return systems


def map_system(systems, system):
    for entry in systems:
        if entry["pattern"].search(system):
            return entry
    return None


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def whole(text):
    value = number(text)
    return int(value) if value is not None and value == int(value) and value > 0 else None


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
# Simulation

def profile_of(plan, profiles_dir):
    """The kernel profile for a row's cluster: PROFILES_DIR/<cluster file name>.csv, if any."""
    if not profiles_dir:
        return None
    name = os.path.splitext(os.path.basename(plan["cluster"]))[0] + ".csv"
    path = os.path.join(profiles_dir, name)
    return path if os.path.isfile(path) else None


def simulate(plan, tessera, sim_root, fresh, profiles_dir=None):
    out = os.path.join(sim_root, plan["name"])
    cmd = [tessera, "run", plan["scenario"], "--backend", "sim", "--output", out]
    profile = profile_of(plan, profiles_dir)
    if profile:
        cmd += ["--profiles", profile]
    if fresh:
        cmd.append("--fresh")
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stderr.write(proc.stdout)
    sim_csv = os.path.join(out, "sim.csv")
    if not os.path.exists(sim_csv):
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        return {"status": "failed",
                "note": f"tessera exited {proc.returncode}, no sim.csv" + (f": {last}" if last else "")}
    with open(sim_csv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return {"status": "failed", "note": f"tessera exited {proc.returncode}, empty sim.csv"}
    return rows[0]


def prediction(sim_row, global_batch):
    """Predicted steady-state and first-epoch samples/s of one sim.csv row (None if not ok)."""
    if sim_row.get("status") != "ok":
        return None, None
    steady = number(sim_row.get("samples_per_s"))
    first_step = number(sim_row.get("first_epoch_step_s"))
    first = global_batch / first_step if first_step else None
    return steady, first


# ---------------------------------------------------------------------------------------------
# Comparison

def compare(plans, measured_rows, sim_rows):
    """One comparison row per measured row (plans and sim_rows parallel to measured_rows)."""
    out = []
    for plan, row, sim in zip(plans, measured_rows, sim_rows):
        r = {c: "" for c in COLUMNS}
        r.update(org=plan["org"], system=plan["system"], accelerator=plan["accelerator"],
                 cluster=os.path.splitext(os.path.basename(plan["cluster"]))[0] if plan["cluster"]
                 else "", store=plan["store"], nodes=plan["nodes"], gpus=plan["gpus"],
                 global_batch=plan["global_batch"], per_gpu_batch=plan["per_gpu_batch"])
        r["measured_samples_per_s"] = number(row.get("throughput_samples_per_s"))
        r["measured_first_epoch_samples_per_s"] = number(row.get("first_epoch_samples_per_s"))
        r["predicted_samples_per_s"] = None
        r["predicted_first_epoch_samples_per_s"] = None
        # The staging phase, where the submission staged (io.store: node_local) and the logs
        # time it; the simulation's staging_s (0 where nothing is staged).
        staged = plan["store"] == "node_local"
        r["measured_staging_s"] = number(row.get("staging_s_median")) if staged else None
        r["predicted_staging_s"] = None
        if "why_not" in plan:
            r["why_not_predicted"] = plan["why_not"]
        else:
            r["scenario"] = plan["name"]
            r["status"] = sim.get("status", "failed")
            r["note"] = sim.get("note", "")
            steady, first = prediction(sim, plan["global_batch"])
            r["predicted_samples_per_s"], r["predicted_first_epoch_samples_per_s"] = steady, first
            if steady is None:
                r["why_not_predicted"] = f"simulation {r['status']}: {r['note']}"
            for key in ["step_s", "first_epoch_step_s", "input_source"] + BREAKDOWN:
                r[key] = sim.get(key, "")
            if staged and steady is not None:
                r["predicted_staging_s"] = number(sim.get("staging_s")) or None
        r["error_pct"] = error_pct(r["predicted_samples_per_s"], r["measured_samples_per_s"])
        r["first_epoch_error_pct"] = error_pct(r["predicted_first_epoch_samples_per_s"],
                                               r["measured_first_epoch_samples_per_s"])
        r["staging_error_pct"] = error_pct(r["predicted_staging_s"], r["measured_staging_s"])
        out.append(r)
    # Scaling efficiency within a cluster, over the rows predicted (measured uses the same rows,
    # so both sides share the baseline).
    predicted = [r for r in out if r["predicted_samples_per_s"] is not None and r["gpus"]]
    meas = scaling_efficiencies(predicted, "measured_samples_per_s")
    pred = scaling_efficiencies(predicted, "predicted_samples_per_s")
    for r, (m, base), (p, _) in zip(predicted, meas, pred):
        r["baseline_gpus"] = base
        r["measured_scaling_efficiency"] = m
        r["predicted_scaling_efficiency"] = p
        r["scaling_error_points"] = points(p, m)
    return out


def summary(rows):
    scaled = [r for r in rows if r["baseline_gpus"] not in ("", None)
              and r["baseline_gpus"] != r["gpus"]]
    return {
        "rows": len(rows),
        "predicted": sum(1 for r in rows if r["predicted_samples_per_s"] is not None),
        "mape_pct": mape([r["error_pct"] for r in rows]),
        "first_epoch_mape_pct": mape([r["first_epoch_error_pct"] for r in rows]),
        "staging": [(r["system"], r["gpus"], r["measured_staging_s"], r["predicted_staging_s"],
                     r["staging_error_pct"]) for r in rows
                    if r["measured_staging_s"] is not None],
        "scaling_points": [(r["cluster"], r["baseline_gpus"], r["gpus"],
                            r["measured_scaling_efficiency"], r["predicted_scaling_efficiency"],
                            r["scaling_error_points"]) for r in scaled],
        "max_abs_scaling_points": max((abs(r["scaling_error_points"]) for r in scaled),
                                      default=None),
    }


def fmt(value, digits=2):
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def write_csv(rows, path):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: fmt(r[k], 6) if isinstance(r[k], float) else
                             ("" if r[k] is None else r[k]) for k in COLUMNS})


def markdown(rows, stats, measured_name):
    lines = [f"Measured: {measured_name}. Error = (predicted - measured) / measured.", "",
             "| system | GPUs | batch | store | measured samples/s | predicted | error % | "
             "first epoch measured | predicted | error % | step s | compute s | all-reduce s | "
             "io s | idle s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["predicted_samples_per_s"] is None:
            lines.append(f"| {r['system']} | {fmt(r['gpus'])} | {fmt(r['global_batch'])} | "
                         f"{r['store']} | {fmt(r['measured_samples_per_s'])} | not predicted: "
                         f"{r['why_not_predicted']} | | | | | | | | | |")
            continue
        lines.append("| " + " | ".join([
            r["system"], fmt(r["gpus"]), fmt(r["global_batch"]), r["store"],
            fmt(r["measured_samples_per_s"], 1), fmt(r["predicted_samples_per_s"], 1),
            fmt(r["error_pct"], 1), fmt(r["measured_first_epoch_samples_per_s"], 1),
            fmt(r["predicted_first_epoch_samples_per_s"], 1), fmt(r["first_epoch_error_pct"], 1),
            fmt(number(r["step_s"]), 4), fmt(number(r["compute_s"]), 4),
            fmt(number(r["allreduce_s"]), 4), fmt(number(r["io_s"]), 4),
            fmt(number(r["idle_s"]), 4)]) + " |")
    lines += ["", f"Rows: {stats['rows']}, predicted: {stats['predicted']}. "
              f"MAPE (steady state): {fmt(stats['mape_pct'], 1)}%. "
              f"MAPE (first epoch): {fmt(stats['first_epoch_mape_pct'], 1)}%.", ""]
    if stats["staging"]:
        lines += ["Staging before the first step (the staged submissions):", "",
                  "| system | GPUs | measured s | predicted s | error % |", "|---|---|---|---|---|"]
        for system, gpus, m, p, e in stats["staging"]:
            lines.append(f"| {system} | {fmt(gpus)} | {fmt(m, 1)} | {fmt(p, 1)} | {fmt(e, 1)} |")
        lines.append("")
    if stats["scaling_points"]:
        lines += ["| cluster | from GPUs | to GPUs | measured efficiency | predicted | "
                  "error (points) |", "|---|---|---|---|---|---|"]
        for cluster, base, gpus, m, p, e in stats["scaling_points"]:
            lines.append(f"| {cluster} | {base} | {gpus} | {fmt(m, 3)} | {fmt(p, 3)} | "
                         f"{fmt(e, 1)} |")
    else:
        lines.append("No cluster has two predicted runs: no scaling efficiency.")
    return "\n".join(lines) + "\n"


def plot(rows, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in rows if r["predicted_samples_per_s"] is not None
            and r["measured_samples_per_s"]]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.5))
    if done:
        values = [r["measured_samples_per_s"] for r in done] + \
                 [r["predicted_samples_per_s"] for r in done]
        lo, hi = min(values) / 1.5, max(values) * 1.5
        ax1.plot([lo, hi], [lo, hi], color="gray", linestyle="--", label="y = x")
        for band in (0.85, 1.15):
            ax1.plot([lo, hi], [lo * band, hi * band], color="lightgray", linestyle=":")
        for i, r in enumerate(sorted(done, key=lambda r: r["measured_samples_per_s"])):
            ax1.scatter(r["measured_samples_per_s"], r["predicted_samples_per_s"], s=40)
            ax1.annotate(f"{r['org'] or r['system']} {r['gpus']} ({r['error_pct']:+.0f}%)",
                         (r["measured_samples_per_s"], r["predicted_samples_per_s"]),
                         fontsize=7, xytext=(5, -11 if i % 2 else 5), textcoords="offset points")
        ax1.set_xscale("log")
        ax1.set_yscale("log")
        ax1.set_xlim(lo, hi)
        ax1.set_ylim(lo, hi)
    ax1.set_xlabel("measured samples/s (MLPerf logs)")
    ax1.set_ylabel("predicted samples/s (Tessera, steady state)")
    ax1.set_title("Training throughput (dotted: +/-15%)")
    ax1.legend(loc="upper left")

    clusters = sorted({r["cluster"] for r in done})
    for i, cluster in enumerate(clusters):
        group = sorted([r for r in done if r["cluster"] == cluster
                        and r["measured_scaling_efficiency"] is not None],
                       key=lambda r: r["gpus"])
        if len(group) < 2:
            continue
        color = f"C{i}"
        gpus = [r["gpus"] for r in group]
        ax2.plot(gpus, [r["measured_scaling_efficiency"] for r in group], "o-", color=color,
                 label=f"{cluster} measured")
        ax2.plot(gpus, [r["predicted_scaling_efficiency"] for r in group], "s--", color=color,
                 label=f"{cluster} predicted")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("GPUs")
    ax2.set_ylabel("throughput per GPU / that of the cluster's smallest run")
    ax2.set_title("Scaling efficiency per cluster")
    ax2.axhline(1.0, color="gray", linewidth=0.5)
    if ax2.get_legend_handles_labels()[0]:
        ax2.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, "comparison." + ext), dpi=120)
    plt.close(fig)


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
    parser.add_argument("--profiles-dir", metavar="DIR",
                        help="kernel profiles per cluster: DIR/<cluster file name>.csv, if "
                             "present, is passed to tessera run --profiles (scale_profile.py "
                             "writes them); rows without one are timed by the roofline")
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
    sim_rows = []
    for plan in plans:
        if "why_not" in plan:
            sim_rows.append({})
        else:
            sim_rows.append(simulate(plan, os.path.abspath(args.tessera),
                                     os.path.join(out_dir, "sim"), fresh=not args.keep,
                                     profiles_dir=args.profiles_dir))
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
