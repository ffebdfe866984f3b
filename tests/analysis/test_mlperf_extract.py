#!/usr/bin/python3
"""Tests for analysis/validation/mlperf_extract.py: MLPerf HPC logs to one CSV row per submission.

    /usr/bin/python3 -m unittest discover -s tests/analysis -p 'test_mlperf*' -v   (from the root)

The fixture (data/mlperf/, its README says what was kept) is a trimmed copy of two MLPerf HPC v0.7
CosmoFlow submissions: CSCS's 128 P100s (two runs) and RIKEN's Fugaku (CPU-only, skipped).
"""

import csv
import io
import os
import shutil
import statistics
import subprocess
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import analysis_scripts

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "data", "mlperf")
CSCS_RESULTS = "CSCS/results/daint_gpu_n128_tf2.2.0/cosmoflow"
COMMIT = "3edadefe722000a5613076f0ba429365850b44cd"
SAMPLES = 262144  # train_samples of the logs


def load_script():
    path = os.path.join(analysis_scripts.REPO, "analysis", "validation", "mlperf_extract.py")
    return analysis_scripts.load_file(path, "mlperf_extract")


def epoch_throughput(start, eval_start, eval_stop, stop):
    """By hand: samples over the epoch's interval less the eval inside it (times in ms)."""
    return SAMPLES / ((stop - start - (eval_stop - eval_start)) / 1000.0)


# The epoch_start, eval_start, eval_stop, epoch_stop times of the fixture's runs, read off the logs.
RUN_1 = [(1603314890405, 1603315368294, 1603315465502, 1603315569580),   # epoch 0
         (1603315569583, 1603315899958, 1603315928708, 1603315937620),   # epoch 1
         (1603315937623, 1603316266871, 1603316293085, 1603316300873),   # epoch 2
         (1603316300876, 1603316631287, 1603316657320, 1603316666002)]   # epoch 3
RUN_2 = [(1603274757613, 1603275216761, 1603275299951, 1603275444168),
         (1603275444172, 1603275791875, 1603275822106, 1603275837113),
         (1603275837117, 1603276173211, 1603276201371, 1603276216403)]   # epoch 3 has no stop


def run_main(module, arguments):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = module.main(arguments)
    return code, out.getvalue(), err.getvalue()


def rows_of(text):
    return list(csv.DictReader(io.StringIO(text)))


class Throughput(unittest.TestCase):
    def test_hand_computed_numbers(self):
        # Epoch 1 of run 1, spelled out: 368,037 ms of interval, 28,750 ms of eval inside it.
        self.assertAlmostEqual(epoch_throughput(*RUN_1[1]),
                               SAMPLES / ((368037 - 28750) / 1000.0))
        self.assertAlmostEqual(epoch_throughput(*RUN_1[1]), 772.632, places=3)
        first = statistics.median([epoch_throughput(*RUN_1[0]), epoch_throughput(*RUN_2[0])])
        steady = statistics.median([
            statistics.median([epoch_throughput(*epoch) for epoch in RUN_1[1:]]),  # 773.074
            statistics.median([epoch_throughput(*epoch) for epoch in RUN_2[1:]]),  # 734.659
        ])
        self.assertAlmostEqual(first, (450.4448 + 434.4700) / 2, places=3)
        self.assertAlmostEqual(steady, (773.0741 + (722.7372 + 746.5810) / 2) / 2, places=3)

        extract = load_script()
        code, out, err = run_main(extract, [FIXTURE, "--commit", COMMIT])
        self.assertEqual(code, 0, err)
        rows = rows_of(out)
        self.assertEqual(len(rows), 1, "one GPU submission; Fugaku is CPU-only")
        row = rows[0]
        self.assertEqual((row["org"], row["system"]), ("CSCS", "daint_gpu_n128_tf2.2.0"))
        self.assertEqual(row["accelerator"], "NVIDIA P100-PCIE-16GB")
        self.assertEqual((row["nodes"], row["gpus"], row["global_batch"], row["per_gpu_batch"]),
                         ("128", "128", "256", "2"))
        self.assertEqual((row["train_samples"], row["runs"]), (str(SAMPLES), "2"))
        self.assertEqual(row["eval_samples"], "65536")  # the validation set's, as logged
        self.assertEqual(row["framework"], "TensorFlow 2.2.0")
        self.assertAlmostEqual(float(row["throughput_samples_per_s"]), steady, places=2)
        self.assertAlmostEqual(float(row["throughput_per_gpu"]), steady / 128, places=3)
        self.assertAlmostEqual(float(row["first_epoch_samples_per_s"]), first, places=2)
        self.assertEqual(row["epochs_median"], "3.5")  # 4 complete epochs and 3
        # Eval of the non-first epochs: 28750, 26214, 26033, 30231, 28160 ms -> median 28.16 s.
        self.assertEqual(row["eval_s_median"], "28.16")
        self.assertEqual(row["commit"], COMMIT)
        self.assertEqual(row["systems_file"], "CSCS/systems/daint_gpu_n128_tf2.2.0.json")
        self.assertEqual(row["result_files"].split(";"),
                         [f"{CSCS_RESULTS}/result_1.txt", f"{CSCS_RESULTS}/result_2.txt"])
        self.assertIn("result_2.txt: 1 epoch_start without epoch_stop left out", row["notes"])
        self.assertIn("RIKEN/fugaku_512xA64FX_tensorflow_closed: skipped, CPU-only", err)

    def test_eval_is_clipped_to_the_epoch_and_ranks_merged(self):
        extract = load_script()

        def event(key, time_ms, epoch=None):
            metadata = {} if epoch is None else {"epoch_num": epoch}
            return {"key": key, "time_ms": time_ms, "metadata": metadata, "value": None}

        events = [
            event("train_samples", 0), event("epoch_start", 1000, 0),
            event("eval_start", 1800, 0), event("eval_stop", 2500, 0),  # runs 500 ms past stop
            event("epoch_stop", 2000, 0),
            event("epoch_start", 3000, 1), event("epoch_start", 3010, 1),  # two ranks
            event("epoch_stop", 4000, 1), event("epoch_stop", 4020, 1),
            event("eval_start", 4100, 1), event("eval_stop", 4200, 1),  # after the epoch: kept
        ]
        epochs, notes = extract.epochs_of(events)
        self.assertEqual([epoch["train_ms"] for epoch in epochs], [800, 1020])
        self.assertEqual([epoch["eval_ms"] for epoch in epochs], [200, 0])
        self.assertTrue(any("more than once" in note for note in notes), notes)


