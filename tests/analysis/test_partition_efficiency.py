#!/usr/bin/python3
"""Tests for analysis/partition_efficiency.py, run as a user runs it (a subprocess).

    /usr/bin/python3 -m unittest discover -s tests/analysis -v      (from the repository root)

Standard library only; the script itself needs Debian's python3-pandas.
"""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

from analysis_scripts import REPO, script_path

SCRIPT = script_path("partition_efficiency")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
H100_PROFILE = os.path.join(REPO, "scenarios", "profiles", "h100",
                            "cosmoflow128-profile-shards.csv")

# The header of core/include/tessera/core/cost/profile_database.hpp.
HEADER = "device,op,direction,shape,dtype,micro_batch,algorithm,time_s,workspace_bytes,ok"
COLUMNS = ["device", "dtype", "micro_batch", "layer", "shape", "k", "direction",
           "unpartitioned_s", "shard_s", "efficiency", "unpartitioned_algorithm",
           "shard_algorithm"]
A = "conv k3x3x3 s1x1x1 p1x1x1 d1x1x1 g1 in 4x{d}x16x16 out 8x{d}x16x16"
B = "conv k3x3x3 s2x2x2 p1x1x1 d1x1x1 g1 in 8x{d2}x8x8 out 16x{d}x4x4"
LONE = "conv k3x3x3 s1x1x1 p1x1x1 d1x1x1 g1 in 16x4x4x4 out 16x4x4x4"


def has_pandas():
    try:
        return subprocess.run([PYTHON, "-c", "import pandas"], capture_output=True).returncode == 0
    except OSError:
        return False


def row(shape, direction, seconds, algorithm="A0", workspace=0, ok="true", op="conv"):
    return (f"GPU,{op},{direction},{shape},float32,1,{algorithm},{seconds},{workspace},{ok}")


def kernel(shape, forward, backward_data, backward_filter):
    return [row(shape, "forward", forward), row(shape, "backward_data", backward_data),
            row(shape, "backward_filter", backward_filter)]


def synthetic_rows():
    """Layer 1 (A): depth 8 split 2 and 4 ways, a depth-3 member (8/3: not a partition);
    layer 2 (B, stride 2): split 2 ways; a kernel without siblings; rows that must not count."""
    return [
        *kernel(A.format(d=8), 8, 8, 16),
        row(A.format(d=8), "forward", 1, algorithm="broken", ok="false"),  # never the fastest
        row(A.format(d=8), "forward", 4, algorithm="big", workspace=10**9),  # fastest, 1 GB
        *kernel(A.format(d=4), 5, 4, 7),
        *kernel(A.format(d=2), 4, 2, 4),
        *kernel(A.format(d=3), 1, 1, 1),
        *kernel(B.format(d=4, d2=8), 2, 2, 4),
        *kernel(B.format(d=2, d2=4), 2, 1, 2),
        *kernel(LONE, 1, 1, 1),
        row("leaky_relu in 8x4x16x16 out 8x4x16x16", "forward", 9, op="leaky_relu"),
    ]


def write_profile(directory, rows, header=HEADER):
    path = os.path.join(directory, "profile.csv")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("# tessera-profile/1\n# device: GPU\n")
        handle.write("\n".join([header, *rows]) + "\n")
    return path


def run(*args):
    return subprocess.run([PYTHON, SCRIPT, *args], capture_output=True, text=True)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


def efficiencies(rows):
    return {(r["layer"], int(r["k"]), r["direction"]): float(r["efficiency"]) for r in rows}


