#!/usr/bin/python3
"""Tests for analysis/plot_scaling.py, run as a user runs it (a subprocess).

    /usr/bin/python3 -m unittest discover -s tests/analysis -v      (from the repository root)

Standard library only; the script itself needs Debian's python3-matplotlib and python3-pandas.
"""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

from analysis_scripts import script_path

SCRIPT = script_path("plot_scaling")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# A result CSV's header without the optional columns (tensor_degree, first_epoch_step_s,
# staging_s, input_source, the memory averages, time to train: RESULT_SCHEMA.md), which
# plot_scaling.py reads as it reads a full one; the cases below add some of them back.
HEADER = ("scenario,point,backend,gpus,data,spatial_grid,model_degree,mini_batch,global_batch,"
          "status,step_s,samples_per_s,compute_s,halo_s,allreduce_s,other_comm_s,io_s,offload_s,"
          "idle_s,peak_memory_bytes,device_capacity_bytes,fits,time_provenance,"
          "compute_provenance,memory_provenance,note").split(",")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PLOTS = ("step_time", "efficiency", "breakdown", "throughput")


def has_plotting_libraries():
    try:
        return subprocess.run([PYTHON, "-c", "import matplotlib, pandas"],
                              capture_output=True).returncode == 0
    except OSError:
        return False


def row(scenario, point, backend, gpus, global_batch, step, status="ok", note=""):
    """One results row; the breakdown adds up to the step time."""
    compute, halo, allreduce = 0.6 * step, 0.2 * step, 0.1 * step
    other, io, offload = 0.05 * step, 0.0, 0.0
    idle = step - compute - halo - allreduce - other - io - offload
    fits = "false" if status == "does_not_fit" else "true"
    rate = global_batch / step if step > 0 else 0
    return [scenario, point, backend, gpus, global_batch, f"{gpus}x1x1", 1, 1,
            global_batch, status, step, rate, compute, halo, allreduce, other, io, offload, idle,
            12e9, 16e9, fits, "simulated" if backend == "sim" else "measured", "profile",
            "estimated", note]


