"""Running `tessera run --backend sim` for one planned row of compare.py, and reading its
prediction back: the one place the comparison depends on the C++ binary.
"""

import csv
import os
import subprocess
import sys

from compare_inputs import number
from compare_trace import describe, top_operations


def profile_of(plan, profiles_dir):
    """The kernel profile for a row's cluster: PROFILES_DIR/<cluster file name>.csv, if any."""
    if not profiles_dir:
        return None
    name = os.path.splitext(os.path.basename(plan["cluster"]))[0] + ".csv"
    path = os.path.join(profiles_dir, name)
    return path if os.path.isfile(path) else None


def simulate(plan, tessera, sim_root, fresh, profiles_dir=None):
    out = os.path.join(sim_root, plan["name"])
    trace = os.path.join(out, "trace.json")
    cmd = [tessera, "run", plan["scenario"], "--backend", "sim", "--output", out, "--trace", trace]
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
    row = rows[0]
    row["top_operations"] = describe(top_operations(trace), number(row.get("step_s")))
    return row


def prediction(sim_row, global_batch):
    """Predicted steady-state and first-epoch samples/s of one sim.csv row (None if not ok)."""
    if sim_row.get("status") != "ok":
        return None, None
    steady = number(sim_row.get("samples_per_s"))
    first_step = number(sim_row.get("first_epoch_step_s"))
    first = global_batch / first_step if first_step else None
    return steady, first
