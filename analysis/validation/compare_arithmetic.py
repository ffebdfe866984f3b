"""The arithmetic of compare.py's comparison: error %, MAPE and scaling efficiency.

Apart from files and processes so that tests/analysis/test_mlperf_compare.py checks it against
figures worked out by hand.
"""


def error_pct(predicted, measured):
    """100 (predicted - measured) / measured; None where either is missing or measured is 0."""
    if predicted is None or measured is None or measured == 0:
        return None
    return 100.0 * (predicted - measured) / measured


def mape(errors):
    """Mean of |error %| over the values that are not None; None when there are none."""
    values = [abs(e) for e in errors if e is not None]
    return sum(values) / len(values) if values else None


def scaling_efficiencies(rows, value_key, group_key="cluster", gpus_key="gpus"):
    """Per row: (throughput / gpus) over that of its group's row with the fewest GPUs.

    Rows whose value is None get None; a group's baseline is its smallest run that has a value
    (ties: the first such row). Returns a list parallel to rows of (efficiency, baseline_gpus).
    """
    baseline = {}
    for row in rows:
        value = row.get(value_key)
        if value is None:
            continue
        group = row[group_key]
        if group not in baseline or row[gpus_key] < baseline[group][gpus_key]:
            baseline[group] = row
    out = []
    for row in rows:
        value = row.get(value_key)
        base = baseline.get(row[group_key])
        if value is None or base is None:
            out.append((None, None))
            continue
        per_gpu = value / row[gpus_key]
        base_per_gpu = base[value_key] / base[gpus_key]
        out.append((per_gpu / base_per_gpu if base_per_gpu else None, base[gpus_key]))
    return out


def points(predicted, measured):
    """Difference of two efficiencies (fractions) in percentage points."""
    if predicted is None or measured is None:
        return None
    return 100.0 * (predicted - measured)
