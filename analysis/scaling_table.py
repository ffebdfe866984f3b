"""plot_scaling.py's plain-text summary on stdout, one block per (scenario, backend): the numbers
behind the figures, for a terminal, a log or a test to read.
"""

import math

from scaling_efficiency import baseline, efficiency
from scaling_results import has_time_to_train


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
