"""What every figure of plot_scaling.py shares, so they look alike: the backends' colours, the
log2 GPU axis, the red marking of points that are not ok, the grid, and the legend and saving
(PNG and a reproducible SVG). time_to_train_plot.py draws with them too.
"""

import math
import os
import re

from scaling_results import STATUSES

BACKEND_STYLE = {  # colour, marker, legend name
    "real": ("tab:blue", "o", "measured (real)"),
    "sim": ("tab:orange", "s", "simulated (sim)"),
}
NOT_OK_COLOR = "tab:red"


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
