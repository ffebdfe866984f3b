"""The results CSVs plot_scaling.py reads (analysis/RESULT_SCHEMA.md), checked before anything is
drawn: a bad file or value is BadInput naming the file and line (exit 2), never a figure made
of wrong numbers or a traceback from deep inside pandas.
"""

import csv
import math
import os
import sys

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


class BadInput(Exception):
    """Bad input: the message names the file (and line) and what is wrong."""


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
