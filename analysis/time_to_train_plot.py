"""The time-to-train figure of plot_scaling.py: time to train and epochs to the target against
GPUs, for results that carry them (analysis/RESULT_SCHEMA.md: epochs, steps_to_target,
time_to_train_s). `base` is scaling_axes, whose axis, legend and file helpers it uses, as the
other figures do.
"""


def plot(series, scenario, backend, out_dir, written, base):
    """Time to train (h, log) and epochs to the target (right axis) against GPUs."""
    import matplotlib.pyplot as plt

    color, marker, name = base.BACKEND_STYLE.get(backend, ("tab:green", "D", backend))
    stem = f"{base.safe_name(scenario)}_{base.safe_name(backend)}"
    trained = series[series["time_to_train_s"] > 0]
    hours = trained["time_to_train_s"] / 3600.0
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    ax.plot(trained["gpus"], hours, color=color, marker=marker, markersize=6, linewidth=1.8,
            label=f"time to train, {name}", zorder=3)
    outside = trained[trained["extrapolated"]]
    if not outside.empty:
        ax.plot(outside["gpus"], outside["time_to_train_s"] / 3600.0, linestyle="none",
                marker=marker, markersize=10, markerfacecolor="white", markeredgecolor=color,
                zorder=4, label="batch outside the steps-to-target table (extrapolated)")
    base.gpu_axis(ax, series["gpus"])
    base.maybe_log_y(ax, hours.tolist(), always=True)
    ax.set_ylabel("time to train (h)")
    epochs_axis = ax.twinx()
    with_epochs = series[series["epochs"] > 0]
    epochs_axis.plot(with_epochs["gpus"], with_epochs["epochs"], color="0.45", linestyle="--",
                     marker=".", linewidth=1.2, label="epochs to the target (right axis)")
    epochs_axis.set_ylabel("epochs to the target")
    # Headroom above the epochs line for the legend.
    epochs_axis.set_ylim(0, max([1.0] + with_epochs["epochs"].tolist()) * 1.6)
    ax.set_title(f"{scenario}: time to train\n{name}, steps to the target x step time")
    base.grid(ax)
    handles = list(zip(*ax.get_legend_handles_labels()))
    handles += list(zip(*epochs_axis.get_legend_handles_labels()))
    base.finish(fig, ax, out_dir, f"{stem}_time_to_train", written, handles=handles)
