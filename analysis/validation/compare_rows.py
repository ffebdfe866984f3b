"""compare.py's comparison rows: one per measured row, measured beside predicted with the errors
and scaling efficiency, and the summary (MAPE, staging, scaling) the report prints from them.
"""

import os

from compare_arithmetic import error_pct, mape, points, scaling_efficiencies
from compare_inputs import number
from compare_simulation import prediction

COLUMNS = [
    "org", "system", "accelerator", "cluster", "store", "nodes", "gpus", "global_batch",
    "per_gpu_batch", "measured_samples_per_s", "predicted_samples_per_s", "error_pct",
    "measured_first_epoch_samples_per_s", "predicted_first_epoch_samples_per_s",
    "first_epoch_error_pct", "measured_staging_s", "predicted_staging_s", "staging_error_pct",
    "baseline_gpus", "measured_scaling_efficiency",
    "predicted_scaling_efficiency", "scaling_error_points", "step_s", "first_epoch_step_s",
    "compute_s", "halo_s", "allreduce_s", "other_comm_s", "io_s", "offload_s", "idle_s",
    "input_source", "top_operations", "scenario", "status", "why_not_predicted", "note",
]

BREAKDOWN = ["compute_s", "halo_s", "allreduce_s", "other_comm_s", "io_s", "offload_s", "idle_s"]


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
            for key in ["step_s", "first_epoch_step_s", "input_source", "top_operations"] + BREAKDOWN:
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