class BadInput(unittest.TestCase):
    def test_malformed_line_names_file_and_line(self):
        extract = load_script()
        with tempfile.TemporaryDirectory() as folder:
            tree = os.path.join(folder, "tree")
            shutil.copytree(FIXTURE, tree)
            log = os.path.join(tree, *CSCS_RESULTS.split("/"), "result_2.txt")
            with open(log, encoding="utf-8") as handle:
                lines = handle.readlines()
            lines.insert(5, ':::MLLOG {"namespace": "", "time_ms": 16032747\n')  # cut short
            with open(log, "w", encoding="utf-8") as handle:
                handle.writelines(lines)
            code, out, err = run_main(extract, [tree, "--commit", COMMIT])
            self.assertEqual(code, 2)
            self.assertEqual(out, "")
            self.assertIn(f"error: {CSCS_RESULTS}/result_2.txt:6: malformed :::MLLOG line", err)
            self.assertNotIn("Traceback", err)

            code, out, err = run_main(extract, [tree, "--commit", COMMIT, "--lenient"])
            self.assertEqual(code, 0, err)
            self.assertIn("result_2.txt: 1 malformed :::MLLOG lines skipped",
                          rows_of(out)[0]["notes"])

    def test_missing_folder_and_no_submissions_exit_2(self):
        extract = load_script()
        with tempfile.TemporaryDirectory() as folder:
            for path in (os.path.join(folder, "missing"), folder):
                code, _, err = run_main(extract, [path])
                self.assertEqual(code, 2, path)
                self.assertIn(path, err)


@unittest.skipUnless(shutil.which("git"), "git not installed")
class FromGit(unittest.TestCase):
    def test_bare_repository_gives_the_same_row(self):
        extract = load_script()
        with tempfile.TemporaryDirectory() as folder:
            work = os.path.join(folder, "work")
            shutil.copytree(FIXTURE, work)
            git = ["git", "-C", work, "-c", "user.name=t", "-c", "user.email=t@t",
                   "-c", "commit.gpgsign=false"]
            subprocess.run(["git", "init", "-q", work], check=True)
            subprocess.run(git + ["add", "-A"], check=True)
            subprocess.run(git + ["commit", "-q", "-m", "fixture"], check=True)
            commit = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True,
                                    text=True).stdout.strip()
            bare = os.path.join(folder, "bare.git")
            subprocess.run(["git", "clone", "-q", "--bare", work, bare], check=True)

            code, from_git, err = run_main(extract, ["--git-dir", bare])
            self.assertEqual(code, 0, err)
            code, from_tree, err = run_main(extract, [FIXTURE, "--commit", commit])
            self.assertEqual(code, 0, err)
            self.assertEqual(from_git, from_tree)
            self.assertEqual(rows_of(from_git)[0]["commit"], commit)


if __name__ == "__main__":
    unittest.main()
