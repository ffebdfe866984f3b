"""compare.py's figure, comparison.png and .svg: predicted against measured throughput, and
scaling efficiency per cluster. matplotlib is imported only here, and only when drawing, so that
--scenarios-only and the tests run without it.
"""

import os


def plot(rows, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in rows if r["predicted_samples_per_s"] is not None
            and r["measured_samples_per_s"]]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.5))
    if done:
        values = [r["measured_samples_per_s"] for r in done] + \
                 [r["predicted_samples_per_s"] for r in done]
        lo, hi = min(values) / 1.5, max(values) * 1.5
        ax1.plot([lo, hi], [lo, hi], color="gray", linestyle="--", label="y = x")
        for band in (0.85, 1.15):
            ax1.plot([lo, hi], [lo * band, hi * band], color="lightgray", linestyle=":")
        for i, r in enumerate(sorted(done, key=lambda r: r["measured_samples_per_s"])):
            ax1.scatter(r["measured_samples_per_s"], r["predicted_samples_per_s"], s=40)
            ax1.annotate(f"{r['org'] or r['system']} {r['gpus']} ({r['error_pct']:+.0f}%)",
                         (r["measured_samples_per_s"], r["predicted_samples_per_s"]),
                         fontsize=7, xytext=(5, -11 if i % 2 else 5), textcoords="offset points")
        ax1.set_xscale("log")
        ax1.set_yscale("log")
        ax1.set_xlim(lo, hi)
        ax1.set_ylim(lo, hi)
    ax1.set_xlabel("measured samples/s (MLPerf logs)")
    ax1.set_ylabel("predicted samples/s (Tessera, steady state)")
    ax1.set_title("Training throughput (dotted: +/-15%)")
    ax1.legend(loc="upper left")

    clusters = sorted({r["cluster"] for r in done})
    for i, cluster in enumerate(clusters):
        group = sorted([r for r in done if r["cluster"] == cluster
                        and r["measured_scaling_efficiency"] is not None],
                       key=lambda r: r["gpus"])
        if len(group) < 2:
            continue
        color = f"C{i}"
        gpus = [r["gpus"] for r in group]
        ax2.plot(gpus, [r["measured_scaling_efficiency"] for r in group], "o-", color=color,
                 label=f"{cluster} measured")
        ax2.plot(gpus, [r["predicted_scaling_efficiency"] for r in group], "s--", color=color,
                 label=f"{cluster} predicted")
    ax2.set_xscale("log", base=2)
    ax2.set_xlabel("GPUs")
    ax2.set_ylabel("throughput per GPU / that of the cluster's smallest run")
    ax2.set_title("Scaling efficiency per cluster")
    ax2.axhline(1.0, color="gray", linewidth=0.5)
    if ax2.get_legend_handles_labels()[0]:
        ax2.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, "comparison." + ext), dpi=120)
    plt.close(fig)
