#!/usr/bin/python3
"""Tests for analysis/plot_microbatching.py, run as a user runs it (a subprocess).

    /usr/bin/python3 -m unittest discover -s tests/analysis -v      (from the repository root)

Standard library only; the script itself needs Debian's python3-matplotlib.
"""

import os
import subprocess
import sys
import tempfile
import unittest

from analysis_scripts import script_path

SCRIPT = script_path("plot_microbatching")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# The header `tessera microbatch-study` writes (kernels/src/profile/microbatch_study_report.cpp).
HEADER = ("kernel,direction,batch,workspace_limit_bytes,policy,plan,plan_workspace_bytes,"
          "limit_met,baseline_limit_met,predicted_s,measured_s,baseline_predicted_s,baseline_measured_s,"
          "predicted_speedup,measured_speedup,prediction_error_percent,note")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIB = 1024 * 1024


def has_plotting_libraries():
    try:
        return subprocess.run([PYTHON, "-c", "import matplotlib"],
                              capture_output=True).returncode == 0
    except OSError:
        return False


def row(kernel, direction, limit_mib, policy, predicted_s, measured_s, base_pred_s, base_meas_s,
        baseline_fits="true"):
    return ",".join(str(v) for v in [
        kernel, direction, 8, limit_mib * MIB, policy, "1 x 8 gemm", 0, "true", baseline_fits,
        predicted_s,
        measured_s, base_pred_s, base_meas_s, base_pred_s / predicted_s, base_meas_s / measured_s,
        100 * (measured_s - predicted_s) / predicted_s, ""])


def run(*args):
    return subprocess.run([PYTHON, SCRIPT, *args], capture_output=True, text=True)


@unittest.skipUnless(has_plotting_libraries(), "needs Debian's python3-matplotlib")
class PlotMicrobatchingTest(unittest.TestCase):
    def write_study(self, directory, lines):
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "rows.csv"), "w", encoding="utf-8") as handle:
            handle.write("\n".join([HEADER, *lines]) + "\n")

    def test_plots_every_limit_and_summarises_speedups(self):
        with tempfile.TemporaryDirectory() as scratch:
            study = os.path.join(scratch, "deepbench")
            self.write_study(study, [
                row(3, "forward", 8, "undivided", 4.0, 4.0, 4.0, 4.0),
                row(3, "forward", 8, "power_of_two", 1.0, 2.0, 4.0, 4.0),    # 4x pred, 2x meas
                row(5, "forward", 8, "power_of_two", 1.0, 1.0, 1.0, 1.0),    # 1x, 1x
                row(7, "forward", 8, "power_of_two", 1.0, 1.0, 9.0, 9.0, baseline_fits="false"),
                row(3, "forward", 64, "power_of_two", 1.0, 1.0, 1.0, 1.0),
                "3,forward,8,%d,all,,0,true,true,,,,,,,,not run: batch 8 > --all-max-batch 4"
                % (64 * MIB),
            ])
            result = run(study)
            self.assertEqual(result.returncode, 0, result.stderr)
            for limit in ("8", "64"):
                for extension in ("png", "svg"):
                    path = os.path.join(study, f"deepbench_speedup_{limit}MiB.{extension}")
                    self.assertTrue(os.path.getsize(path) > 0, path)
            with open(os.path.join(study, "deepbench_speedup_8MiB.png"), "rb") as handle:
                self.assertEqual(handle.read(8), PNG_SIGNATURE)
            lines = result.stdout.splitlines()
            # geomean of 4x and 1x predicted is 2x, of 2x and 1x measured sqrt(2); max 4x and 2x;
            # mean |error| (100% and 0%) 50%.
            eight = [l for l in lines[lines.index("workspace limit 8 MiB:"):]
                     if "power_of_two" in l][0].split()
            # problem 7, whose baseline is over the limit, is excluded, not compared
            self.assertEqual(eight[1:], ["2", "1", "2.00x", "1.41x", "4.00x", "2.00x", "50.0%"])
            capped = [l for l in lines if l.strip().startswith("all")][0].split()
            self.assertEqual(capped[1:3], ["0", "1"])  # counted as excluded, not silently dropped

    def test_missing_study_is_bad_input(self):
        with tempfile.TemporaryDirectory() as scratch:
            result = run(os.path.join(scratch, "absent"))
            self.assertEqual(result.returncode, 2)
            self.assertIn("rows.csv: no such file", result.stderr)

    def test_missing_column_is_bad_input(self):
        with tempfile.TemporaryDirectory() as scratch:
            with open(os.path.join(scratch, "rows.csv"), "w", encoding="utf-8") as handle:
                handle.write("kernel,direction\n3,forward\n")
            result = run(scratch)
            self.assertEqual(result.returncode, 2)
            self.assertIn("rows.csv:1: missing column(s) workspace_limit_bytes", result.stderr)


if __name__ == "__main__":
    unittest.main()
