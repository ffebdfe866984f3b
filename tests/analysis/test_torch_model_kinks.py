#!/usr/bin/python3
"""Tests for analysis/torch_model.py's ReLU sides (_SidedKink): within the tolerance of zero the
derivative takes the side given, elsewhere its own; the forward value is the ReLU's.

    /usr/bin/python3 -m unittest discover -s tests/analysis -v      (from the repository root)
"""

import unittest

import analysis_scripts

try:
    import torch
except ImportError:  # python3-torch absent: analysis/torch_model.py cannot run either
    torch = None


@unittest.skipIf(torch is None, "needs python3-torch")
class SidedKink(unittest.TestCase):
    def setUp(self):
        self.kink = analysis_scripts.load("torch_model")._SidedKink

    def gradient(self, x, positive, slope, tolerance):
        x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        taken = []
        y = self.kink.apply(x, torch.tensor(positive), slope, tolerance, taken)
        y.sum().backward()
        return y.detach().tolist(), x.grad.tolist(), taken[0]

    def test_inputs_near_zero_take_the_side_given_and_the_others_their_own(self):
        # RMS of x is about 1: 1e-7 and -1e-7 lie within 1e-5 of zero, 1 and -1 do not.
        y, gradient, taken = self.gradient([1e-7, -1e-7, 1.0, -1.0, 1.0, -1.0],
                                           [False, True, False, True, True, False], 0.0, 1e-5)
        self.assertEqual(gradient, [0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
        self.assertEqual(y, [1e-7, 0.0, 1.0, 0.0, 1.0, 0.0])
        self.assertEqual(taken, 2)

    def test_a_leaky_slope_is_the_derivative_on_the_negative_side(self):
        _, gradient, taken = self.gradient([1e-7, 2.0, -2.0], [False, True, False], 0.25, 1e-5)
        self.assertEqual(gradient, [0.25, 1.0, 0.25])
        self.assertEqual(taken, 1)

    def test_a_zero_tolerance_keeps_every_side_its_own(self):
        _, gradient, taken = self.gradient([1e-7, -1e-7, 1.0], [False, True, False], 0.0, 0.0)
        self.assertEqual(gradient, [1.0, 0.0, 1.0])
        self.assertEqual(taken, 0)


if __name__ == "__main__":
    unittest.main()