@unittest.skipUnless(has_pandas(), "needs Debian's python3-pandas")
class PartitionEfficiencyTest(unittest.TestCase):
    def test_efficiencies_within_a_workspace_limit(self):
        with tempfile.TemporaryDirectory() as scratch:
            profile = write_profile(scratch, synthetic_rows())
            out = os.path.join(scratch, "out.csv")
            result = run(profile, "--workspace-limit", "1000000", "--csv", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            columns, rows = read_csv(out)
            self.assertEqual(columns, COLUMNS)
            got = efficiencies(rows)
            expected = {
                # layer 1: T(1) = 8, 8, 16 (the 1 GB forward is over the limit), sum 32
                ("1", 2, "forward"): 8 / (2 * 5), ("1", 2, "backward_data"): 8 / (2 * 4),
                ("1", 2, "backward_filter"): 16 / (2 * 7), ("1", 2, "step"): 32 / (2 * 16),
                ("1", 4, "forward"): 8 / (4 * 4), ("1", 4, "backward_data"): 8 / (4 * 2),
                ("1", 4, "backward_filter"): 16 / (4 * 4), ("1", 4, "step"): 32 / (4 * 10),
                # layer 2: T(1) = 2, 2, 4, sum 8; T(2) = 2, 1, 2, sum 5
                ("2", 2, "forward"): 2 / (2 * 2), ("2", 2, "backward_data"): 2 / (2 * 1),
                ("2", 2, "backward_filter"): 4 / (2 * 2), ("2", 2, "step"): 8 / (2 * 5),
                # totals: sum T(1) / sum k T(k) over the layers having k
                ("total", 2, "forward"): (8 + 2) / (2 * (5 + 2)),
                ("total", 2, "backward_data"): (8 + 2) / (2 * (4 + 1)),
                ("total", 2, "backward_filter"): (16 + 4) / (2 * (7 + 2)),
                ("total", 2, "step"): (32 + 8) / (2 * (16 + 5)),
                ("total", 4, "forward"): 8 / (4 * 4), ("total", 4, "backward_data"): 8 / (4 * 2),
                ("total", 4, "backward_filter"): 16 / (4 * 4), ("total", 4, "step"): 32 / (4 * 10),
            }
            self.assertEqual(set(got), set(expected))  # no depth-3 member, no lone kernel
            for key, value in expected.items():
                self.assertAlmostEqual(got[key], value, places=8, msg=key)
            step = [r for r in rows if r["layer"] == "total" and r["k"] == "2" and
                    r["direction"] == "step"][0]
            self.assertEqual((float(step["unpartitioned_s"]), float(step["shard_s"])), (40, 21))
            lines = result.stdout.splitlines()
            self.assertIn("layer 1: " + A.format(d=8), lines)
            self.assertIn("layer 2: " + B.format(d=4, d2=8), lines)
            total = [l.split() for l in lines if l.split()[:2] == ["total", "2"]][0]
            self.assertEqual(total, ["total", "2", "40", "21", "71.4", "100.0", "111.1", "95.2"])

    def test_fastest_ok_row_without_a_limit(self):
        with tempfile.TemporaryDirectory() as scratch:
            out = os.path.join(scratch, "out.csv")
            result = run(write_profile(scratch, synthetic_rows()), "--csv", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            rows = read_csv(out)[1]
            # the 1 GB algorithm (4 s) now counts; the failed one (1 s) never does
            self.assertAlmostEqual(efficiencies(rows)[("1", 2, "forward")], 4 / (2 * 5))
            forward = [r for r in rows if (r["layer"], r["k"], r["direction"]) ==
                       ("1", "2", "forward")][0]
            self.assertEqual(forward["unpartitioned_algorithm"], "big")

    def test_bad_input_is_exit_2(self):
        with tempfile.TemporaryDirectory() as scratch:
            result = run(os.path.join(scratch, "absent.csv"))
            self.assertEqual(result.returncode, 2)
            self.assertIn("absent.csv: cannot read", result.stderr)
            result = run(write_profile(scratch, synthetic_rows(), header="device,op"))
            self.assertEqual(result.returncode, 2)
            self.assertIn("profile.csv:3: expected the header", result.stderr)
            result = run(write_profile(scratch, [row(A.format(d=8), "forward", "fast")]))
            self.assertEqual(result.returncode, 2)
            self.assertIn("profile.csv:4: micro_batch, time_s", result.stderr)
            result = run(write_profile(scratch, kernel(LONE, 1, 1, 1)))
            self.assertEqual(result.returncode, 2)
            self.assertIn("no 3D convolution with partitioned shards", result.stderr)

    @unittest.skipUnless(os.path.exists(H100_PROFILE), "no H100 profile in this checkout")
    def test_measured_h100_profile(self):
        """Structure only: the measured numbers are the profile's, not the test's."""
        with tempfile.TemporaryDirectory() as scratch:
            out = os.path.join(scratch, "out.csv")
            result = run(H100_PROFILE, "--csv", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            columns, rows = read_csv(out)
            self.assertEqual(columns, COLUMNS)
            totals = [r for r in rows if r["layer"] == "total"]
            self.assertEqual({int(r["k"]) for r in totals}, {2, 4, 8, 16})
            self.assertEqual({r["direction"] for r in totals},
                             {"forward", "backward_data", "backward_filter", "step"})
            self.assertTrue(all(float(r["efficiency"]) > 0 for r in rows))
            self.assertIn("total  16", result.stdout)


if __name__ == "__main__":
    unittest.main()
