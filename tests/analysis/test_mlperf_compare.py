#!/usr/bin/python3
"""Tests for analysis/validation/compare.py's arithmetic and scenario template (no tessera needed).

    /usr/bin/python3 -m unittest discover -s tests/analysis -p 'test_mlperf*' -v   (from the root)
"""

import csv
import os
import tempfile
import unittest

import analysis_scripts

VALIDATION = os.path.join(analysis_scripts.REPO, "analysis", "validation")


def load_script():
    return analysis_scripts.load_file(os.path.join(VALIDATION, "compare.py"), "mlperf_compare")


def measured_row(system, gpus, nodes, batch, throughput, first=None, per_gpu=None):
    return {"org": "X", "system": system, "accelerator": "GPU", "division": "closed",
            "framework": "TF", "nodes": str(nodes), "gpus": str(gpus),
            "global_batch": str(batch),
            "per_gpu_batch": str(per_gpu if per_gpu is not None else batch // gpus),
            "throughput_samples_per_s": str(throughput),
            "first_epoch_samples_per_s": "" if first is None else str(first)}


def sim_row(samples_per_s, global_batch, first_step_s=None, status="ok"):
    step = global_batch / samples_per_s
    return {"status": status, "samples_per_s": str(samples_per_s), "step_s": str(step),
            "first_epoch_step_s": str(first_step_s if first_step_s is not None else step),
            "compute_s": "0.01", "halo_s": "0", "allreduce_s": "0", "other_comm_s": "0",
            "io_s": "0", "offload_s": "0", "idle_s": "0", "input_source": "file_system",
            "note": ""}


class Arithmetic(unittest.TestCase):
    def setUp(self):
        self.m = load_script()

    def test_error_pct(self):
        self.assertAlmostEqual(self.m.error_pct(110.0, 100.0), 10.0)
        self.assertAlmostEqual(self.m.error_pct(75.0, 100.0), -25.0)
        self.assertIsNone(self.m.error_pct(None, 100.0))
        self.assertIsNone(self.m.error_pct(1.0, 0.0))

    def test_mape_skips_missing_and_uses_absolute_values(self):
        self.assertAlmostEqual(self.m.mape([10.0, -30.0, None]), 20.0)
        self.assertIsNone(self.m.mape([None]))

    def test_scaling_efficiency_per_group_against_its_smallest_run(self):
        rows = [{"cluster": "a", "gpus": 256, "v": 1600.0},   # 6.25 per GPU
                {"cluster": "a", "gpus": 128, "v": 1000.0},   # 7.8125 per GPU: the baseline
                {"cluster": "b", "gpus": 64, "v": 640.0},
                {"cluster": "b", "gpus": 32, "v": None}]      # no value: not a baseline
        out = self.m.scaling_efficiencies(rows, "v")
        self.assertAlmostEqual(out[0][0], 6.25 / 7.8125)
        self.assertEqual(out[0][1], 128)
        self.assertEqual(out[1], (1.0, 128))
        self.assertEqual(out[2], (1.0, 64))
        self.assertEqual(out[3], (None, None))
        self.assertAlmostEqual(self.m.points(0.8, 0.95), -15.0)


class Comparison(unittest.TestCase):
    """Two runs of one cluster, one unmapped system and one uneven batch, compared by hand."""

    def setUp(self):
        self.m = load_script()
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        systems = os.path.join(self.tmp.name, "systems.csv")
        with open(systems, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["match", "cluster", "store", "why"])
            w.writerow(["^small_", "clusters/small.yaml", "none", "test"])
        self.systems = self.m.read_systems(systems)
        self.measured = [measured_row("small_n4", 4, 4, 8, 100.0, first=50.0),
                         measured_row("small_n16", 16, 16, 32, 320.0),
                         measured_row("other_n4", 4, 4, 4, 10.0),
                         measured_row("small_odd", 3, 3, 4, 30.0, per_gpu=1)]

    def test_rows(self):
        plans = [self.m.plan_row(r, self.systems) for r in self.measured]
        self.assertIn("no cluster mapping", plans[2]["why_not"])
        self.assertIn("not a whole number", plans[3]["why_not"])
        sims = [sim_row(120.0, 8, first_step_s=0.2), sim_row(360.0, 32), {}, {}]
        rows = self.m.compare(plans, self.measured, sims)
        a, b, c, d = rows
        self.assertAlmostEqual(a["error_pct"], 20.0)
        self.assertAlmostEqual(a["predicted_first_epoch_samples_per_s"], 40.0)  # 8 / 0.2
        self.assertAlmostEqual(a["first_epoch_error_pct"], -20.0)
        self.assertAlmostEqual(b["error_pct"], 12.5)
        self.assertIsNone(b["first_epoch_error_pct"])  # no measured first epoch
        # measured: 320/16 = 20 per GPU over 100/4 = 25: 0.8; predicted: 22.5 / 30 = 0.75
        self.assertAlmostEqual(b["measured_scaling_efficiency"], 0.8)
        self.assertAlmostEqual(b["predicted_scaling_efficiency"], 0.75)
        self.assertAlmostEqual(b["scaling_error_points"], -5.0)
        self.assertEqual(b["baseline_gpus"], 4)
        self.assertAlmostEqual(a["measured_scaling_efficiency"], 1.0)
        self.assertIsNone(c["predicted_samples_per_s"])
        self.assertIsNone(d["error_pct"])
        stats = self.m.summary(rows)
        self.assertEqual(stats["predicted"], 2)
        self.assertAlmostEqual(stats["mape_pct"], (20.0 + 12.5) / 2)
        self.assertAlmostEqual(stats["first_epoch_mape_pct"], 20.0)
        self.assertEqual(len(stats["scaling_points"]), 1)
        self.assertAlmostEqual(stats["max_abs_scaling_points"], 5.0)
        out = os.path.join(self.tmp.name, "comparison.csv")
        self.m.write_csv(rows, out)
        with open(out, newline="") as f:
            written = list(csv.DictReader(f))
        self.assertEqual(float(written[0]["error_pct"]), 20.0)
        self.assertIn("no cluster mapping", written[2]["why_not_predicted"])

    def test_staged_rows_compare_the_staging_phase(self):
        plans = [self.m.plan_row(r, self.systems) for r in self.measured[:2]]
        plans[0]["store"] = "node_local"  # staged: its logs time the staging
        measured = [dict(r, staging_s_median="40.0") for r in self.measured[:2]]
        sims = [dict(sim_row(120.0, 8), staging_s="50.0"), dict(sim_row(360.0, 32), staging_s="0")]
        a, b = self.m.compare(plans, measured, sims)
        self.assertAlmostEqual(a["predicted_staging_s"], 50.0)
        self.assertAlmostEqual(a["staging_error_pct"], 25.0)
        self.assertIsNone(b["measured_staging_s"])  # not staged: nothing to compare
        self.assertIsNone(b["staging_error_pct"])
        stats = self.m.summary([a, b])
        self.assertEqual(len(stats["staging"]), 1)
        self.assertIn("| small_n4 | 4 | 40.0 | 50.0 | 25.0 |",
                      self.m.markdown([a, b], stats, "test"))

    def test_failed_simulation_is_not_predicted_and_says_why(self):
        plans = [self.m.plan_row(self.measured[0], self.systems)]
        rows = self.m.compare(plans, self.measured[:1],
                              [{"status": "does_not_fit", "note": "too big"}])
        self.assertIsNone(rows[0]["predicted_samples_per_s"])
        self.assertIn("does_not_fit: too big", rows[0]["why_not_predicted"])


class CommittedScenarios(unittest.TestCase):
    """analysis/validation/scenarios/ is the template's output for the v0.7 CSV."""

    def test_committed_scenarios_match_the_template(self):
        m = load_script()
        measured = os.path.join(VALIDATION, "mlperf_hpc_v0.7.csv")
        with tempfile.TemporaryDirectory() as tmp:
            # Same depth below the repository as the committed folder, so relative paths agree.
            target = os.path.join(VALIDATION, "scenarios")
            plans = m.write_scenarios(m.read_measured(measured), m.read_systems(m.DEFAULT_SYSTEMS),
                                      m.DEFAULT_MODEL, os.path.join(tmp, "x"), "mlperf_hpc_v0.7.csv")
            for plan in plans:
                self.assertNotIn("why_not", plan)
                with open(os.path.join(target, plan["name"] + ".yaml")) as f:
                    committed = f.read()
                row = next(r for r in m.read_measured(measured) if r["system"] == plan["system"])
                self.assertEqual(committed, m.scenario_text(plan, row, m.DEFAULT_MODEL, target,
                                                            "mlperf_hpc_v0.7.csv", "int16"))
                # The data set's facts: int16 volumes, and its size for the stores' fit.
                self.assertIn("stored_dtype: int16", committed)
                self.assertIn(f"samples: {row['train_samples']}", committed)


if __name__ == "__main__":
    unittest.main()
