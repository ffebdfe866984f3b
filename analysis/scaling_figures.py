"""The figures plot_scaling.py draws for every (scenario, backend) series, step time, efficiency,
breakdown and throughput, and the measured-against-simulated overlay of a scenario that has both.
"""

import math

from scaling_axes import (BACKEND_STYLE, NOT_OK_COLOR, finish, gpu_axis, grid, maybe_log_y,
                          not_ok_label, plot_metric, safe_name)
from scaling_efficiency import baseline, efficiency, ideal_step_time
from scaling_results import BREAKDOWN


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
