#!/usr/bin/python3
"""Narayanan et al. (SC21, Megatron-LM), Table 1, simulated: every row's GPT model on its
tensor x pipeline x data split of Selene (the dgx_a100_selene preset), and the achieved
teraFLOP/s per GPU predicted against those published.

    reproduce.py TESSERA OUTPUT_DIR [--rows N ...]

The method, fixed before any row was compared (docs/measurements/2026-11-27-megatron.md):
kernels at the preset's roofline (A100 tensor-core peak, the default efficiencies), float16,
the zoo's gpt2 at the row's size with 2,048 tokens and a 51,200-token vocabulary, unfused
attention (Megatron-LM's 2021 kernels keep the attention probabilities), full activation
recomputation, micro-batches of one sequence through a 1F1B pipeline (accumulated in one stage
where there is one), no sharded optimizer state.
Achieved FLOP/s are the paper's FLOPs per iteration over the predicted step, as the paper
computes them from its measured step. Writes OUTPUT_DIR/comparison.csv and prints the table.
"""

import argparse
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEQUENCE, VOCABULARY = 2048, 51200


def published_rows():
    with open(os.path.join(HERE, "sc21_table1.csv"), encoding="utf-8") as stream:
        lines = [line for line in stream if not line.startswith("#")]
    return list(csv.DictReader(lines))


def iteration_flops(batch, layers, hidden):
    """The paper's FLOPs per iteration (its equation 3: forward, backward and recomputation)."""
    return 96 * batch * SEQUENCE * layers * hidden ** 2 * (
        1 + SEQUENCE / (6 * hidden) + VOCABULARY / (16 * layers * hidden))


def scenario_text(row):
    tensor, pipeline, gpus = int(row["tensor"]), int(row["pipeline"]), int(row["gpus"])
    batch = int(row["batch"])
    data = gpus // (tensor * pipeline)
    per_replica = batch // data
    # Micro-batches of one sequence, accumulated in a single stage as in a pipeline's.
    pipeline_section = (f"  model: {{degree: {pipeline}, micro_batches: {per_replica}, "
                        "schedule: 1f1b}\n")
    return (f"name: megatron_{row['parameters_billion']}b\n"
            "model:\n"
            "  zoo: gpt2\n"
            f"  options: {{layers: {row['layers']}, hidden: {row['hidden']}, "
            f"heads: {row['attention_heads']}, sequence_length: {SEQUENCE}, "
            f"vocabulary: {VOCABULARY}, attention: unfused}}\n"
            f"  mini_batch: {per_replica}\n"
            "  dtype: float16\n"
            "parallelism:\n"
            f"  data: {data}\n"
            f"  tensor: {tensor}\n"
            + pipeline_section +
            "memory: {recompute: full}\n"
            "platform: {preset: dgx_a100_selene}\n")


def simulate(tessera, row, directory):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "scenario.yaml")
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(scenario_text(row))
    run = subprocess.run(
        [tessera, "run", path, "--backend", "sim", "--output", directory, "--fresh"],
        capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{path}: exit {run.returncode}: {run.stderr[-2000:]}")
    with open(os.path.join(directory, "sim.csv"), encoding="utf-8") as stream:
        return next(csv.DictReader(stream))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tessera")
    parser.add_argument("output")
    parser.add_argument("--rows", type=int, nargs="*", help="row indices (0-based); all if none")
    args = parser.parse_args()
    rows = published_rows()
    chosen = args.rows if args.rows else range(len(rows))
    results = []
    for index in chosen:
        row = rows[index]
        result = simulate(args.tessera, row, os.path.join(args.output, f"row{index}"))
        step = float(result["step_s"])
        gpus = int(row["gpus"])
        flops = iteration_flops(int(row["batch"]), int(row["layers"]), int(row["hidden"]))
        predicted = flops / (step * gpus) / 1e12 if step > 0 else 0.0
        published = float(row["teraflops_per_gpu"])
        published_step = flops / (published * 1e12 * gpus)
        results.append({
            "parameters_billion": row["parameters_billion"],
            "tensor": row["tensor"], "pipeline": row["pipeline"], "gpus": gpus,
            "batch": row["batch"], "status": result["status"],
            "memory_gib": f"{float(result['peak_memory_bytes']) / 2**30:.1f}",
            "published_step_s": f"{published_step:.3f}", "predicted_step_s": f"{step:.3f}",
            "published_tflops_per_gpu": f"{published:.0f}",
            "predicted_tflops_per_gpu": f"{predicted:.0f}",
            "error_percent": f"{(predicted - published) / published * 100:+.1f}",
            "compute_s": result["compute_s"], "allreduce_s": result["allreduce_s"],
            "other_comm_s": result["other_comm_s"], "idle_s": result["idle_s"]})
        print(f"{row['parameters_billion']:>7}B  t{row['tensor']} p{row['pipeline']} "
              f"{gpus:>5} GPUs: predicted {predicted:6.1f} TFLOP/s/GPU, published {published:.0f} "
              f"({results[-1]['error_percent']}%), {result['status']}", flush=True)
    with open(os.path.join(args.output, "comparison.csv"), "w", encoding="utf-8",
              newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(results[0]))
        writer.writeheader()
        writer.writerows(results)
    errors = [abs(float(r["error_percent"])) for r in results]
    print(f"mean absolute error {sum(errors) / len(errors):.1f}% over {len(errors)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
