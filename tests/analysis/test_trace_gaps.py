#!/usr/bin/python3
"""Tests for analysis/trace_gaps.py: gaps between compute spans, split by memory changes.

    /usr/bin/python3 -m unittest discover -s tests/analysis -v      (from the repository root)
"""

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import analysis_scripts


def load_script():
    return analysis_scripts.load("trace_gaps")


def span(name, ts, dur, pid=0, tid=0):
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid}


def memory(ts, pid=0):
    return {"ph": "C", "name": "device memory in use", "ts": ts, "pid": pid, "args": {"bytes": 1}}


class TraceGaps(unittest.TestCase):
    def test_gaps_split_by_a_memory_change_inside_them(self):
        gaps = load_script()
        events = [span("a", 10, 5), span("b", 115, 5), span("c", 130, 10),
                  memory(0), memory(50),  # inside the a -> b gap (15 .. 115)
                  span("copy", 16, 90, tid=3),  # another track: not a compute span
                  span("x", 0, 1, pid=1), span("y", 4, 1, pid=1), memory(2, pid=1)]
        summaries = gaps.gaps_by_rank(events)
        rank0 = summaries[0]
        self.assertEqual(rank0["spans"], 3)
        self.assertEqual(rank0["first_us"], 10)
        self.assertEqual(gaps.totals(rank0["gaps"], True), (1, 100.0, 100.0))
        self.assertEqual(gaps.totals(rank0["gaps"], False), (1, 10.0, 10.0))
        self.assertEqual(gaps.totals(summaries[1]["gaps"], True), (1, 3.0, 3.0))

    def test_bad_input_exits_2_naming_the_file(self):
        gaps = load_script()
        with tempfile.TemporaryDirectory() as folder:
            no_spans = os.path.join(folder, "empty.json")
            with open(no_spans, "w", encoding="utf-8") as handle:
                json.dump({"traceEvents": [memory(0)]}, handle)
            not_json = os.path.join(folder, "broken.json")
            with open(not_json, "w", encoding="utf-8") as handle:
                handle.write("{\n  oops")
            for path in (no_spans, not_json, os.path.join(folder, "missing.json")):
                errors = io.StringIO()
                with redirect_stdout(io.StringIO()), redirect_stderr(errors):
                    self.assertEqual(gaps.main([path]), 2, path)
                self.assertIn(path, errors.getvalue())


if __name__ == "__main__":
    unittest.main()
