#!/usr/bin/python3
"""Tests for analysis/validation/compare_trace.py: where one GPU's simulated step goes.

    /usr/bin/python3 -m unittest discover -s tests/analysis -p 'test_mlperf*' -v   (from the root)
"""

import json
import os
import tempfile
import unittest

import analysis_scripts

SCRIPT = os.path.join(analysis_scripts.REPO, "analysis", "validation", "compare_trace.py")


def span(name, pid, dur_us, source=None, tid=0):
    event = {"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": 0, "dur": dur_us}
    if source:
        event["args"] = {"source": source}
    return event


class TopOperations(unittest.TestCase):
    def setUp(self):
        self.m = analysis_scripts.load_file(SCRIPT, "compare_trace")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, trace):
        path = os.path.join(self.tmp.name, "trace.json")
        with open(path, "w") as f:
            json.dump(trace, f)
        return path

    def test_sums_by_name_on_the_first_gpu_longest_first(self):
        path = self.write({"traceEvents": [
            {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "GPU 0"}},
            span("conv1 backward_filter", 0, 40000, "profile"),
            span("act1 forward", 0, 1000, "roofline"),
            span("conv1 backward_filter", 0, 20000, "profile"),
            span("all-reduce tree", 0, 5000, "simulated", tid=1),
            span("conv1 backward_filter", 1, 99000000, "profile"),  # another GPU: not counted
        ]})
        operations = self.m.top_operations(path, count=2)
        self.assertEqual([(n, round(s, 6), src) for n, s, src in operations],
                         [("conv1 backward_filter", 0.06, "profile"),
                          ("all-reduce tree", 0.005, "simulated")])
        self.assertEqual(self.m.describe(operations, 0.1),
                         "conv1 backward_filter 60.0 ms, 60%, profile; "
                         "all-reduce tree 5.0 ms, 5%, simulated")

    def test_unreadable_or_empty_trace_gives_nothing(self):
        self.assertEqual(self.m.top_operations(os.path.join(self.tmp.name, "missing.json")), [])
        self.assertEqual(self.m.top_operations(self.write({"traceEvents": []})), [])
        bad = os.path.join(self.tmp.name, "bad.json")
        with open(bad, "w") as f:
            f.write("{not json")
        self.assertEqual(self.m.top_operations(bad), [])
        self.assertEqual(self.m.describe([], 0.1), "")


if __name__ == "__main__":
    unittest.main()
