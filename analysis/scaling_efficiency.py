"""Parallel efficiency of a (scenario, backend) series for plot_scaling.py: which scaling (weak or
strong) a series is, the point it is relative to, and the ideal line the figures draw. The
definitions are in plot_scaling.py's docstring and analysis/README.md.
"""

import math


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
