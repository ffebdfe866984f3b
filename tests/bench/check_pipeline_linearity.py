#!/usr/bin/env python3
"""A pipelined step's simulation cost, guarded in CI to grow linearly with its micro-batches.

Runs tessera_step_bench's simulate_pipeline_step (a GPT on 8 tensor x 8 pipeline DGX A100 GPUs)
at 32 and 512 micro-batches and compares the CPU time per micro-batch. Playing a step does the
same work per micro-batch however many there are, so the two should be about equal; it fails
when the larger is more than LIMIT times the smaller. Until 2026-11-28 it was 24 times
(SimGrid kept every transfer the simulator had polled, and each finishing one scanned them).

Usage: check_pipeline_linearity.py TESSERA_STEP_BENCH
"""
import json
import subprocess
import sys

LIMIT = 2.0


def per_micro_batch(bench):
    run = subprocess.run(
        [bench, "--benchmark_filter=^simulate_pipeline_step/(32|512)/",
         "--benchmark_format=json"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"check_pipeline_linearity: {bench} exited {run.returncode}:\n{run.stderr}")
    costs = {}
    for benchmark in json.loads(run.stdout)["benchmarks"]:
        micro_batches = int(benchmark["name"].split("/")[1])
        costs[micro_batches] = benchmark["cpu_s_per_micro_batch"]
    if set(costs) != {32, 512}:
        sys.exit(f"check_pipeline_linearity: expected runs at 32 and 512 micro-batches, got {costs}")
    return costs


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    costs = per_micro_batch(sys.argv[1])
    growth = costs[512] / costs[32]
    print(f"CPU per micro-batch: {1e3 * costs[32]:.2f} ms at 32, {1e3 * costs[512]:.2f} ms at 512; "
          f"x{growth:.2f} (limit x{LIMIT})")
    if growth > LIMIT:
        print("FAIL: a pipelined step's simulation grows faster than its micro-batches")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
