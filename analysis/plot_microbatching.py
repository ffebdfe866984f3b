#!/usr/bin/python3
"""Plot a micro-batching study written by `tessera microbatch-study`.

    plot_microbatching.py STUDY_DIR [STUDY_DIR ...] [--out DIR]

STUDY_DIR holds the command's rows.csv (one row per kernel, workspace limit and policy). For
every study directory and workspace limit it writes, as PNG and SVG, into DIR (default: the study
directory; <study> is the study directory's name):

    <study>_speedup_<limit>MiB   per kernel (problem or layer, and direction) the predicted and the
                           measured speed-up of each policy over the best undivided algorithm
                           under the same limit (log scale; 1x dashed)

and prints per limit and policy the geometric mean and maximum of both speed-ups and the mean
absolute prediction error of the plan's time. Rows not compared (their note says why: policy
`all` above its batch cap, no plan, or the plan or the undivided baseline over the limit) are
counted as excluded and left out of the summaries and the plot.

Exit codes: 0 ok, 1 runtime failure, 2 bad input (missing file, wrong columns, bad values).
Needs Debian's python3-matplotlib; run it with /usr/bin/python3.
"""

import argparse
import csv
import math
import os
import sys

from script_exit import BadInput, exit_status

REQUIRED_COLUMNS = ["kernel", "direction", "workspace_limit_bytes", "policy", "limit_met",
                    "baseline_limit_met", "predicted_speedup", "measured_speedup",
                    "prediction_error_percent", "note"]
POLICY_STYLE = {  # colour of the predicted bar; measured is the same colour, hatched
    "undivided": "tab:gray",
    "power_of_two": "tab:blue",
    "all": "tab:orange",
}
DIRECTION_SHORT = {"forward": "F", "backward_data": "BD", "backward_filter": "BF"}
MIB = 1024.0 * 1024.0


def read_rows(study_dir):
    path = os.path.join(study_dir, "rows.csv")
    if not os.path.isfile(path):
        raise BadInput(f"{path}: no such file (run tessera microbatch-study --output {study_dir})")
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            records = list(csv.DictReader(handle))
            header = records[0].keys() if records else []
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise BadInput(f"{path}: cannot read ({error})") from None
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if not records:
        raise BadInput(f"{path}: no rows after the header")
    if missing:
        raise BadInput(f"{path}:1: missing column(s) {', '.join(missing)}")
    rows = []
    for line, record in enumerate(records, start=2):
        try:
            limit = float(record["workspace_limit_bytes"])
        except ValueError:
            raise BadInput(f"{path}:{line}: workspace_limit_bytes: expected a number, got "
                           f"'{record['workspace_limit_bytes']}'") from None
        row = {"kernel": record["kernel"], "direction": record["direction"],
               "limit_mib": limit / MIB, "policy": record["policy"], "note": record["note"]}
        within = record["limit_met"] == "true" and record["baseline_limit_met"] == "true"
        if record["predicted_speedup"] == "" or not within:
            row["measured"] = False
        else:
            try:
                row["predicted"] = float(record["predicted_speedup"])
                row["measured_speedup"] = float(record["measured_speedup"])
                row["error"] = float(record["prediction_error_percent"])
            except ValueError:
                raise BadInput(f"{path}:{line}: speed-ups: expected numbers") from None
            if row["predicted"] <= 0 or row["measured_speedup"] <= 0:
                raise BadInput(f"{path}:{line}: speed-ups: expected positive numbers")
            row["measured"] = True
        rows.append(row)
    return rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summary_lines(rows, limit):
    lines = [f"workspace limit {limit:g} MiB:",
             f"  {'policy':<13}{'kernels':>8}{'excluded':>9}{'geomean pred':>14}"
             f"{'geomean meas':>14}{'max pred':>10}{'max meas':>10}{'mean |err|':>12}"]
    for policy in POLICY_STYLE:
        group = [r for r in rows if r["limit_mib"] == limit and r["policy"] == policy]
        if not group:
            continue
        done = [r for r in group if r["measured"]]
        predicted = [r["predicted"] for r in done]
        measured = [r["measured_speedup"] for r in done]
        error = sum(abs(r["error"]) for r in done) / len(done) if done else float("nan")
        lines.append(f"  {policy:<13}{len(done):>8}{len(group) - len(done):>9}"
                     f"{geomean(predicted):>13.2f}x{geomean(measured):>13.2f}x"
                     f"{max(predicted, default=float('nan')):>9.2f}x"
                     f"{max(measured, default=float('nan')):>9.2f}x{error:>11.1f}%")
    return lines


def plot_limit(rows, limit, title, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    kernels = []
    for r in rows:
        key = (r["kernel"], r["direction"])
        if r["limit_mib"] == limit and key not in kernels:
            kernels.append(key)
    policies = [p for p in POLICY_STYLE if p != "undivided" and
                any(r["policy"] == p and r["limit_mib"] == limit for r in rows)]
    by_key = {(r["kernel"], r["direction"], r["policy"]): r for r in rows
              if r["limit_mib"] == limit}
    width = 0.8 / max(1, 2 * len(policies))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.32 * len(kernels) + 2), 4.2))
    for p_index, policy in enumerate(policies):
        for m_index, (field, label, hatch) in enumerate(
                [("predicted", "predicted", None), ("measured_speedup", "measured", "//")]):
            offset = (2 * p_index + m_index + 0.5) * width - 0.4
            xs, ys = [], []
            for k_index, (kernel, direction) in enumerate(kernels):
                row = by_key.get((kernel, direction, policy))
                if row and row["measured"]:
                    xs.append(k_index + offset)
                    ys.append(row[field])
            ax.bar(xs, ys, width, color=POLICY_STYLE[policy], hatch=hatch,
                   alpha=0.55 if hatch else 0.95, edgecolor="black", linewidth=0.3,
                   label=f"{policy} {label}")
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    ax.set_yscale("log")
    labels = FuncFormatter(lambda value, _: f"{value:g}x")
    ax.yaxis.set_major_formatter(labels)
    ax.yaxis.set_minor_formatter(labels)
    ax.tick_params(axis="y", which="minor", labelsize=6)
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels([f"{k}:{DIRECTION_SHORT.get(d, d)}" for k, d in kernels], rotation=90,
                       fontsize=7)
    ax.set_ylabel("speed-up over best undivided (x)")
    ax.set_title(f"{title}: workspace limit {limit:g} MiB")
    ax.legend(fontsize=7, ncol=2, loc="best")
    fig.tight_layout()
    written = []
    for extension in ("png", "svg"):
        path = os.path.join(out_dir, f"{title}_speedup_{limit:g}MiB.{extension}")
        fig.savefig(path, dpi=150)
        written.append(path)
    plt.close(fig)
    return written


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("studies", nargs="+", help="directories written by tessera microbatch-study")
    parser.add_argument("--out", help="directory for the plots (default: each study directory)")
    args = parser.parse_args(argv)
    def plot():
        for study_dir in args.studies:
            rows = read_rows(study_dir)
            out_dir = args.out or study_dir
            os.makedirs(out_dir, exist_ok=True)
            title = os.path.basename(os.path.normpath(study_dir))
            limits = sorted({r["limit_mib"] for r in rows})
            print(f"{study_dir}:")
            for limit in limits:
                print("\n".join(summary_lines(rows, limit)))
                for path in plot_limit(rows, limit, title, out_dir):
                    print(f"  wrote {path}")

    return exit_status(plot)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
