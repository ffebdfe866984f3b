#!/usr/bin/python3
"""Training throughput of published MLPerf HPC submissions, from their logs, as one CSV row each.

    mlperf_extract.py RESULTS_DIR [--commit SHA] [--benchmark cosmoflow] [--output CSV]
    mlperf_extract.py --git-dir GIT_DIR [--commit REV] [--output CSV]
    mlperf_extract.py --git-dir GIT_DIR [--commit REV] --export-to DIR   (export only)

Why: to hold Tessera's predictions against what others measured. MLPerf HPC results
repositories (mlcommons/hpc_results_vX.Y) keep every submission's logs; this turns them into
numbers a scenario can be compared with, with nothing but the logs and the systems files as input.

Input: a results repository's tree: <org>/results/<system>/<benchmark>/result_*.txt (one file per
run, MLPerf logging lines `:::MLLOG {json}`, other lines ignored) and <org>/systems/<system>.json.
RESULTS_DIR is a checkout or a plain copy of that tree. --git-dir reads a (bare) git repository
instead: the results and systems files of commit REV (default HEAD) are exported, with
`git ls-tree` and `git cat-file`, into a temporary folder (or DIR with --export-to), so large
files elsewhere in the repository, which a partial mirror may lack, are never needed.

What, per submission (one row per <org>/results/<system>/<benchmark>):
  - org and system: the folder names; system_name, division, accelerator, accelerators per node,
    nodes and framework from the systems json. gpus = number_of_nodes x accelerators_per_node.
    A system with no accelerators (accelerators_per_node 0 or missing, or an accelerator model
    that is empty or N/A) is CPU-only: it gets no row, and stderr says so.
  - global_batch (`global_batch_size`), train_samples (`train_samples`, the samples of one
    epoch), eval_samples (`eval_samples`, the validation set's), per_gpu_batch = global_batch / gpus (the logs of MLPerf HPC v0.7 carry no local batch).
    When the runs disagree, the first run's value is used and the notes say so.
  - runs: result files with at least one complete epoch.
  - Throughput, in samples/s. An epoch is the interval from `epoch_start` to the `epoch_stop`
    with the same metadata.epoch_num (paired in order where epoch_num is missing; where several
    ranks logged the same epoch, its earliest start and latest stop). An epoch without its stop
    (the run ended inside it) is left out. Evaluation inside an epoch interval is excluded: every
    `eval_start`..`eval_stop` interval (paired by epoch_num, else in order) is clipped to the
    epoch interval, the union of the clipped parts is subtracted from the epoch's duration, and
    whatever else lies in the interval (callbacks before the eval, the time between `eval_stop`
    and `epoch_stop`, e.g. metric averaging and checkpointing) stays in as training time. An eval
    logged outside its epoch interval subtracts nothing. The epoch's throughput is
    train_samples / (epoch duration - eval time inside it). A run's first epoch is its complete
    epoch that started first; throughput_samples_per_s is, per run, the median throughput of its
    other complete epochs, and then the median over runs; first_epoch_samples_per_s the median
    over runs of the first epoch's throughput. throughput_per_gpu = throughput / gpus.
  - epochs_median: complete epochs per run (median); epoch_train_s_median, eval_s_median: the
    median over all runs' non-first epochs of the training time and of the eval time inside the
    epoch; after_eval_s_median: the median over those epochs of the time from the last
    `eval_stop` inside the epoch to `epoch_stop` (counted as training time, see above);
    staging_s_median: `staging_start` to `staging_stop` (the event type is not checked: some
    logs mark `staging_stop` as INTERVAL_START); run_s_median: `run_start` to `run_stop`.
  - systems_file, result_files (relative to the repository root), commit (the repository's
    commit: --commit, else `git rev-parse HEAD` in RESULTS_DIR, else empty) and notes: every
    missing field, disagreement or skipped run, in words.

Every result is a median over runs, so one slow run or epoch moves it little; the medians of an
even count are the mean of the middle two.

A line holding `:::MLLOG` that does not parse as a JSON object with `key` and `time_ms` is an
error naming the file and line (exit 2); --lenient skips such lines, counts them in the notes.

Exit codes: 0 ok, 1 runtime failure (git), 2 bad input (no such folder, malformed log line or
systems file, no submission found).
"""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2
MARKER = ":::MLLOG"

