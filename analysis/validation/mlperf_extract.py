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
import os
import sys
import tempfile

# Its siblings in this folder, found as when run (the script's folder is on the path).
from mlperf_bad_input import BadInput
from mlperf_git_export import GitFailure, checkout_commit, export_from_git
from mlperf_submissions import extract, write_csv
# Not used here: whoever loads this script as a module (tests/analysis/test_mlperf_extract.py)
# reaches the epochs through it.
from mlperf_log import epochs_of  # noqa: F401

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2


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
