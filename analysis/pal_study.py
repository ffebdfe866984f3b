#!/usr/bin/python3
"""Pal et al. (IEEE Micro 2019) reproduced: best hybrid (data x model parallel) against best pure
data-parallel time to train, as GPUs grow.

For every scenario given (default: scenarios/pal_*.yaml, each a pure data-parallel weak-scaling
sweep with a critical-batch training target) it simulates the scenario and its hybrid variants
with `tessera run --backend sim`: model degree 2, 4 and 8 (one replica's GPUs inside a DGX-1
node) as contiguous stages balanced by roofline time with 1, k or 2k micro-batches (GPipe), and,
for models with Inception modules, every module's branches placed on different GPUs (largest
branch first onto the least loaded GPU, by convolution FLOPs) with 1 or k micro-batches. The
per-replica mini-batch is the scenario's, so at G GPUs a degree-k variant trains a global batch
k times smaller than data parallelism's.

Then, for every B_noise of the sweep (--b-noise), the same output folders are run again with
only `training.critical_batch` changed: Tessera keeps the simulated points and recomputes the
steps and time to train (S = S_min (1 + B_noise / B), McCandlish et al. 2018). Writes into
OUTPUT: points.csv (every variant, point and B_noise), table.csv and table.md (per model,
B_noise and GPU count: best DP, best hybrid and its configuration, the hybrid's advantage
T_DP / T_hybrid - 1), summary.csv and summary.md (per model and B_noise: advantage at the
largest GPU count, best over all GPU counts against best over all GPU counts, the GPU counts
where the hybrid wins and where the published advantage holds) and pal_study.png.

    analysis/pal_study.py --tessera build/app/tessera --output results/pal-study

Exit codes: 0 ok, 1 a run failed, 2 bad input.
"""
import argparse
import csv
import glob
import json
import os
import re
import subprocess
import sys

import yaml

# Pal et al. 2019, abstract: "at least 26.5%, 8%, and 22%" end-to-end speedup over DP alone.
PUBLISHED = {"inception_v3": 0.265, "gnmt": 0.08, "biglstm": 0.22}
DEFAULT_B_NOISE = [2**e for e in range(10, 21)]  # 1,024 .. 1,048,576 samples


