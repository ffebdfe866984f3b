"""compare.py's written results: comparison.csv (every column, for other tools) and
comparison.md (the tables and MAPE a reader looks at).
"""

import csv

from compare_inputs import number
from compare_rows import COLUMNS


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
    traced = [r for r in rows if r.get("top_operations")]
    if traced:
        lines += ["Where one GPU's simulated step goes (its three longest operations, summed over "
                  "the step, with where their times came from; compute, communication and input "
                  "reads overlap, so the shares can add up past 100%):", "",
                  "| system | error % | step s | operations |", "|---|---|---|---|"]
        for r in traced:
            lines.append(f"| {r['system']} | {fmt(r['error_pct'], 1)} | "
                         f"{fmt(number(r['step_s']), 4)} | {r['top_operations']} |")
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
