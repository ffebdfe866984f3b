#!/usr/bin/python3
"""Plot scaling results written by Tessera (schema: analysis/RESULT_SCHEMA.md).

    plot_scaling.py RESULTS.csv [RESULTS2.csv ...] --out DIR [--scaling strong|weak|auto]

For every (scenario, backend) in the inputs it writes, as PNG and SVG, into DIR:

    <scenario>_<backend>_step_time     step time vs GPUs (log2 x) with the ideal-scaling line
    <scenario>_<backend>_efficiency    parallel efficiency vs GPUs
    <scenario>_<backend>_breakdown     stacked per-point breakdown of the step time (s)
    <scenario>_<backend>_throughput    samples/s vs GPUs with the ideal (linear) line
    <scenario>_<backend>_time_to_train time to train (h) and epochs to the target vs GPUs, when
                                       the results carry it (a scenario with a training target);
                                       points whose batch lies outside the steps-to-target table
                                       (note: "time to train extrapolated") hollow

and, for a scenario present with both backends `real` and `sim`,

    <scenario>_real_vs_sim_step_time   measured and simulated step time overlaid

Points whose status is not `ok` (does_not_fit, skipped, failed) are drawn in red (crossed
markers, hatched bars) and named in the legend. A plain-text summary table per scenario/backend
goes to stdout.

Efficiency is relative to the smallest GPU count g0 with status ok:
    weak:   t(g0) / t(g)
    strong: t(g0) * g0 / (t(g) * g)
    auto:   weak when global_batch / gpus is the same at every point, strong otherwise.

Exit codes: 0 ok, 1 runtime failure, 2 bad input (missing file, wrong columns, bad values).
Needs Debian's python3-matplotlib and python3-pandas; run it with /usr/bin/python3.
"""

import argparse
import csv
import math
import os
import re
import sys

import time_to_train_plot

EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2

SCHEMA_COLUMNS = [
    "scenario", "point", "backend", "gpus", "data", "spatial_grid", "model_degree",
    "mini_batch", "global_batch", "status", "step_s", "samples_per_s", "first_epoch_step_s",
    "input_source", "compute_s", "halo_s",
    "allreduce_s", "other_comm_s", "io_s", "offload_s", "idle_s", "peak_memory_bytes",
    "average_memory_bytes", "offloaded_bytes", "device_capacity_bytes", "fits", "time_provenance",
    "compute_provenance", "memory_provenance", "epochs", "steps_to_target", "time_to_train_s",
    "note",
]

# Optional (results written before time to train existed lack them): 0 = no target.
TIME_TO_TRAIN_COLUMNS = ["epochs", "steps_to_target", "time_to_train_s"]
EXTRAPOLATED = "time to train extrapolated"

# (column, legend label) in stacking order, bottom first.
BREAKDOWN = [
    ("compute_s", "compute"),
    ("halo_s", "halo exchange"),
    ("allreduce_s", "gradient all-reduce"),
    ("other_comm_s", "other communication"),
    ("io_s", "I/O stall"),
    ("offload_s", "offload stall"),
    ("idle_s", "idle"),
]

INTEGER_COLUMNS = ["point", "gpus", "global_batch"]
NUMBER_COLUMNS = ["step_s", "samples_per_s"] + [column for column, _ in BREAKDOWN]
REQUIRED_COLUMNS = ["scenario", "backend", "status", "fits"] + INTEGER_COLUMNS + NUMBER_COLUMNS
STATUSES = ("ok", "does_not_fit", "skipped", "failed")

BACKEND_STYLE = {  # colour, marker, legend name
    "real": ("tab:blue", "o", "measured (real)"),
    "sim": ("tab:orange", "s", "simulated (sim)"),
}
NOT_OK_COLOR = "tab:red"


class BadInput(Exception):
    """Bad input: the message names the file (and line) and what is wrong."""


