#!/usr/bin/env python3
"""Full-mode step simulation speed, guarded in CI as a ratio to a fixed reference run.

Runs tessera_step_bench's full-mode CosmoFlow-512 step at 2,048 GPUs (simulate_step/2048/0,
every GPU played) and its reference_work (a fixed event-queue workload, no Tessera code) in the
same job, REPETITIONS times each, takes the least CPU time of each and divides. The ratio cancels
the machine's speed; it fails when the ratio exceeds the baseline recorded in
step_ratio_baseline.json by more than its tolerance, so that a change that makes every simulated
step costlier fails loudly instead of drifting unnoticed.

Usage: check_step_ratio.py TESSERA_STEP_BENCH BASELINE_JSON [--record]
  --record  write the measured ratio as the new baseline (after a deliberate change).
"""
import json
import subprocess
import sys

REPETITIONS = 3


def least(benchmarks, prefix, counter):
    values = [b[counter] for b in benchmarks
              if b["name"].startswith(prefix) and b.get("run_type") == "iteration"]
    if not values:
        sys.exit(f"check_step_ratio: the benchmark printed no {prefix} run")
    return min(values)


def measure(bench):
    run = subprocess.run(
        [bench, "--benchmark_filter=^(reference_work|simulate_step/2048/0/)",
         f"--benchmark_repetitions={REPETITIONS}", "--benchmark_format=json"],
        capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"check_step_ratio: {bench} exited {run.returncode}:\n{run.stderr}")
    benchmarks = json.loads(run.stdout)["benchmarks"]
    step = least(benchmarks, "simulate_step/2048/0", "child_cpu_s")
    reference = least(benchmarks, "reference_work", "cpu_s")
    ratio = step / reference
    print(f"full-mode step at 2,048 GPUs: {step:.3f} s of CPU; reference work: {reference:.3f} s; "
          f"ratio {ratio:.3f}")
    return ratio


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bench, baseline_path = sys.argv[1], sys.argv[2]
    ratio = measure(bench)
    if "--record" in sys.argv[3:]:
        with open(baseline_path, "w") as out:
            json.dump({"ratio": round(ratio, 3), "tolerance": 1.3,
                       "measured": "python3 tests/bench/check_step_ratio.py "
                                   "build/tests/tessera_step_bench "
                                   "tests/bench/step_ratio_baseline.json --record"},
                      out, indent=2)
            out.write("\n")
        print(f"recorded {ratio:.3f} in {baseline_path}")
        return 0
    with open(baseline_path) as source:
        baseline = json.load(source)
    limit = baseline["ratio"] * baseline["tolerance"]
    print(f"baseline ratio {baseline['ratio']:.3f}, limit {limit:.3f} "
          f"(x{baseline['tolerance']})")
    if ratio > limit:
        # A machine busy for a moment stretches one side: only a second ratio over the limit fails.
        print("over the limit: measuring again")
        ratio = min(ratio, measure(bench))
    if ratio > limit:
        print("FAIL: simulating a full-mode step got costlier relative to the reference work; "
              "find the change (docs/measurements/2026-11-25-full-mode.md says where the time "
              "goes), or record a deliberate one with --record")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
