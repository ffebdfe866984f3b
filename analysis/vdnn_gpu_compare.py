#!/usr/bin/python3
"""vDNN on a GPU, measured against simulated: the GPU campaign's vdnn step (tools/gpu/campaign.sh).

The step trains each run of vdnn/scenarios/ for real on one GPU (some with the device capped) and
lists them in vdnn/summary.csv. This plays the same scenario files with `tessera run --backend
sim` on a machine description (--cluster, e.g. the campaign's this_machine.yaml) and, where given,
that GPU's profiles, and writes OUTPUT/table.csv and OUTPUT/table.md: per run, measured and
simulated status, step, slowdown against the same model uncapped without offloading (the paper's
"oracular GPU"), peak and average device memory, and the bytes offloaded per step.

    analysis/vdnn_gpu_compare.py analysis/measured/h200-2026-11-27/vdnn \
        --cluster scenarios/profiles/h200/this_machine.yaml --output results/vdnn-gpu

Exit codes: 0 ok, 1 a simulation failed, 2 bad input.
"""
import argparse
import csv
import json
import os
import subprocess
import sys


def simulate(tessera, scenario, cluster, profiles, output):
    command = [tessera, "run", scenario, "--backend", "sim", "--output", output, "--fresh",
               "--cluster", cluster]
    if profiles:
        command += ["--profiles", *profiles]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        raise RuntimeError(f"{scenario}: tessera run exited {run.returncode}")
    with open(os.path.join(output, "sim.json")) as handle:
        return json.load(handle)["points"][0]


def gib(value):
    return f"{float(value) / 2**30:.2f}"


def slowdown(step, oracle):
    if not oracle or float(step) <= 0:
        return ""
    return f"{100 * (float(step) / float(oracle) - 1):+.1f}%"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vdnn", help="the campaign's vdnn folder (summary.csv, scenarios/)")
    parser.add_argument("--cluster", required=True, help="machine description of the GPU")
    parser.add_argument("--profiles", nargs="*", default=[], help="profile databases of the GPU")
    parser.add_argument("--tessera", default="build/app/tessera")
    parser.add_argument("--output", default="results/vdnn-gpu")
    args = parser.parse_args()
    summary = os.path.join(args.vdnn, "summary.csv")
    if not os.path.isfile(summary) or not os.path.isfile(args.cluster):
        sys.stderr.write(f"vdnn_gpu_compare.py: expected {summary} and {args.cluster}\n")
        return 2
    with open(summary) as handle:
        measured = list(csv.DictReader(handle))
    os.makedirs(args.output, exist_ok=True)
    rows = []
    try:
        for run in measured:
            scenario = os.path.join(args.vdnn, "scenarios", run["run"] + ".yaml")
            point = simulate(args.tessera, scenario, args.cluster, args.profiles,
                             os.path.join(args.output, run["run"]))
            rows.append((run, point))
    except RuntimeError as error:
        sys.stderr.write(f"vdnn_gpu_compare.py: {error}\n")
        return 1
    # The oracle of each model: uncapped, no offloading.
    oracle = {run["model"]: (run["step_s"], point["step_s"]) for run, point in rows
              if run["offload"] == "none" and run["cap_gib"] == "0"}
    columns = ["run", "cap GiB", "status (measured / sim)", "step s (measured / sim)",
               "slower than oracle (measured / sim)", "peak GiB (measured / sim)",
               "average GiB (measured / sim)", "offloaded GiB (measured / sim)"]
    table = []
    for run, point in rows:
        measured_oracle, simulated_oracle = oracle.get(run["model"], ("", ""))
        table.append([
            run["run"], run["cap_gib"], f"{run['status']} / {point['status']}",
            f"{float(run['step_s']):.4f} / {point['step_s']:.4f}",
            f"{slowdown(run['step_s'], measured_oracle)} / "
            f"{slowdown(point['step_s'], simulated_oracle)}",
            f"{gib(run['peak_memory_bytes'])} / {gib(point['peak_memory_bytes'])}",
            f"{gib(run['average_memory_bytes'])} / {gib(point['average_memory_bytes'])}",
            f"{gib(run['offloaded_bytes'] or 0)} / {gib(point['offloaded_bytes'])}"])
    with open(os.path.join(args.output, "table.csv"), "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(table)
    with open(os.path.join(args.output, "table.md"), "w") as handle:
        handle.write("| " + " | ".join(columns) + " |\n")
        handle.write("|" + "---|" * len(columns) + "\n")
        for row in table:
            handle.write("| " + " | ".join(row) + " |\n")
    with open(os.path.join(args.output, "table.md")) as handle:
        sys.stdout.write(handle.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
