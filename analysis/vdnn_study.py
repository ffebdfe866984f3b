#!/usr/bin/python3
"""vDNN's figures in simulation: each scenario played with every memory policy.

For every scenario given (default: scenarios/vdnn_*.yaml), the network-wide allocation the vDNN
paper compares with (memory.allocation: network_wide), then layer-by-layer allocation with
offload none, conv, all and dyn, each simulated with `tessera run --backend sim`. Writes
OUTPUT/table.csv and OUTPUT/table.md: per scenario and policy the step, the offload stall, the
peak and time-averaged device memory, the bytes offloaded per step, whether it fits, and against
the network-wide baseline the average memory saved and the slowdown (the baseline's step stands
for a GPU large enough to hold it, the paper's "oracular GPU").

    analysis/vdnn_study.py --tessera build/app/tessera --output results/vdnn-study

Exit codes: 0 ok, 1 a run failed, 2 bad input.
"""
import argparse
import csv
import glob
import json
import os
import subprocess
import sys

import yaml

VARIANTS = [
    ("network-wide", {"allocation": "network_wide", "offload": "none"}),
    ("none", {"allocation": "layer_wise", "offload": "none"}),
    ("conv", {"allocation": "layer_wise", "offload": "conv"}),
    ("all", {"allocation": "layer_wise", "offload": "all"}),
    ("dyn", {"allocation": "layer_wise", "offload": "dyn"}),
]


def gib(value):
    return f"{value / 2**30:.2f} GiB"


def simulate(tessera, scenario_path, variant, memory, output):
    with open(scenario_path) as handle:
        scenario = yaml.safe_load(handle)
    scenario["name"] = f"{scenario['name']}-{variant}"
    scenario.setdefault("memory", {}).update(memory)
    folder = os.path.join(output, scenario["name"])
    os.makedirs(folder, exist_ok=True)
    variant_path = os.path.join(folder, "scenario.yaml")
    with open(variant_path, "w") as handle:
        yaml.safe_dump(scenario, handle, sort_keys=False)
    run = subprocess.run([tessera, "run", variant_path, "--backend", "sim", "--output", folder],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        raise RuntimeError(f"{variant_path}: tessera run exited {run.returncode}")
    with open(os.path.join(folder, "sim.json")) as handle:
        return json.load(handle)["points"][0]


def rows_of(tessera, scenario_path, output):
    points = {variant: simulate(tessera, scenario_path, variant, memory, output)
              for variant, memory in VARIANTS}
    baseline = points["network-wide"]
    rows = []
    for variant, _ in VARIANTS:
        point = points[variant]
        saved = 1 - point["average_memory_bytes"] / baseline["average_memory_bytes"]
        slowdown = point["step_s"] / baseline["step_s"] - 1
        rows.append({
            "scenario": os.path.basename(scenario_path),
            "policy": variant,
            "applied": applied_policy(point["note"]),
            "step_s": point["step_s"],
            "offload_s": point["breakdown_s"]["offload"],
            "peak_memory_bytes": point["peak_memory_bytes"],
            "average_memory_bytes": point["average_memory_bytes"],
            "offloaded_bytes": point["offloaded_bytes"],
            "fits": point["fits"],
            "average_saved_vs_network_wide": saved,
            "slowdown_vs_network_wide": slowdown,
        })
    return rows


def applied_policy(note):
    marker = "(applied: "
    if marker not in note:
        return ""
    return note.split(marker, 1)[1].split(")", 1)[0]


def markdown(rows):
    lines = ["| scenario | policy | step | offload stall | peak | average | to host/step | fits "
             "| average saved | slower than network-wide |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        policy = row["policy"] + (f" ({row['applied']})" if row["applied"] else "")
        lines.append(
            f"| {row['scenario']} | {policy} | {row['step_s']:.3f} s | {row['offload_s']:.3f} s "
            f"| {gib(row['peak_memory_bytes'])} | {gib(row['average_memory_bytes'])} "
            f"| {gib(row['offloaded_bytes'])} | {'yes' if row['fits'] else 'no'} "
            f"| {100 * row['average_saved_vs_network_wide']:.1f}% "
            f"| {100 * row['slowdown_vs_network_wide']:+.1f}% |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", help="scenario files (default scenarios/vdnn_*.yaml)")
    parser.add_argument("--tessera", default="build/app/tessera")
    parser.add_argument("--output", default="results/vdnn-study")
    args = parser.parse_args()
    scenarios = args.scenarios or sorted(glob.glob("scenarios/vdnn_*.yaml"))
    missing = [path for path in scenarios + [args.tessera] if not os.path.exists(path)]
    if missing:
        sys.stderr.write(f"error: no such file: {', '.join(missing)}\n")
        return 2
    os.makedirs(args.output, exist_ok=True)
    rows = []
    try:
        for scenario in scenarios:
            rows += rows_of(args.tessera, scenario, args.output)
    except RuntimeError as error:
        sys.stderr.write(f"error: {error}\n")
        return 1
    with open(os.path.join(args.output, "table.csv"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = markdown(rows)
    with open(os.path.join(args.output, "table.md"), "w") as handle:
        handle.write(table)
    sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
