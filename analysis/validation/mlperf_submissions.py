"""The submissions of a results tree (<org>/results/<system>/<benchmark>/result_*.txt), one CSV
row each: the runs' medians, the systems file's fields, and in the notes every gap in words.
"""

import csv
import os
import re
import statistics
import sys

from mlperf_bad_input import BadInput
from mlperf_log import MARKER, parse_log, summarize_run
from mlperf_system_json import accelerators, field_text, integer, load_system

COLUMNS = [
    "org", "system", "system_name", "division", "accelerator", "accelerators_per_node", "nodes",
    "gpus", "framework", "global_batch", "per_gpu_batch", "train_samples", "eval_samples", "runs",
    "epochs_median", "throughput_samples_per_s", "throughput_per_gpu",
    "first_epoch_samples_per_s", "epoch_train_s_median", "eval_s_median", "after_eval_s_median",
    "staging_s_median", "run_s_median", "commit", "systems_file", "result_files", "notes",
]


def natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def find_submissions(root, benchmark):
    """[(org, system, [result paths relative to root])] in a stable order."""
    found = []
    for org in sorted(os.listdir(root)):
        results = os.path.join(root, org, "results")
        if org.startswith(".") or not os.path.isdir(results):
            continue
        for system in sorted(os.listdir(results)):
            folder = os.path.join(results, system, benchmark)
            if not os.path.isdir(folder):
                continue
            files = sorted((name for name in os.listdir(folder)
                            if name.startswith("result_") and name.endswith(".txt")),
                           key=natural_key)
            found.append((org, system,
                          ["/".join([org, "results", system, benchmark, name]) for name in files]))
    return found


def _median(values):
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def summarize_submission(root, org, system, result_files, commit, lenient=False):
    """(row or None, message): None with the reason for a skipped submission."""
    systems_rel = f"{org}/systems/{system}.json"
    systems_path = os.path.join(root, *systems_rel.split("/"))
    notes = []
    if os.path.isfile(systems_path):
        info = load_system(systems_path, systems_rel)
    else:
        info = {}
        notes.append(f"no {systems_rel}: system fields empty")
        systems_rel = ""
    model, per_node, cpu_only = accelerators(info) if info else ("", None, None)
    if cpu_only:
        return None, f"{org}/{system}: skipped, CPU-only system ({cpu_only} in {systems_rel})"
    nodes = integer(info.get("number_of_nodes"))
    gpus = nodes * per_node if nodes is not None and per_node is not None else None
    if info and gpus is None:
        notes.append("number_of_nodes or accelerators_per_node missing or not a whole number: "
                     "gpus empty")

    runs, used = [], []
    for rel in result_files:
        events, skipped = parse_log(os.path.join(root, *rel.split("/")), rel, lenient)
        run = summarize_run(events)
        name = rel.rsplit("/", 1)[-1]
        if skipped:
            notes.append(f"{name}: {skipped} malformed {MARKER} lines skipped")
        for note in run["notes"]:
            notes.append(f"{name}: {note}")
        if run["first"] is None:
            why = "no train_samples" if run["train_samples"] is None else "no complete epoch"
            notes.append(f"{name}: {why}, run left out")
            continue
        runs.append(run)
        used.append(rel)
    if not result_files:
        notes.append("no result_*.txt files")

    batch = runs[0]["global_batch"] if runs else None
    samples = runs[0]["train_samples"] if runs else None
    if len({run["global_batch"] for run in runs}) > 1:
        notes.append("runs log different global_batch_size: the first run's taken")
    if len({run["train_samples"] for run in runs}) > 1:
        notes.append("runs log different train_samples: the first run's taken")
    if runs and batch is None:
        notes.append("no global_batch_size logged")
    per_gpu = None
    if batch is not None and gpus:
        per_gpu = batch / gpus
        if batch % gpus:
            notes.append(f"global batch {batch} does not divide over {gpus} GPUs")
    if samples is not None and batch and samples % batch:
        notes.append(f"train_samples {samples} is not a multiple of the global batch {batch}")
    logged_orgs = set().union(*(run["orgs"] for run in runs)) if runs else set()
    if logged_orgs and logged_orgs != {org}:
        notes.append(f"logs say submission_org {', '.join(sorted(logged_orgs))}, "
                     f"the folder says {org}")
    statuses = [status for run in runs for status in run["statuses"]]
    not_success = sum(1 for status in statuses if status != "success")
    if not_success:
        shown = sorted({str(status) for status in statuses if status != "success"})
        notes.append(f"{not_success} of {len(statuses)} run_stop without status success "
                     f"({', '.join(shown)})")
    without_stop = sum(1 for run in runs if not run["statuses"])
    if without_stop:
        notes.append(f"{without_stop} runs without run_stop")

    steady = _median([run["steady"] for run in runs])
    if runs and steady is None:
        notes.append("no run has a second complete epoch: throughput empty")
    later = [epoch for run in runs for epoch in run["epochs"][1:]]
    row = {
        "org": org, "system": system,
        "system_name": field_text(info.get("system_name")),
        "division": field_text(info.get("division")),
        "accelerator": model,
        "accelerators_per_node": _fmt(per_node),
        "nodes": _fmt(nodes), "gpus": _fmt(gpus),
        "framework": field_text(info.get("framework")),
        "global_batch": _fmt(batch),
        "per_gpu_batch": _fmt(per_gpu, 3),
        "train_samples": _fmt(samples),
        "eval_samples": _fmt(runs[0]["eval_samples"] if runs else None),
        "runs": str(len(runs)),
        "epochs_median": _fmt(_median([len(run["epochs"]) for run in runs]), 1),
        "throughput_samples_per_s": _fmt(steady, 2),
        "throughput_per_gpu": _fmt(steady / gpus if steady is not None and gpus else None, 3),
        "first_epoch_samples_per_s": _fmt(_median([run["first"] for run in runs]), 2),
        "epoch_train_s_median": _fmt(_median([e["train_ms"] / 1000 for e in later]), 2),
        "eval_s_median": _fmt(_median([e["eval_ms"] / 1000 for e in later]), 2),
        "after_eval_s_median": _fmt(_median([e["after_eval_ms"] / 1000 for e in later
                                             if e["after_eval_ms"] is not None]), 2),
        "staging_s_median": _fmt(_median([run["staging_s"] for run in runs]), 2),
        "run_s_median": _fmt(_median([run["run_s"] for run in runs]), 1),
        "commit": commit or "",
        "systems_file": systems_rel,
        "result_files": ";".join(used),
        "notes": "; ".join(notes),
    }
    return row, None


def _fmt(value, digits=None):
    if value is None:
        return ""
    if digits is None or float(value).is_integer():
        return str(int(value)) if float(value).is_integer() else str(value)
    return f"{value:.{digits}f}"


def extract(root, benchmark, commit, lenient=False, log=None):
    """The rows for every <benchmark> submission under root; skipped ones reported on log
    (default stderr)."""
    log = log or sys.stderr
    if not os.path.isdir(root):
        raise BadInput(f"{root}: no such folder")
    submissions = find_submissions(root, benchmark)
    if not submissions:
        raise BadInput(f"{root}: no <org>/results/<system>/{benchmark}/ folder")
    rows = []
    for org, system, files in submissions:
        row, skipped = summarize_submission(root, org, system, files, commit, lenient)
        if row is None:
            print(skipped, file=log)
        else:
            rows.append(row)
    return rows


def write_csv(rows, handle):
    writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