class RuntimeFailure(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Reading


def read_results(path):
    """Read one results CSV into a list of row dicts, validating what the plots need."""
    if not os.path.exists(path):
        raise BadInput(f"{path}: no such file")
    if os.path.isdir(path):
        raise BadInput(f"{path}: is a directory, expected a results CSV")
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            reader = csv.reader(stream, strict=True)
            records = []
            line = 1
            for fields in reader:
                if fields and not (len(fields) == 1 and fields[0] == ""):
                    records.append((line, fields))
                line = reader.line_num + 1
    except PermissionError:
        raise BadInput(f"{path}: permission denied") from None
    except UnicodeDecodeError as error:
        raise BadInput(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except csv.Error as error:
        raise BadInput(f"{path}:{line}: malformed CSV ({error})") from None
    except OSError as error:
        raise BadInput(f"{path}: cannot read ({error.strerror})") from None

    if not records:
        raise BadInput(f"{path}: empty file, expected the results header of "
                       "analysis/RESULT_SCHEMA.md")
    header = [name.strip() for name in records[0][1]]
    missing = [column for column in SCHEMA_COLUMNS
               if column in REQUIRED_COLUMNS and column not in header]
    if missing:
        raise BadInput(f"{path}:1: missing column(s) {', '.join(missing)} "
                       "(expected the results header of analysis/RESULT_SCHEMA.md)")
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if duplicated:
        raise BadInput(f"{path}:1: duplicated column(s) {', '.join(duplicated)}")
    if len(records) == 1:
        raise BadInput(f"{path}: no result rows after the header")

    rows = []
    for line, fields in records[1:]:
        where = f"{path}:{line}"
        if len(fields) != len(header):
            raise BadInput(f"{where}: expected {len(header)} fields, got {len(fields)}")
        raw = dict(zip(header, fields))
        row = {"file": path, "line": line, "scenario": raw["scenario"],
               "backend": raw["backend"]}
        if not row["scenario"]:
            raise BadInput(f"{where}: scenario: empty")
        if not row["backend"]:
            raise BadInput(f"{where}: backend: empty")
        for column in INTEGER_COLUMNS:
            try:
                row[column] = int(raw[column])
            except ValueError:
                raise BadInput(f"{where}: {column}: expected an integer, "
                               f"got '{raw[column]}'") from None
        if row["gpus"] < 1:
            raise BadInput(f"{where}: gpus: expected at least 1, got {row['gpus']}")
        for column in NUMBER_COLUMNS:
            try:
                row[column] = float(raw[column])
            except ValueError:
                raise BadInput(f"{where}: {column}: expected a number (seconds or 1/s), "
                               f"got '{raw[column]}'") from None
        # Optional (older results lack it): the first epoch's step where a data store serves the
        # later ones; step_s is then the steady state.
        try:
            row["first_epoch_step_s"] = float(raw.get("first_epoch_step_s", raw["step_s"]))
        except ValueError:
            raise BadInput(f"{where}: first_epoch_step_s: expected a number (seconds), "
                           f"got '{raw['first_epoch_step_s']}'") from None
        for column in TIME_TO_TRAIN_COLUMNS:
            try:
                row[column] = float(raw.get(column, "0"))
            except ValueError:
                raise BadInput(f"{where}: {column}: expected a number, "
                               f"got '{raw[column]}'") from None
        row["status"] = raw["status"]
        if row["status"] not in STATUSES:
            raise BadInput(f"{where}: status: expected one of {', '.join(STATUSES)}, "
                           f"got '{raw['status']}'")
        if raw["fits"] not in ("true", "false"):
            raise BadInput(f"{where}: fits: expected true or false, got '{raw['fits']}'")
        row["fits"] = raw["fits"]
        row["note"] = raw.get("note", "")
        row["extrapolated"] = EXTRAPOLATED in row["note"]
        rows.append(row)
    return rows


def has_time(row):
    return math.isfinite(row["step_s"]) and row["step_s"] > 0


def has_time_to_train(series):
    return bool((series["time_to_train_s"] > 0).any())


def load(paths):
    """All rows of all files as a DataFrame; a point given twice keeps the later file's row."""
    import pandas as pd

    rows = {}
    seen = set()
    for path in paths:
        if os.path.realpath(path) in seen:
            continue  # the same file named twice
        seen.add(os.path.realpath(path))
        for row in read_results(path):
            key = (row["scenario"], row["backend"], row["point"])
            if key in rows:
                print(f"warning: {path}:{row['line']}: point {row['point']} of "
                      f"'{row['scenario']}' ({row['backend']}) also in "
                      f"{rows[key]['file']}:{rows[key]['line']}; using {path}", file=sys.stderr)
            rows[key] = row
    frame = pd.DataFrame(list(rows.values()))
    frame["has_time"] = frame.apply(has_time, axis=1)
    return frame.sort_values(["scenario", "backend", "gpus", "point"]).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# Scaling analysis


def resolve_scaling(series, requested):
    """'weak' or 'strong' for a (scenario, backend) series."""
    if requested != "auto":
        return requested
    per_gpu = (series["global_batch"] / series["gpus"]).tolist()
    if all(math.isclose(value, per_gpu[0], rel_tol=1e-9) for value in per_gpu):
        return "weak"
    return "strong"


def baseline(series):
    """The row efficiency is relative to: smallest GPU count with status ok and a step time."""
    timed = series[series["has_time"]]
    ok = timed[timed["status"] == "ok"]
    chosen = ok if not ok.empty else timed
    if chosen.empty:
        return None
    return chosen.iloc[0]  # series is sorted by gpus, then point


def efficiency(series, scaling):
    """Efficiency (fraction) per row, NaN where the point has no step time."""
    base = baseline(series)

    def one(row):
        if base is None or not row["has_time"]:
            return float("nan")
        if scaling == "weak":
            return base["step_s"] / row["step_s"]
        return base["step_s"] * base["gpus"] / (row["step_s"] * row["gpus"])

    return series.apply(one, axis=1)


def ideal_step_time(base, gpus, scaling):
    if scaling == "weak":
        return [base["step_s"] for _ in gpus]
    return [base["step_s"] * base["gpus"] / g for g in gpus]


# ---------------------------------------------------------------------------------------------
# Plotting


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "scenario"


def gpu_axis(ax, gpus):
    """log2 x axis with a labelled tick at every GPU count in the data."""
    from matplotlib.ticker import FixedLocator, NullLocator, FuncFormatter

    values = sorted(set(int(g) for g in gpus))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(values))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{int(round(value)):,}"))
    ax.xaxis.set_minor_locator(NullLocator())
    if len(values) == 1:
        ax.set_xlim(values[0] / 2, values[0] * 2)
    else:
        ax.set_xlim(values[0] / 2 ** 0.35, values[-1] * 2 ** 0.35)
    if len(values) > 8:
        for label in ax.get_xticklabels():
            label.set_rotation(45)
    ax.set_xlabel("GPUs")


def maybe_log_y(ax, values, always=False):
    """Logarithmic y when asked or when the values span more than a factor of 8."""
    values = [v for v in values if v > 0 and math.isfinite(v)]
    if values and (always or max(values) / min(values) > 8):
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def not_ok_label(series):
    statuses = [s for s in STATUSES[1:] if s in set(series["status"])]
    return "status not ok: " + ", ".join(statuses)


def plot_metric(ax, series, column, color, marker, label):
    """Line through the timed points; non-ok points get a red cross over the marker."""
    timed = series[series["has_time"]]
    ax.plot(timed["gpus"], timed[column], color=color, marker=marker, markersize=6,
            linewidth=1.8, label=label, zorder=3)
    bad = timed[timed["status"] != "ok"]
    if not bad.empty:
        ax.plot(bad["gpus"], bad[column], linestyle="none", marker="X", markersize=11,
                color=NOT_OK_COLOR, markeredgecolor="white", markeredgewidth=0.8, zorder=4,
                label=not_ok_label(bad))
    untimed = series[~series["has_time"]]
    if not untimed.empty:  # skipped/failed without a time: a red mark on the x axis
        ax.plot(untimed["gpus"], [0.02] * len(untimed), linestyle="none", marker="v",
                markersize=9, color=NOT_OK_COLOR, clip_on=False, zorder=4,
                transform=ax.get_xaxis_transform(), label="no step time (skipped/failed)")


def finish(fig, ax, out_dir, stem, written, legend_outside=False, handles=None):
    """Grid, legend, save as PNG and SVG, close."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    else:
        handles, labels = zip(*handles) if handles else ((), ())
    options = dict(fontsize=8)
    if legend_outside:
        options.update(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    else:
        options.update(loc="best", framealpha=0.9)
    ax.legend(handles, labels, **options)
    fig.tight_layout()
    for extension in ("png", "svg"):
        path = os.path.join(out_dir, f"{stem}.{extension}")
        if extension == "png":
            fig.savefig(path, dpi=150)
        else:
            fig.savefig(path, metadata={"Date": None})  # reproducible SVG
        written.append(path)
    import matplotlib.pyplot as plt
    plt.close(fig)


def grid(ax, axis="both"):
    ax.grid(True, axis=axis, which="major", linestyle=":", linewidth=0.7, alpha=0.8)


def plot_series(series, scenario, backend, scaling, out_dir, written):
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    stem = f"{safe_name(scenario)}_{safe_name(backend)}"
    color, marker, name = BACKEND_STYLE.get(backend, ("tab:green", "D", backend))
    base = baseline(series)
    gpus = sorted(set(series["gpus"]))
    title_suffix = f"{name}, {scaling} scaling"

    # (1) step time
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    # With a data store the first epoch (reading the file system) differs from steady state.
    timed = series[series["has_time"]]
    epochs_differ = any(not math.isclose(first, step, rel_tol=1e-9)
                        for first, step in zip(timed["first_epoch_step_s"], timed["step_s"]))
    steady = " (steady state)" if epochs_differ else ""
    plot_metric(ax, series, "step_s", color, marker, f"step time{steady}, {name}")
    if epochs_differ:
        ax.plot(timed["gpus"], timed["first_epoch_step_s"], color=color, linestyle=":",
                marker=marker, markerfacecolor="none", label="first epoch (reads the file system)",
                zorder=3)
    if base is not None:
        ax.plot(gpus, ideal_step_time(base, gpus, scaling), color="0.4", linestyle="--",
                linewidth=1.2, label=f"ideal {scaling} scaling", zorder=2)
    gpu_axis(ax, series["gpus"])
    maybe_log_y(ax, series.loc[series["has_time"], "step_s"].tolist(),
                always=scaling == "strong")
    ax.set_ylabel("step time (s)")
    ax.set_title(f"{scenario}: step time{steady}\n{title_suffix}")
    grid(ax)
    finish(fig, ax, out_dir, f"{stem}_step_time", written)

    # (2) efficiency
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    eff = series.assign(efficiency_pct=efficiency(series, scaling) * 100.0)
    plot_metric(ax, eff, "efficiency_pct", color, marker, f"{scaling}-scaling efficiency")
    ax.axhline(100.0, color="0.4", linestyle="--", linewidth=1.2, label="ideal (100 %)")
    gpu_axis(ax, series["gpus"])
    top = max([110.0] + [v * 1.08 for v in eff["efficiency_pct"] if math.isfinite(v)])
    ax.set_ylim(0, top)
    ax.set_ylabel("parallel efficiency (%)")
    ax.set_title(f"{scenario}: parallel efficiency\n{title_suffix}")
    grid(ax)
    finish(fig, ax, out_dir, f"{stem}_efficiency", written)

    # (3) breakdown, one stacked bar per sweep point
    width = max(7.5, 1.0 + 0.6 * len(series))
    fig, ax = plt.subplots(figsize=(width + 2.2, 4.8))
    positions = list(range(len(series)))
    bad = (series["status"] != "ok").tolist()
    bottom = [0.0] * len(series)
    colors = plt.get_cmap("tab10").colors
    for index, (column, label) in enumerate(BREAKDOWN):
        values = [v if math.isfinite(v) else 0.0 for v in series[column]]
        bars = ax.bar(positions, values, bottom=bottom, width=0.7, label=label,
                      color=colors[index], edgecolor="white", linewidth=0.5)
        for bar, is_bad in zip(bars, bad):
            if is_bad:
                bar.set_hatch("///")
                bar.set_edgecolor(NOT_OK_COLOR)
        bottom = [b + v for b, v in zip(bottom, values)]
    tallest = max(bottom) if bottom and max(bottom) > 0 else 1.0
    for position, total, (_, row) in zip(positions, bottom, series.iterrows()):
        if row["status"] != "ok":
            ax.text(position, total + 0.02 * tallest, row["status"], ha="center", va="bottom",
                    fontsize=7, color=NOT_OK_COLOR, rotation=90 if len(series) > 6 else 0)
    ax.set_ylim(0, tallest * (1.3 if any(bad) else 1.08))
    ax.set_xticks(positions)
    ax.set_xticklabels([f"{row.gpus:,}\np{row.point}" for row in series.itertuples()],
                       fontsize=8)
    ax.set_xlabel("GPUs (sweep point)")
    ax.set_ylabel("time per step (s)")
    ax.set_title(f"{scenario}: step-time breakdown\n{name}")
    handles = list(zip(*ax.get_legend_handles_labels()))
    handles.reverse()  # legend top-down in the same order as the stack
    if any(bad):
        handles.append((Patch(facecolor="white", edgecolor=NOT_OK_COLOR, hatch="///"),
                        not_ok_label(series)))
    grid(ax, axis="y")
    finish(fig, ax, out_dir, f"{stem}_breakdown", written, legend_outside=True, handles=handles)

    # (4) throughput
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    plot_metric(ax, series, "samples_per_s", color, marker, f"throughput, {name}")
    if base is not None and base["samples_per_s"] > 0:
        ax.plot(gpus, [base["samples_per_s"] * g / base["gpus"] for g in gpus], color="0.4",
                linestyle="--", linewidth=1.2, label="ideal (linear in GPUs)", zorder=2)
    gpu_axis(ax, series["gpus"])
    maybe_log_y(ax, series.loc[series["has_time"], "samples_per_s"].tolist(),
                always=scaling == "strong")
    ax.set_ylabel("throughput (samples/s)")
    ax.set_title(f"{scenario}: throughput\n{title_suffix}")
    grid(ax)
    finish(fig, ax, out_dir, f"{stem}_throughput", written)


def plot_overlay(real, sim, scenario, scaling, out_dir, written):
    """Measured and simulated step time of one scenario on one axis."""
    import matplotlib.pyplot as plt
    import pandas as pd

    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for series, backend in ((real, "real"), (sim, "sim")):
        color, marker, name = BACKEND_STYLE[backend]
        plot_metric(ax, series, "step_s", color, marker, name)
    base = baseline(real)
    gpus = sorted(set(real["gpus"]) | set(sim["gpus"]))
    if base is not None:
        ax.plot(gpus, ideal_step_time(base, gpus, scaling), color="0.4", linestyle="--",
                linewidth=1.2, label=f"ideal {scaling} scaling (from measured)", zorder=2)
    gpu_axis(ax, gpus)
    times = (real.loc[real["has_time"], "step_s"].tolist()
             + sim.loc[sim["has_time"], "step_s"].tolist())
    maybe_log_y(ax, times, always=scaling == "strong")
    ax.set_ylabel("step time (s)")
    ax.set_title(f"{scenario}: step time\nmeasured vs simulated, {scaling} scaling")
    # Legend: one "status not ok" entry even when both series have such points.
    both_bad = pd.concat([real, sim])
    both_bad = both_bad[both_bad["has_time"] & (both_bad["status"] != "ok")]
    unique = {}
    for handle, label in zip(*ax.get_legend_handles_labels()):
        if label.startswith("status not ok"):
            label = not_ok_label(both_bad)
        unique.setdefault(label, (handle, label))
    grid(ax)
    finish(fig, ax, out_dir, f"{safe_name(scenario)}_real_vs_sim_step_time", written,
           handles=list(unique.values()))


# ---------------------------------------------------------------------------------------------
# Summary table


def fmt(value, spec):
    return format(value, spec) if math.isfinite(value) else "-"


def print_table(series, scenario, backend, scaling, requested):
    base = baseline(series)
    how = "auto" if requested == "auto" else "--scaling"
    basis = "no baseline (no point has a step time)" if base is None else (
        f"baseline {base['gpus']} GPUs (point {base['point']})")
    timed = series[series["has_time"]]
    if any(not math.isclose(first, step, rel_tol=1e-9)
           for first, step in zip(timed["first_epoch_step_s"], timed["step_s"])):
        basis += "; steps are steady state, first-epoch steps (file-system reads) beside them"
        first_epoch = True
    else:
        first_epoch = False
    print(f"== {scenario} / {backend}: {scaling} scaling ({how}), {basis}")
    eff = efficiency(series, scaling) * 100.0
    trains = has_time_to_train(series)
    header = f"{'point':>5}  {'GPUs':>6}  {'step s':>12}  " + \
        (f"{'1st epoch s':>12}  " if first_epoch else "") + \
        (f"{'epochs':>8}  {'train h':>10}  " if trains else "") + \
        f"{'samples/s':>12}  {'efficiency %':>12}  {'fits':>5}  status"
    print(header)
    for (_, row), value in zip(series.iterrows(), eff):
        step = fmt(row["step_s"], ".6g") if row["has_time"] else "-"
        first = fmt(row["first_epoch_step_s"], ".6g") if row["has_time"] else "-"
        rate = fmt(row["samples_per_s"], ".6g") if row["has_time"] else "-"
        train = fmt(row["time_to_train_s"] / 3600.0, ".4g") if row["time_to_train_s"] > 0 else "-"
        if row["extrapolated"]:
            train += "*"
        print(f"{row['point']:>5}  {row['gpus']:>6}  {step:>12}  "
              + (f"{first:>12}  " if first_epoch else "")
              + (f"{fmt(row['epochs'], '.4g'):>8}  {train:>10}  " if trains else "")
              + f"{rate:>12}  {fmt(value, '.1f'):>12}  {row['fits']:>5}  {row['status']}")
    if trains and series["extrapolated"].any():
        print("* batch outside the steps-to-target table: extrapolated")
    print()


# ---------------------------------------------------------------------------------------------


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        prog="plot_scaling.py",
        description="Plot step time, parallel efficiency, step-time breakdown and throughput "
                    "from Tessera results CSVs (analysis/RESULT_SCHEMA.md).")
    parser.add_argument("results", nargs="+", metavar="RESULTS.csv",
                        help="results.csv files (sim and/or real backend)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder for the PNG and SVG files (created if missing)")
    parser.add_argument("--scaling", choices=("strong", "weak", "auto"), default="auto",
                        help="efficiency definition: weak t(g0)/t(g), strong "
                             "t(g0)*g0/(t(g)*g); auto: weak when global_batch grows in "
                             "proportion to gpus, else strong (default: auto)")
    return parser.parse_args(argv)


def run(arguments):
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "tessera"  # reproducible SVG ids
        import importlib
        for module in ("matplotlib.pyplot", "pandas"):
            importlib.import_module(module)
    except ImportError as error:
        raise RuntimeFailure(f"{error}; needs Debian's python3-matplotlib and python3-pandas "
                             "(run with /usr/bin/python3)") from None

    frame = load(arguments.results)

    out_dir = arguments.out
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise BadInput(f"{out_dir}: --out exists and is not a directory")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        raise BadInput(f"{out_dir}: cannot create the --out directory ({error.strerror})") \
            from None

    written = []
    for scenario in frame["scenario"].unique():
        of_scenario = frame[frame["scenario"] == scenario]
        scalings = {}
        for backend in of_scenario["backend"].unique():
            series = of_scenario[of_scenario["backend"] == backend].reset_index(drop=True)
            scaling = resolve_scaling(series, arguments.scaling)
            scalings[backend] = scaling
            print_table(series, scenario, backend, scaling, arguments.scaling)
            plot_series(series, scenario, backend, scaling, out_dir, written)
            if has_time_to_train(series):
                # Its axis and legend helpers are this module's.
                time_to_train_plot.plot(series, scenario, backend, out_dir, written,
                                        sys.modules[__name__])
        if "real" in scalings and "sim" in scalings:
            real = of_scenario[of_scenario["backend"] == "real"].reset_index(drop=True)
            sim = of_scenario[of_scenario["backend"] == "sim"].reset_index(drop=True)
            plot_overlay(real, sim, scenario, scalings["real"], out_dir, written)
    print(f"wrote {len(written)} files to {out_dir}")


def main(argv=None):
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        run(arguments)
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RuntimeFailure as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # no tracebacks for users; say what failed
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_RUNTIME
    return 0


if __name__ == "__main__":
    sys.exit(main())
