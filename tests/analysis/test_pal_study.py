#!/usr/bin/python3
"""Tests for analysis/pal_study.py: the tables from hand-made points (no simulation).

    /usr/bin/python3 -m unittest discover -s tests/analysis -v      (from the repository root)

Needs Debian's python3-yaml (the script imports it); skipped without it.
"""

import importlib.util
import unittest

import analysis_scripts


def load_script():
    return analysis_scripts.load("pal_study")


def point(variant, degree, gpus, hours, fits="true", status="ok"):
    return {"model": "gnmt", "variant": variant, "degree": degree, "b_noise": 4096,
            "gpus": gpus, "global_batch": 128 * gpus // degree, "status": status, "fits": fits,
            "step_s": 1.0, "idle_s": 0.0, "allreduce_s": 0.0, "steps_to_target": 1.0,
            "time_to_train_s": hours * 3600}


@unittest.skipIf(importlib.util.find_spec("yaml") is None, "python3-yaml missing")
class PalStudyTables(unittest.TestCase):
    def test_best_of_each_kind_per_gpu_count_and_overall(self):
        study = load_script()
        rows = [point("dp", 1, 8, 10), point("dp", 1, 64, 2),
                point("mp2-a", 2, 8, 20), point("mp2-b", 2, 8, 12),
                point("mp2-a", 2, 64, 1.6), point("mp4-a", 4, 64, 1.0, fits="false"),
                point("mp4-b", 4, 64, 0.5, status="failed")]
        table, summary = study.tables(rows)
        self.assertEqual([(r["gpus"], r["hybrid"]) for r in table], [(8, "mp2-b"), (64, "mp2-a")])
        self.assertAlmostEqual(table[0]["advantage"], 10 / 12 - 1)
        self.assertAlmostEqual(table[1]["advantage"], 2 / 1.6 - 1)
        (line,) = summary
        self.assertAlmostEqual(line["best_vs_best"], 0.25)
        self.assertAlmostEqual(line["advantage_at_max_gpus"], 0.25)
        self.assertEqual(line["hybrid_wins_at"], "64")
        self.assertEqual(line["published_holds_at"], "64")  # GNMT's published 8%


if __name__ == "__main__":
    unittest.main()