def run_tessera(tessera, path, folder):
    run = subprocess.run([tessera, "run", path, "--backend", "sim", "--output", folder],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        raise RuntimeError(f"{path}: tessera run exited {run.returncode}")
    with open(os.path.join(folder, "sim.csv"), newline="") as handle:
        return list(csv.DictReader(handle))


def conv_flops(layer):
    if layer["op"] != "conv":
        return 0
    params = layer["params"]
    kernel = 1
    for k in params["kernel"]:
        kernel *= k
    out = layer["output_shape"]
    positions = 1
    for s in out["spatial"]:
        positions *= s
    cin = layer["input_shapes"][0]["channels"]
    return 2 * cin // params["groups"] * kernel * out["channels"] * positions


def branch_placement(tessera, path, degree):
    """Every Inception module's branches spread over `degree` GPUs; {} without such modules."""
    graph = subprocess.run([tessera, "describe", path, "--json"], capture_output=True,
                           text=True, check=True)
    layers = json.loads(graph.stdout)["layers"]
    by_name = {layer["name"]: layer for layer in layers}
    readers = {}
    for layer in layers:
        for source in layer["inputs"]:
            readers.setdefault(source, []).append(layer["name"])
    modules = {}
    for layer in layers:
        match = re.match(r"^(mixed_\d[a-z])_", layer["name"])
        if match:
            modules.setdefault(match.group(1), []).append(layer["name"])
    placement = {}
    for module, names in modules.items():
        inside = set(names)
        roots = [n for n in names if all(s not in inside for s in by_name[n]["inputs"])]
        work = []
        for root in roots:
            seen, todo = set(), [root]
            while todo:
                name = todo.pop()
                if name in seen or name not in inside:
                    continue
                seen.add(name)
                todo.extend(readers.get(name, []))
            work.append((sum(conv_flops(by_name[n]) for n in seen), root))
        load = [0] * degree
        for flops, root in sorted(work, reverse=True):
            stage = load.index(min(load))
            load[stage] += flops
            placement[root] = stage
    return placement


def variants(tessera, path, degrees):
    yield "dp", {"degree": 1}
    for k in degrees:
        for m in (1, k, 2 * k):
            yield f"mp{k}-stages-m{m}", {"degree": k, "micro_batches": m, "schedule": "gpipe"}
        placement = branch_placement(tessera, path, k)
        if placement and len(set(placement.values())) == k:
            for m in (1, k):
                yield f"mp{k}-branches-m{m}", {"degree": k, "placement": placement,
                                               "micro_batches": m, "schedule": "gpipe"}


def study(tessera, path, output, degrees, b_noises):
    with open(path) as handle:
        base = yaml.safe_load(handle)
    zoo = base["model"]["zoo"]
    rows = []
    for variant, model in variants(tessera, path, degrees):
        scenario = json.loads(json.dumps(base))
        scenario["name"] = f"{base['name']}-{variant}"
        if model["degree"] > 1:
            scenario.setdefault("parallelism", {})["model"] = model
        folder = os.path.join(output, scenario["name"])
        os.makedirs(folder, exist_ok=True)
        variant_path = os.path.join(folder, "scenario.yaml")
        for b_noise in b_noises:
            scenario["training"]["critical_batch"] = b_noise
            with open(variant_path, "w") as handle:
                yaml.safe_dump(scenario, handle, sort_keys=False)
            for point in run_tessera(tessera, variant_path, folder):
                rows.append({"model": zoo, "variant": variant, "degree": model["degree"],
                             "b_noise": b_noise, "gpus": int(point["gpus"]),
                             "global_batch": int(point["global_batch"]),
                             "status": point["status"], "fits": point["fits"],
                             "step_s": float(point["step_s"]),
                             "idle_s": float(point["idle_s"]),
                             "allreduce_s": float(point["allreduce_s"]),
                             "steps_to_target": float(point["steps_to_target"]),
                             "time_to_train_s": float(point["time_to_train_s"])})
    return rows


def usable(row):
    return row["status"] == "ok" and row["fits"] == "true" and row["time_to_train_s"] > 0


def best(rows):
    rows = [r for r in rows if usable(r)]
    return min(rows, key=lambda r: r["time_to_train_s"]) if rows else None


def tables(rows):
    table, summary = [], []
    keys = sorted({(r["model"], r["b_noise"]) for r in rows})
    for model, b_noise in keys:
        mine = [r for r in rows if r["model"] == model and r["b_noise"] == b_noise]
        per_gpus = []
        for gpus in sorted({r["gpus"] for r in mine}):
            dp = best([r for r in mine if r["gpus"] == gpus and r["degree"] == 1])
            hy = best([r for r in mine if r["gpus"] == gpus and r["degree"] > 1])
            if not dp or not hy:
                continue
            advantage = dp["time_to_train_s"] / hy["time_to_train_s"] - 1
            per_gpus.append((gpus, advantage))
            table.append({"model": model, "b_noise": b_noise, "gpus": gpus,
                          "dp_global_batch": dp["global_batch"], "dp_step_s": dp["step_s"],
                          "dp_time_to_train_h": dp["time_to_train_s"] / 3600,
                          "hybrid": hy["variant"], "hybrid_global_batch": hy["global_batch"],
                          "hybrid_step_s": hy["step_s"],
                          "hybrid_time_to_train_h": hy["time_to_train_s"] / 3600,
                          "advantage": advantage})
        dp = best([r for r in mine if r["degree"] == 1])
        hy = best([r for r in mine if r["degree"] > 1])
        published = PUBLISHED.get(model)
        summary.append({
            "model": model, "b_noise": b_noise, "published": published,
            "advantage_at_max_gpus": per_gpus[-1][1] if per_gpus else None,
            "best_dp": f"{dp['gpus']} GPUs {dp['time_to_train_s'] / 3600:.2f} h" if dp else "",
            "best_hybrid": (f"{hy['variant']} {hy['gpus']} GPUs "
                            f"{hy['time_to_train_s'] / 3600:.2f} h") if hy else "",
            "best_vs_best": (dp["time_to_train_s"] / hy["time_to_train_s"] - 1
                             if dp and hy else None),
            "hybrid_wins_at": " ".join(str(g) for g, a in per_gpus if a > 0),
            "published_holds_at": " ".join(str(g) for g, a in per_gpus
                                           if published is not None and a >= published)})
    return table, summary


def percent(value):
    return "" if value is None else f"{100 * value:+.1f}%"


def write(rows, path, columns=None):
    columns = columns or list(rows[0].keys())
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def markdown(rows, path, formats):
    columns = list(formats.keys())
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(formats[c](row[c]) for c in columns) + " |")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def plot(rows, b_noise, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = sorted({r["model"] for r in rows})
    figure, axes = plt.subplots(2, len(models), figsize=(5 * len(models), 8), squeeze=False)
    for column, model in enumerate(models):
        mine = [r for r in rows if r["model"] == model and r["b_noise"] == b_noise]
        gpus = sorted({r["gpus"] for r in mine})
        for label, pick in (("pure DP", lambda r: r["degree"] == 1),
                            ("best hybrid", lambda r: r["degree"] > 1)):
            points = [(g, best([r for r in mine if r["gpus"] == g and pick(r)])) for g in gpus]
            points = [(g, r["time_to_train_s"] / 3600) for g, r in points if r]
            axes[0][column].plot(*zip(*points), marker="o", label=label)
        axes[0][column].set(xscale="log", yscale="log", xlabel="GPUs",
                            ylabel=f"time to train, h (S_min assumed, B_noise {b_noise})",
                            title=model)
        axes[0][column].legend()
        noises = sorted({r["b_noise"] for r in rows if r["model"] == model})
        for g in (max(gpus), gpus[len(gpus) // 2]):
            values = []
            for n in noises:
                dp = best([r for r in rows if r["model"] == model and r["b_noise"] == n
                           and r["gpus"] == g and r["degree"] == 1])
                hy = best([r for r in rows if r["model"] == model and r["b_noise"] == n
                           and r["gpus"] == g and r["degree"] > 1])
                values.append(100 * (dp["time_to_train_s"] / hy["time_to_train_s"] - 1)
                              if dp and hy else float("nan"))
            axes[1][column].plot(noises, values, marker="o", label=f"{g} GPUs")
        if model in PUBLISHED:
            axes[1][column].axhline(100 * PUBLISHED[model], color="k", linestyle="--",
                                    label="published (Pal et al. 2019)")
        axes[1][column].axhline(0, color="grey", linewidth=0.5)
        axes[1][column].set(xscale="log", xlabel="B_noise (samples)",
                            ylabel="hybrid advantage, %")
        axes[1][column].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*")
    parser.add_argument("--tessera", default="build/app/tessera")
    parser.add_argument("--output", default="results/pal-study")
    parser.add_argument("--degrees", default="2,4,8")
    parser.add_argument("--b-noise", default=",".join(map(str, DEFAULT_B_NOISE)))
    parser.add_argument("--plot-b-noise", type=int, default=16384)
    args = parser.parse_args()
    scenarios = args.scenarios or sorted(glob.glob("scenarios/pal_*.yaml"))
    try:
        degrees = [int(d) for d in args.degrees.split(",")]
        b_noises = [int(b) for b in args.b_noise.split(",")]
    except ValueError:
        parser.error("--degrees and --b-noise take comma-separated integers")
    if not scenarios or any(not os.path.isfile(s) for s in scenarios):
        parser.error("no scenario file (or a missing one) given")
    os.makedirs(args.output, exist_ok=True)
    rows = []
    try:
        for path in scenarios:
            rows += study(args.tessera, path, args.output, degrees, b_noises)
    except (RuntimeError, subprocess.CalledProcessError) as error:
        sys.stderr.write(f"pal_study: {error}\n")
        return 1
    write(rows, os.path.join(args.output, "points.csv"))
    table, summary = tables(rows)
    write(table, os.path.join(args.output, "table.csv"))
    write(summary, os.path.join(args.output, "summary.csv"))
    fixed = {"model": str, "b_noise": str, "gpus": str, "dp_step_s": lambda v: f"{v:.3f}",
             "dp_time_to_train_h": lambda v: f"{v:.2f}", "hybrid": str,
             "hybrid_step_s": lambda v: f"{v:.3f}",
             "hybrid_time_to_train_h": lambda v: f"{v:.2f}", "advantage": percent}
    markdown(table, os.path.join(args.output, "table.md"), fixed)
    markdown(summary, os.path.join(args.output, "summary.md"),
             {"model": str, "b_noise": str, "published": percent,
              "advantage_at_max_gpus": percent, "best_dp": str, "best_hybrid": str,
              "best_vs_best": percent, "hybrid_wins_at": str, "published_holds_at": str})
    if args.plot_b_noise in b_noises:
        plot(rows, args.plot_b_noise, os.path.join(args.output, "pal_study.png"))
    print(f"pal_study: {len(rows)} points; tables and plot in {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