COLUMNS = [
    "org", "system", "system_name", "division", "accelerator", "accelerators_per_node", "nodes",
    "gpus", "framework", "global_batch", "per_gpu_batch", "train_samples", "eval_samples", "runs",
    "epochs_median", "throughput_samples_per_s", "throughput_per_gpu",
    "first_epoch_samples_per_s", "epoch_train_s_median", "eval_s_median", "after_eval_s_median",
    "staging_s_median", "run_s_median", "commit", "systems_file", "result_files", "notes",
]


class BadInput(Exception):
    pass


class GitFailure(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Log parsing

def parse_log(path, display=None, lenient=False):
    """(events, skipped lines) of one result file; events are the parsed :::MLLOG objects in file
    order, each with its "line" number added. A malformed line raises BadInput naming the file
    and line, unless lenient, when it is counted and skipped."""
    display = display or path
    decoder = json.JSONDecoder()
    events, skipped = [], 0
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except OSError as error:
        raise BadInput(f"{display}: cannot read: {error.strerror}") from error
    with handle:
        for number, text in enumerate(handle, start=1):
            at = text.find(MARKER)
            if at < 0:
                continue
            payload = text[at + len(MARKER):].strip()
            problem = None
            try:
                event, _ = decoder.raw_decode(payload)
            except json.JSONDecodeError as error:
                problem = f"not JSON after {MARKER} ({error.msg} at column {error.colno})"
            else:
                if not isinstance(event, dict):
                    problem = f"not a JSON object after {MARKER}"
                elif "key" not in event or "time_ms" not in event:
                    problem = "JSON object without 'key' and 'time_ms'"
                elif not isinstance(event["time_ms"], (int, float)) or \
                        isinstance(event["time_ms"], bool):
                    problem = f"time_ms is not a number: {event['time_ms']!r}"
            if problem:
                if lenient:
                    skipped += 1
                    continue
                raise BadInput(f"{display}:{number}: malformed {MARKER} line: {problem}")
            if not isinstance(event.get("metadata"), dict):
                event["metadata"] = {}
            event["line"] = number
            events.append(event)
    return events, skipped


def _values(events, key):
    return [event.get("value") for event in events if event["key"] == key]


def _first_time(events, key):
    times = [event["time_ms"] for event in events if event["key"] == key]
    return min(times) if times else None


def _pair(events, start_key, stop_key):
    """[(start_ms, stop_ms, epoch_num or None, duplicated)] of intervals: by metadata.epoch_num
    where both ends have it, else start and stop in file order; stops without start are dropped,
    starts without stop give stop None."""
    numbered, ordered = {}, []
    for event in events:
        if event["key"] not in (start_key, stop_key):
            continue
        number = event["metadata"].get("epoch_num")
        if number is not None and not isinstance(number, (list, dict)):
            numbered.setdefault(number, []).append(event)
        else:
            ordered.append(event)
    intervals = []
    for number, group in numbered.items():
        starts = [e["time_ms"] for e in group if e["key"] == start_key]
        stops = [e["time_ms"] for e in group if e["key"] == stop_key]
        if not starts:
            continue
        intervals.append((min(starts), max(stops) if stops else None, number,
                          len(starts) > 1 or len(stops) > 1))
    pending = None
    for event in ordered:
        if event["key"] == start_key:
            if pending is not None:
                intervals.append((pending, None, None, False))
            pending = event["time_ms"]
        elif pending is not None:
            intervals.append((pending, event["time_ms"], None, False))
            pending = None
    if pending is not None:
        intervals.append((pending, None, None, False))
    intervals.sort(key=lambda interval: interval[0])
    return intervals


def _union_length(pieces):
    total, end = 0.0, None
    for start, stop in sorted(pieces):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def epochs_of(events):
    """(complete epochs, notes): each epoch a dict start_ms, stop_ms, epoch_num, eval_ms (the
    union of eval intervals clipped to the epoch), after_eval_ms (last eval_stop inside the epoch
    to epoch_stop, None without one) and train_ms = stop - start - eval_ms."""
    notes = []
    epochs = _pair(events, "epoch_start", "epoch_stop")
    evals = [(start, stop) for start, stop, _, _ in _pair(events, "eval_start", "eval_stop")
             if stop is not None and stop >= start]
    if any(duplicated for _, _, _, duplicated in epochs):
        notes.append("some epochs logged more than once (several ranks?): earliest start and "
                     "latest stop taken")
    incomplete = sum(1 for _, stop, _, _ in epochs if stop is None)
    if incomplete:
        notes.append(f"{incomplete} epoch_start without epoch_stop left out")
    complete = []
    for start, stop, number, _ in epochs:
        if stop is None:
            continue
        if stop <= start:
            notes.append(f"epoch {number}: epoch_stop not after epoch_start, left out")
            continue
        inside = [(max(a, start), min(b, stop)) for a, b in evals if b > start and a < stop]
        eval_ms = _union_length(inside)
        last_eval_stop = max((b for _, b in inside), default=None)
        train_ms = stop - start - eval_ms
        if train_ms <= 0:
            notes.append(f"epoch {number}: no training time left after eval, left out")
            continue
        complete.append({"start_ms": start, "stop_ms": stop, "epoch_num": number,
                         "eval_ms": eval_ms, "train_ms": train_ms,
                         "after_eval_ms": None if last_eval_stop is None
                         else stop - last_eval_stop})
    return complete, notes


def summarize_run(events):
    """One run's figures; throughputs in samples/s, None where the log lacks what they need."""
    notes = []
    batches = [v for v in _values(events, "global_batch_size") if _is_number(v)]
    samples = [v for v in _values(events, "train_samples") if _is_number(v)]
    epochs, epoch_notes = epochs_of(events)
    notes += epoch_notes
    run = {
        "global_batch": batches[0] if batches else None,
        "train_samples": samples[0] if samples else None,
        "eval_samples": next((v for v in _values(events, "eval_samples") if _is_number(v)), None),
        "orgs": {str(v) for v in _values(events, "submission_org")},
        "statuses": [e["metadata"].get("status") for e in events if e["key"] == "run_stop"],
        "epochs": epochs, "first": None, "steady": None, "notes": notes,
    }
    if len(set(batches)) > 1 or len(set(samples)) > 1:
        notes.append("global_batch_size or train_samples logged with different values; "
                     "the first taken")
    run["staging_s"] = _span_s(events, "staging_start", "staging_stop")
    run["run_s"] = _span_s(events, "run_start", "run_stop")
    if run["train_samples"] is None or not epochs:
        return run
    per_epoch = [run["train_samples"] / (epoch["train_ms"] / 1000.0) for epoch in epochs]
    run["first"] = per_epoch[0]
    if len(per_epoch) > 1:
        run["steady"] = statistics.median(per_epoch[1:])
    return run


def _span_s(events, start_key, stop_key):
    start, stop = _first_time(events, start_key), _first_time(events, stop_key)
    if start is None or stop is None or stop < start:
        return None
    return (stop - start) / 1000.0


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ---------------------------------------------------------------------------------------------
# Systems files

NO_ACCELERATOR = {"", "n/a", "na", "none", "-", "null"}


def load_system(path, display):
    try:
        with open(path, encoding="utf-8") as handle:
            system = json.load(handle)
    except OSError as error:
        raise BadInput(f"{display}: cannot read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise BadInput(f"{display}:{error.lineno}: not JSON ({error.msg})") from error
    if not isinstance(system, dict):
        raise BadInput(f"{display}: not a JSON object")
    return system


def _integer(value):
    if _is_number(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def _text(value):
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value).strip()


def accelerators(system):
    """(model, per node, why CPU-only or None)."""
    model = _text(system.get("accelerator_model_name"))
    per_node = _integer(system.get("accelerators_per_node"))
    if per_node == 0:
        return model, per_node, "accelerators_per_node is 0"
    if model.lower() in NO_ACCELERATOR:
        return model, per_node, f"accelerator_model_name is {model or 'empty'!r}"
    return model, per_node, None


# ---------------------------------------------------------------------------------------------
# The tree

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
    nodes = _integer(info.get("number_of_nodes"))
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
        "system_name": _text(info.get("system_name")),
        "division": _text(info.get("division")),
        "accelerator": model,
        "accelerators_per_node": _fmt(per_node),
        "nodes": _fmt(nodes), "gpus": _fmt(gpus),
        "framework": _text(info.get("framework")),
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


# ---------------------------------------------------------------------------------------------
# A git repository

def _git(git_dir, *arguments, data=None):
    try:
        done = subprocess.run(["git", "--git-dir", git_dir, *arguments], input=data,
                              capture_output=True, check=False)
    except OSError as error:
        raise GitFailure(f"git: {error.strerror}") from error
    if done.returncode != 0:
        raise GitFailure(f"git {' '.join(arguments[:2])} in {git_dir}: "
                         f"{done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def export_from_git(git_dir, revision, benchmark, destination):
    """Writes <org>/results/<system>/<benchmark>/* and <org>/systems/*.json of the revision
    under destination; returns the commit's full hash."""
    commit = _git(git_dir, "rev-parse", "--verify", f"{revision}^{{commit}}").decode().strip()
    names = _git(git_dir, "ls-tree", "-r", "-z", "--name-only", commit).decode().split("\0")
    wanted = re.compile(r"[^/]+/(results/[^/]+/" + re.escape(benchmark) + r"/[^/]+|"
                        r"systems/[^/]+\.json)")
    chosen = [name for name in names if name and wanted.fullmatch(name)]
    if not chosen:
        return commit
    request = "".join(f"{commit}:{name}\n" for name in chosen).encode()
    output = _git(git_dir, "cat-file", "--batch", data=request)
    at = 0
    for name in chosen:
        end = output.index(b"\n", at)
        header = output[at:end].decode(errors="replace").split()
        at = end + 1
        if len(header) < 3 or header[1] != "blob":
            raise GitFailure(f"{name}: {' '.join(header[1:]) or 'unreadable'} in {git_dir}")
        size = int(header[2])
        target = os.path.join(destination, *name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(output[at:at + size])
        at += size + 1
    return commit


def checkout_commit(root):
    try:
        done = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=False)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


# ---------------------------------------------------------------------------------------------

def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description="One CSV row per MLPerf HPC GPU submission: batch, GPUs, training "
                    "throughput from the epoch intervals (eval excluded).")
    parser.add_argument("results_dir", nargs="?",
                        help="a results repository's tree (checkout or plain copy)")
    parser.add_argument("--git-dir", help="read a (bare) git repository instead of a tree")
    parser.add_argument("--commit", help="with --git-dir: the revision to read (default HEAD); "
                                         "with a tree: the commit to record")
    parser.add_argument("--benchmark", default="cosmoflow",
                        help="the benchmark folder under results/<system>/ (default cosmoflow)")
    parser.add_argument("--output", help="CSV file to write (default: stdout)")
    parser.add_argument("--export-to", help="with --git-dir: export the files here and stop")
    parser.add_argument("--lenient", action="store_true",
                        help="skip malformed :::MLLOG lines (counted in notes) instead of failing")
    arguments = parser.parse_args(argv)
    if bool(arguments.results_dir) == bool(arguments.git_dir):
        parser.error("give either RESULTS_DIR or --git-dir")
    if arguments.export_to and not arguments.git_dir:
        parser.error("--export-to needs --git-dir")
    return arguments


def main(argv=None):
    arguments = parse_arguments(argv)
    try:
        if arguments.git_dir:
            if arguments.export_to:
                commit = export_from_git(arguments.git_dir, arguments.commit or "HEAD",
                                         arguments.benchmark, arguments.export_to)
                print(f"exported {arguments.benchmark} results and systems files of {commit} "
                      f"to {arguments.export_to}", file=sys.stderr)
                return EXIT_OK
            with tempfile.TemporaryDirectory(prefix="mlperf-results-") as folder:
                commit = export_from_git(arguments.git_dir, arguments.commit or "HEAD",
                                         arguments.benchmark, folder)
                rows = extract(folder, arguments.benchmark, commit, arguments.lenient)
        else:
            if not os.path.isdir(arguments.results_dir):
                raise BadInput(f"{arguments.results_dir}: no such folder")
            commit = arguments.commit or checkout_commit(arguments.results_dir)
            if not commit:
                print(f"{arguments.results_dir}: not a git checkout and no --commit: "
                      "the commit column is empty", file=sys.stderr)
            rows = extract(arguments.results_dir, arguments.benchmark, commit,
                           arguments.lenient)
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except GitFailure as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_RUNTIME
    if arguments.output:
        with open(arguments.output, "w", encoding="utf-8", newline="") as handle:
            write_csv(rows, handle)
        print(f"wrote {len(rows)} rows to {arguments.output}", file=sys.stderr)
    else:
        write_csv(rows, sys.stdout)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
