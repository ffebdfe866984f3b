#!/usr/bin/python3
"""Tests for analysis/validation/torch_cosmoflow_kernels.py's conversion of its timings into a
tessera profile (--rows; no GPU or PyTorch needed).

    /usr/bin/python3 -m unittest discover -s tests/analysis -p 'test_mlperf*' -v   (from the root)
"""

import csv
import os
import tempfile
import unittest

import analysis_scripts

SCRIPT = os.path.join(analysis_scripts.REPO, "analysis", "validation",
                      "torch_cosmoflow_kernels.py")
PROFILE = os.path.join(analysis_scripts.REPO, "scenarios", "profiles", "h200",
                       "mlperf-cosmoflow-profile.csv")


class Rows(unittest.TestCase):
    def setUp(self):
        self.m = analysis_scripts.load_file(SCRIPT, "torch_cosmoflow_kernels")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_shapes_are_the_keys_tessera_profile_wrote(self):
        # Every convolution shape of the committed `tessera profile` of the same network.
        with open(PROFILE) as f:
            profiled = {row["shape"] for row in csv.DictReader(
                line for line in f if not line.startswith("#")) if row["op"] == "conv"}
        self.assertEqual({self.m.convolution_shape(i) for i in range(5)}, profiled)

    def test_timings_become_one_algorithm_per_layout(self):
        rows = os.path.join(self.tmp.name, "rows.csv")
        with open(rows, "w") as f:
            f.write("what,direction,batch,layout,ms,tflops\n"
                    "conv2,backward_filter,1,NCDHW,1.5,7.0\n"
                    "conv2,backward_filter,1,NDHWC,2.5,4.0\n"
                    "step (5597604 parameters),all,1,NCDHW,7.6,nan\n")
        out = os.path.join(self.tmp.name, "profile.csv")
        self.assertEqual(self.m.main(["--rows", rows, "--device", "GPU X",
                                      "--profile-output", out]), 0)
        with open(out) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "# tessera-profile/1")
        body = [line for line in lines if not line.startswith("#")]
        self.assertEqual(body[0], self.m.PROFILE_HEADER)
        self.assertEqual(body[1:], [
            "GPU X,conv,backward_filter,conv k2x2x2 s1x1x1 p0x0x0 d1x1x1 g1 bias in 32x64x64x64 "
            "out 64x63x63x63,float32,1,torch_benchmark_NCDHW,0.0015,0,true",
            "GPU X,conv,backward_filter,conv k2x2x2 s1x1x1 p0x0x0 d1x1x1 g1 bias in 32x64x64x64 "
            "out 64x63x63x63,float32,1,torch_benchmark_NDHWC,0.0025,0,true"])

    def test_bad_input_exits_2(self):
        out = os.path.join(self.tmp.name, "profile.csv")
        missing = os.path.join(self.tmp.name, "missing.csv")
        self.assertEqual(self.m.main(["--rows", missing, "--device", "X",
                                      "--profile-output", out]), 2)
        self.assertEqual(self.m.main(["--rows", missing, "--profile-output", out]), 2)
        bad = os.path.join(self.tmp.name, "bad.csv")
        with open(bad, "w") as f:
            f.write("what,direction,batch,layout,ms\nconv1,forward,1,NCDHW,fast\n")
        self.assertEqual(self.m.main(["--rows", bad, "--device", "X", "--profile-output", out]), 2)


if __name__ == "__main__":
    unittest.main()