def write_csv(path, rows, header=HEADER):
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def table(stdout, scenario, backend):
    """{point: {'gpus', 'step', 'rate', 'efficiency', 'fits', 'status'}} from the summary."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith(f"== {scenario} / {backend}:"))
    assert lines[start + 1].split()[:2] == ["point", "GPUs"], lines[start + 1]
    result = {}
    for line in lines[start + 2:]:
        if not line.strip():
            break
        point, gpus, step, rate, efficiency, fits, status = line.split()
        result[int(point)] = dict(gpus=int(gpus), step=step, rate=rate, efficiency=efficiency,
                                  fits=fits, status=status)
    return result


@unittest.skipUnless(os.path.exists(SCRIPT), "analysis/plot_scaling.py not found")
@unittest.skipUnless(has_plotting_libraries(),
                     f"{PYTHON} lacks matplotlib/pandas (apt install python3-matplotlib "
                     "python3-pandas)")
class PlotScalingTest(unittest.TestCase):
    def setUp(self):
        self.temp = tempfile.TemporaryDirectory(prefix="plot_scaling_test_")
        self.dir = self.temp.name
        self.out = os.path.join(self.dir, "plots")

    def tearDown(self):
        self.temp.cleanup()

    def run_script(self, *arguments):
        return subprocess.run([PYTHON, SCRIPT, *arguments], capture_output=True, text=True,
                              cwd=self.dir, timeout=300)

    def assert_plots(self, stem):
        for plot in PLOTS:
            self.assert_figure(f"{stem}_{plot}")

    def assert_figure(self, name):
        png = os.path.join(self.out, name + ".png")
        svg = os.path.join(self.out, name + ".svg")
        for path in (png, svg):
            self.assertTrue(os.path.isfile(path), f"missing {path}")
            self.assertGreater(os.path.getsize(path), 0, f"empty {path}")
        with open(png, "rb") as stream:
            self.assertEqual(stream.read(8), PNG_SIGNATURE, f"{png} is not a PNG")
        with open(svg, encoding="utf-8") as stream:
            self.assertIn("<svg", stream.read(), f"{svg} is not an SVG")

    def assert_bad_input(self, result, file_name, *fragments):
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(file_name, result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    # -- good input ------------------------------------------------------------------------

    def test_weak_scaling_plots_and_efficiency(self):
        # global_batch = 4 * gpus: auto picks weak, efficiency t(1)/t(g).
        path = write_csv(os.path.join(self.dir, "weak.csv"), [
            row("weak-demo", 0, "sim", 1, 4, 1.0),
            row("weak-demo", 1, "sim", 2, 8, 1.25),
            row("weak-demo", 2, "sim", 4, 16, 1.6),
            row("weak-demo", 3, "sim", 8, 32, 2.0, status="does_not_fit",
                note='needs 20 GB, "has" 16 GB'),
        ])
        result = self.run_script(path, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_plots("weak-demo_sim")
        self.assertIn("weak scaling (auto)", result.stdout)
        rows = table(result.stdout, "weak-demo", "sim")
        self.assertEqual({p: r["efficiency"] for p, r in rows.items()},
                         {0: "100.0", 1: "80.0", 2: "62.5", 3: "50.0"})
        self.assertEqual([rows[p]["gpus"] for p in range(4)], [1, 2, 4, 8])
        self.assertEqual(rows[1]["step"], "1.25")
        self.assertEqual(rows[1]["rate"], "6.4")  # 8 samples / 1.25 s
        self.assertEqual(rows[3]["fits"], "false")
        self.assertEqual(rows[3]["status"], "does_not_fit")

    def test_first_epoch_steps_beside_steady_state(self):
        # The current schema's data-store columns: step_s is steady state, first_epoch_step_s
        # the first epoch's file-system-bound step; older files without them still plot.
        header = HEADER[:12] + ["first_epoch_step_s", "input_source"] + HEADER[12:]
        rows = []
        for point, (gpus, step, first) in enumerate([(4, 1.0, 1.0), (8, 1.0, 2.5)]):
            values = row("store-demo", point, "sim", gpus, gpus, step)
            rows.append(values[:12] + [first, "peer_memory"] + values[12:])
        path = write_csv(os.path.join(self.dir, "store.csv"), rows, header)
        result = self.run_script(path, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_plots("store-demo_sim")
        self.assertIn("steps are steady state", result.stdout)
        self.assertIn("1st epoch s", result.stdout)
        line = [l for l in result.stdout.splitlines() if l.split()[:2] == ["1", "8"]][0]
        self.assertEqual(line.split()[2:4], ["1", "2.5"])

    def test_time_to_train_plot_when_the_columns_carry_it(self):
        # The time-to-train columns (before note); the last point's batch is outside the table.
        header = HEADER[:-1] + ["epochs", "steps_to_target", "time_to_train_s", "note"]
        rows = []
        for point, (gpus, step, epochs, note) in enumerate(
                [(8, 0.1, 90.0, ""), (64, 0.11, 90.0, ""),
                 (512, 0.12, 90.0, "network CM02; time to train extrapolated: global batch ...")]):
            values = row("ttt-demo", point, "sim", gpus, 32 * gpus, step)
            steps = epochs * 1.28e6 / (32 * gpus)
            rows.append(values[:-1] + [epochs, steps, steps * step, note])
        path = write_csv(os.path.join(self.dir, "ttt.csv"), rows, header)
        result = self.run_script(path, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_plots("ttt-demo_sim")
        self.assert_figure("ttt-demo_sim_time_to_train")
        self.assertIn("train h", result.stdout)
        self.assertIn("* batch outside the steps-to-target table", result.stdout)
        line = [l for l in result.stdout.splitlines() if l.split()[:2] == ["1", "64"]][0]
        # 90 epochs of 1.28e6 samples at 2048 per step (56,250 steps), 0.11 s each: 1.719 h.
        self.assertEqual(line.split()[3:5], ["90", "1.719"])
        last = [l for l in result.stdout.splitlines() if l.split()[:2] == ["2", "512"]][0]
        self.assertTrue(last.split()[4].endswith("*"), last)

    def test_no_time_to_train_plot_without_a_target(self):
        header = HEADER[:-1] + ["epochs", "steps_to_target", "time_to_train_s", "note"]
        rows = [row("none-demo", 0, "sim", 1, 1, 1.0)[:-1] + [0, 0, 0, ""]]
        path = write_csv(os.path.join(self.dir, "none.csv"), rows, header)
        result = self.run_script(path, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "none-demo_sim_time_to_train.png")))
        self.assertNotIn("train h", result.stdout)

    def test_strong_scaling_auto_and_forced_weak(self):
        # Fixed global_batch: auto picks strong, efficiency t(2)*2 / (t(g)*g).
        path = write_csv(os.path.join(self.dir, "strong.csv"), [
            row("strong-demo", 0, "sim", 2, 64, 1.0),
            row("strong-demo", 1, "sim", 4, 64, 0.625),
            row("strong-demo", 2, "sim", 8, 64, 0.4),
            row("strong-demo", 3, "sim", 16, 64, 0.0, status="skipped", note="skip: test"),
        ])
        result = self.run_script(path, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_plots("strong-demo_sim")
        self.assertIn("strong scaling (auto)", result.stdout)
        rows = table(result.stdout, "strong-demo", "sim")
        self.assertEqual({p: r["efficiency"] for p, r in rows.items()},
                         {0: "100.0", 1: "80.0", 2: "62.5", 3: "-"})
        self.assertEqual(rows[3]["step"], "-")

        forced = self.run_script(path, "--out", self.out, "--scaling", "weak")
        self.assertEqual(forced.returncode, 0, forced.stderr)
        rows = table(forced.stdout, "strong-demo", "sim")
        self.assertEqual([rows[p]["efficiency"] for p in range(3)], ["100.0", "160.0", "250.0"])

    def test_baseline_is_smallest_ok_point(self):
        # The 1-GPU point does not fit, so efficiency is relative to 2 GPUs.
        path = write_csv(os.path.join(self.dir, "base.csv"), [
            row("base-demo", 0, "sim", 1, 1, 0.5, status="does_not_fit"),
            row("base-demo", 1, "sim", 2, 2, 1.0),
            row("base-demo", 2, "sim", 4, 4, 1.25),
        ])
        result = self.run_script(path, "--out", self.out, "--scaling", "weak")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = table(result.stdout, "base-demo", "sim")
        self.assertEqual([rows[p]["efficiency"] for p in range(3)], ["200.0", "100.0", "80.0"])

    def test_real_and_sim_overlay(self):
        real = write_csv(os.path.join(self.dir, "real.csv"), [
            row("both", 0, "real", 4, 4, 1.0), row("both", 1, "real", 8, 8, 1.1)])
        sim = write_csv(os.path.join(self.dir, "sim.csv"), [
            row("both", 0, "sim", 4, 4, 0.9), row("both", 1, "sim", 8, 8, 1.0),
            row("both", 2, "sim", 16, 16, 1.2)])
        result = self.run_script(real, sim, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_plots("both_real")
        self.assert_plots("both_sim")
        self.assert_figure("both_real_vs_sim_step_time")
        self.assertEqual(table(result.stdout, "both", "real")[1]["efficiency"], "90.9")
        self.assertEqual(table(result.stdout, "both", "sim")[2]["efficiency"], "75.0")

    def test_no_overlay_for_one_backend(self):
        path = write_csv(os.path.join(self.dir, "one.csv"), [row("solo", 0, "sim", 1, 1, 1.0)])
        result = self.run_script(path, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assert_plots("solo_sim")
        self.assertFalse(os.path.exists(os.path.join(self.out, "solo_real_vs_sim_step_time.png")))
        self.assertEqual(table(result.stdout, "solo", "sim")[0]["efficiency"], "100.0")

    # -- bad input -------------------------------------------------------------------------

    def test_missing_file(self):
        result = self.run_script("no_such_results.csv", "--out", self.out)
        self.assert_bad_input(result, "no_such_results.csv", "no such file")

    def test_missing_columns(self):
        header = [c for c in HEADER if c not in ("step_s", "idle_s")]
        rows = [[v for c, v in zip(HEADER, row("x", 0, "sim", 1, 1, 1.0))
                 if c not in ("step_s", "idle_s")]]
        path = write_csv(os.path.join(self.dir, "lacking.csv"), rows, header=header)
        result = self.run_script(path, "--out", self.out)
        self.assert_bad_input(result, "lacking.csv", "step_s", "idle_s")

    def test_bad_value_names_file_and_line(self):
        rows = [row("x", 0, "sim", 1, 1, 1.0), row("x", 1, "sim", 2, 2, 1.0)]
        rows[1][HEADER.index("step_s")] = "fast"
        path = write_csv(os.path.join(self.dir, "badvalue.csv"), rows)
        result = self.run_script(path, "--out", self.out)
        self.assert_bad_input(result, "badvalue.csv:3", "step_s", "fast")

    def test_empty_file(self):
        path = os.path.join(self.dir, "empty.csv")
        open(path, "w").close()
        self.assert_bad_input(self.run_script(path, "--out", self.out), "empty.csv")

    def test_bad_file_among_good_ones(self):
        good = write_csv(os.path.join(self.dir, "good.csv"), [row("x", 0, "sim", 1, 1, 1.0)])
        result = self.run_script(good, "missing.csv", "--out", self.out)
        self.assert_bad_input(result, "missing.csv")


if __name__ == "__main__":
    unittest.main()
