#!/usr/bin/python3
"""Tests for analysis/validation/scale_profile.py: the next round's rule, on hand-made profiles.

    /usr/bin/python3 -m unittest discover -s tests/analysis -p 'test_mlperf*' -v   (from the root)
"""

import importlib.util
import os
import tempfile
import unittest

import analysis_scripts

SCRIPT = os.path.join(analysis_scripts.REPO, "analysis", "validation", "scale_profile.py")
HEADER = "device,op,direction,shape,dtype,micro_batch,algorithm,time_s,workspace_bytes,ok"


def load_script():
    spec = importlib.util.spec_from_file_location("scale_profile", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cluster(model, peak, efficiency=None):
    extra = f"  compute_efficiency: {efficiency}   # a comment\n" if efficiency else ""
    return (f"name: c\nnodes: 1\ngpu:\n  model: {model}\n  memory: 16 GB\n"
            f"  fp32_peak: {peak}\n{extra}node:\n  host_memory: 1 GB\n")


class Rule(unittest.TestCase):
    def setUp(self):
        self.m = load_script()
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_flops_are_the_direct_convolutions(self):
        # 2 N K (C/g) (output voxels) (taps): 2 x 4 x 16 x 8 x 64 x 27
        shape = "conv k3x3x3 s1x1x1 p1x1x1 d1x1x1 g1 in 8x4x4x4 out 16x4x4x4"
        self.assertEqual(self.m.convolution_flops(shape, 4), 2 * 4 * 16 * 8 * 64 * 27)
        grouped = "conv k3x3 s1x1 p1x1 d1x1 g2 in 8x5x5 out 8x5x5"
        self.assertEqual(self.m.convolution_flops(grouped, 1), 2 * 8 * 4 * 25 * 9)
        self.assertIsNone(self.m.convolution_flops("max_pool k2 in 8x4", 1))

    def test_each_kernel_keeps_its_fraction_of_the_deepbench_median(self):
        # DeepBench on the reference (peak 10 TFLOP/s): three kernels at efficiencies 0.1, 0.2
        # and 0.4 (the fastest algorithm of the undivided batch counts): median 0.2.
        shape = "conv k1x1 s1x1 p0x0 d1x1 g1 in 100x10x10 out 100x10x10"
        rows = [HEADER]
        for i, efficiency in enumerate([0.1, 0.2, 0.4]):
            s = f"conv k1x1 s1x1 p0x0 d1x1 g1 in 100x10x10 out 100x10x1{i}"  # three kernels
            f = self.m.convolution_flops(s, 10)
            time = f / (efficiency * 10e12)
            rows.append(f"ref,conv,forward,{s},float32,10,FAST,{time},0,true")
            rows.append(f"ref,conv,forward,{s},float32,10,SLOW,{2 * time},0,true")
            rows.append(f"ref,conv,forward,{s},float32,5,MICRO,{time / 100},0,true")  # divided
        rows.append(f"ref,relu,forward,x,float32,10,x,1,0,true")
        deepbench = self.write("deepbench.csv", "# tessera-profile/1\n" + "\n".join(rows) + "\n")
        network = self.write("network.csv", "# tessera-profile/1\n# device: ref\n" + HEADER + "\n"
                             f"ref,conv,backward_filter,{shape},float32,10,ALGO_1,0.004,64,true\n"
                             f"ref,max_pool,forward,pool,float32,10,default,0.001,0,true\n"
                             f"ref,allreduce,forward,x,float32,1,ring,0.001,0,true\n")
        reference = self.write("ref.yaml", cluster("ref", "10 TFLOP/s"))
        target = self.write("target.yaml", cluster("TARGET-GPU", "2.5 TFLOP/s", 0.4))
        out = os.path.join(self.tmp.name, "out.csv")
        self.assertEqual(self.m.main([network, "--deepbench", deepbench, "--reference-cluster",
                                      reference, "--target-cluster", target, "--output", out]), 0)
        _, scaled = self.m.read_profile(out)
        # Only the convolution, renamed to the target and x (10 x 0.2) / (2.5 x 0.4) = 2.
        self.assertEqual(len(scaled), 1)
        self.assertEqual(scaled[0]["device"], "TARGET-GPU")
        self.assertAlmostEqual(scaled[0]["time_s"], 0.008)
        self.assertEqual(scaled[0]["workspace_bytes"], "64")
        with open(out) as f:
            self.assertIn("# device: TARGET-GPU", f.read())

    def test_further_profiles_add_their_rows_as_algorithms(self):
        shape = "conv k1x1 s1x1 p0x0 d1x1 g1 in 100x10x10 out 100x10x10"
        flops = self.m.convolution_flops(shape, 10)
        deepbench = self.write("deepbench.csv", "# tessera-profile/1\n" + HEADER + "\n" +
                               f"ref,conv,forward,{shape},float32,10,A,{flops / 1e12},0,true\n")
        first = self.write("first.csv", "# tessera-profile/1\n# device: ref\n" + HEADER + "\n"
                           f"ref,conv,forward,{shape},float32,10,ALGO_1,0.004,0,true\n")
        more = self.write("more.csv", "# tessera-profile/1\n# device: ref\n" + HEADER + "\n"
                          f"ref,conv,forward,{shape},float32,10,OTHER,0.001,0,true\n")
        reference = self.write("ref.yaml", cluster("ref", "10 TFLOP/s"))
        target = self.write("target.yaml", cluster("T", "10 TFLOP/s", 0.1))
        out = os.path.join(self.tmp.name, "out.csv")
        self.assertEqual(self.m.main([first, more, "--deepbench", deepbench, "--reference-cluster",
                                      reference, "--target-cluster", target, "--output", out]), 0)
        _, scaled = self.m.read_profile(out)
        # The reference runs DeepBench at 1 TFLOP/s, the target at 1: times unchanged.
        self.assertEqual({(r["algorithm"], round(r["time_s"], 9)) for r in scaled},
                         {("ALGO_1", 0.004), ("OTHER", 0.001)})
        with open(out) as f:
            self.assertIn("first.csv + ", f.read())

    def test_graph_engine_rows_count_only_from_further_profiles(self):
        # The rule's reference is cuDNN's legacy interface: an ENGINE_ row, however fast, neither
        # times the network nor moves the DeepBench median; the same file given again adds it.
        shape = "conv k1x1 s1x1 p0x0 d1x1 g1 in 100x10x10 out 100x10x10"
        flops = self.m.convolution_flops(shape, 10)
        deepbench = self.write("deepbench.csv", "# tessera-profile/1\n" + HEADER + "\n" +
                               f"ref,conv,forward,{shape},float32,10,A,{flops / 1e12},0,true\n"
                               f"ref,conv,forward,{shape},float32,10,ENGINE_9,{flops / 4e12},0,"
                               "true\n")
        network = self.write("network.csv", "# tessera-profile/1\n# device: ref\n" + HEADER + "\n"
                             f"ref,conv,forward,{shape},float32,10,ALGO_1,0.004,0,true\n"
                             f"ref,conv,forward,{shape},float32,10,ENGINE_3_K1=2,0.001,0,true\n")
        reference = self.write("ref.yaml", cluster("ref", "10 TFLOP/s"))
        target = self.write("target.yaml", cluster("T", "10 TFLOP/s", 0.1))
        out = os.path.join(self.tmp.name, "out.csv")
        arguments = ["--deepbench", deepbench, "--reference-cluster", reference,
                     "--target-cluster", target, "--output", out]
        self.assertEqual(self.m.main([network] + arguments), 0)
        _, scaled = self.m.read_profile(out)
        # DeepBench's median from A alone (1 TFLOP/s, the target's too): times unchanged.
        self.assertEqual({(r["algorithm"], round(r["time_s"], 9)) for r in scaled},
                         {("ALGO_1", 0.004)})
        self.assertEqual(self.m.main([network, network] + arguments), 0)
        _, scaled = self.m.read_profile(out)
        self.assertEqual({(r["algorithm"], round(r["time_s"], 9)) for r in scaled},
                         {("ALGO_1", 0.004), ("ENGINE_3_K1=2", 0.001)})

    def test_compare_scales_the_reference_to_every_cluster_once(self):
        reference_module = analysis_scripts.load_file(
            os.path.join(analysis_scripts.REPO, "analysis", "validation", "compare_reference.py"),
            "compare_reference")
        shape = "conv k1x1 s1x1 p0x0 d1x1 g1 in 100x10x10 out 100x10x10"
        flops = self.m.convolution_flops(shape, 10)
        deepbench = self.write("deepbench.csv", "# tessera-profile/1\n" + HEADER + "\n" +
                               f"ref,conv,forward,{shape},float32,10,A,{flops / 1e12},0,true\n")
        network = self.write("network.csv", "# tessera-profile/1\n# device: ref\n" + HEADER +
                             f"\nref,conv,forward,{shape},float32,10,ALGO_1,0.004,0,true\n")
        reference = self.write("ref.yaml", cluster("ref", "10 TFLOP/s"))
        a = self.write("a.yaml", cluster("A-GPU", "5 TFLOP/s", 0.1))
        b = self.write("b.yaml", cluster("B-GPU", "20 TFLOP/s", 0.1))
        out_dir = os.path.join(self.tmp.name, "profiles")
        reference_module.scale_for_clusters([a, b, a], [network], deepbench, reference, out_dir)
        self.assertEqual(sorted(os.listdir(out_dir)), ["a.csv", "b.csv"])
        _, rows = self.m.read_profile(os.path.join(out_dir, "a.csv"))
        self.assertAlmostEqual(rows[0]["time_s"], 0.008)  # 1 TFLOP/s against 0.5
        with self.assertRaises(Exception) as caught:
            reference_module.scale_for_clusters([a], [network + ".missing"], deepbench,
                                                reference, out_dir)
        self.assertIn("a.yaml", str(caught.exception))

    def test_bad_input_exits_2_naming_the_file(self):
        missing = os.path.join(self.tmp.name, "missing.csv")
        no_peak = self.write("no_peak.yaml", "name: c\ngpu:\n  model: X\n")
        for args in ([missing, "--deepbench", missing, "--reference-cluster", no_peak,
                      "--target-cluster", no_peak, "--output", missing],):
            self.assertEqual(self.m.main(args), 2)
        bad_header = self.write("bad.csv", "# tessera-profile/1\ndevice,op\n")
        with self.assertRaises(self.m.BadInput) as caught:
            self.m.read_profile(bad_header)
        self.assertIn("bad.csv", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
