"""compare.py's inputs: the measured CSV (mlperf_extract.py's) and the systems mapping file.

Whatever is wrong with either is BadInput naming the file (and line), so that compare.py exits 2
with one line instead of a traceback half-way through a round's simulations.
"""

import csv
import math
import os
import re

STORES = ("none", "memory", "node_local", "page_cache")

MEASURED_COLUMNS = ("system", "gpus", "nodes", "global_batch", "per_gpu_batch",
                    "throughput_samples_per_s")


class BadInput(Exception):
    pass


def read_csv_rows(path):
    """The rows of a CSV file as dictionaries; BadInput naming the file if it cannot be read."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")


def read_measured(path):
    rows = read_csv_rows(path)
    if not rows:
        raise BadInput(f"{path}: no rows")
    missing = [c for c in MEASURED_COLUMNS if c not in rows[0]]
    if missing:
        raise BadInput(f"{path}: missing column(s) {', '.join(missing)}")
    return rows


def read_systems(path):
    rows = read_csv_rows(path)
    base = os.path.dirname(os.path.abspath(path))
    systems = []
    for line, row in enumerate(rows, start=2):
        for key in ("match", "cluster", "store"):
            if not (row.get(key) or "").strip():
                raise BadInput(f"{path}:{line}: {key}: empty")
        if row["store"] not in STORES:
            raise BadInput(f"{path}:{line}: store: expected one of {', '.join(STORES)}, "
                           f"got {row['store']!r}")
        try:
            pattern = re.compile(row["match"])
        except re.error as e:
            raise BadInput(f"{path}:{line}: match: {e}")
        systems.append({"pattern": pattern, "match": row["match"],
                        "cluster": os.path.normpath(os.path.join(base, row["cluster"])),
                        "store": row["store"], "why": row.get("why", "")})
    return systems


def map_system(systems, system):
    for entry in systems:
        if entry["pattern"].search(system):
            return entry
    return None


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def whole(text):
    value = number(text)
    return int(value) if value is not None and value == int(value) and value > 0 else None
