#!/usr/bin/python3
"""Plot scaling results written by Tessera (schema: analysis/RESULT_SCHEMA.md).

    plot_scaling.py RESULTS.csv [RESULTS2.csv ...] --out DIR [--scaling strong|weak|auto]

For every (scenario, backend) in the inputs it writes, as PNG and SVG, into DIR:

    <scenario>_<backend>_step_time     step time vs GPUs (log2 x) with the ideal-scaling line
    <scenario>_<backend>_efficiency    parallel efficiency vs GPUs
    <scenario>_<backend>_breakdown     stacked per-point breakdown of the step time (s)
    <scenario>_<backend>_throughput    samples/s vs GPUs with the ideal (linear) line
    <scenario>_<backend>_time_to_train time to train (h) and epochs to the target vs GPUs, when
                                       the results carry it (a scenario with a training target);
                                       points whose batch lies outside the steps-to-target table
                                       (note: "time to train extrapolated") hollow

and, for a scenario present with both backends `real` and `sim`,

    <scenario>_real_vs_sim_step_time   measured and simulated step time overlaid

Points whose status is not `ok` (does_not_fit, skipped, failed) are drawn in red (crossed
markers, hatched bars) and named in the legend. A plain-text summary table per scenario/backend
goes to stdout.

Efficiency is relative to the smallest GPU count g0 with status ok:
    weak:   t(g0) / t(g)
    strong: t(g0) * g0 / (t(g) * g)
    auto:   weak when global_batch / gpus is the same at every point, strong otherwise.

Exit codes: 0 ok, 1 runtime failure, 2 bad input (missing file, wrong columns, bad values).
Needs Debian's python3-matplotlib and python3-pandas; run it with /usr/bin/python3.
"""

import argparse
import os
import sys

# Its siblings in this folder, found as when run (the script's folder is on the path).
import scaling_axes
import time_to_train_plot
from scaling_efficiency import resolve_scaling
from scaling_figures import plot_overlay, plot_series
from scaling_results import BadInput, has_time_to_train, load
from scaling_table import print_table

EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2


class RuntimeFailure(Exception):
    pass


# ---------------------------------------------------------------------------------------------


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        prog="plot_scaling.py",
        description="Plot step time, parallel efficiency, step-time breakdown and throughput "
                    "from Tessera results CSVs (analysis/RESULT_SCHEMA.md).")
    parser.add_argument("results", nargs="+", metavar="RESULTS.csv",
                        help="results.csv files (sim and/or real backend)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder for the PNG and SVG files (created if missing)")
    parser.add_argument("--scaling", choices=("strong", "weak", "auto"), default="auto",
                        help="efficiency definition: weak t(g0)/t(g), strong "
                             "t(g0)*g0/(t(g)*g); auto: weak when global_batch grows in "
                             "proportion to gpus, else strong (default: auto)")
    return parser.parse_args(argv)


def run(arguments):
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "tessera"  # reproducible SVG ids
        import importlib
        for module in ("matplotlib.pyplot", "pandas"):
            importlib.import_module(module)
    except ImportError as error:
        raise RuntimeFailure(f"{error}; needs Debian's python3-matplotlib and python3-pandas "
                             "(run with /usr/bin/python3)") from None

    frame = load(arguments.results)

    out_dir = arguments.out
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise BadInput(f"{out_dir}: --out exists and is not a directory")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as error:
        raise BadInput(f"{out_dir}: cannot create the --out directory ({error.strerror})") \
            from None

    written = []
    for scenario in frame["scenario"].unique():
        of_scenario = frame[frame["scenario"] == scenario]
        scalings = {}
        for backend in of_scenario["backend"].unique():
            series = of_scenario[of_scenario["backend"] == backend].reset_index(drop=True)
            scaling = resolve_scaling(series, arguments.scaling)
            scalings[backend] = scaling
            print_table(series, scenario, backend, scaling, arguments.scaling)
            plot_series(series, scenario, backend, scaling, out_dir, written)
            if has_time_to_train(series):
                # Its axis, legend and file helpers are the other figures'.
                time_to_train_plot.plot(series, scenario, backend, out_dir, written,
                                        scaling_axes)
        if "real" in scalings and "sim" in scalings:
            real = of_scenario[of_scenario["backend"] == "real"].reset_index(drop=True)
            sim = of_scenario[of_scenario["backend"] == "sim"].reset_index(drop=True)
            plot_overlay(real, sim, scenario, scalings["real"], out_dir, written)
    print(f"wrote {len(written)} files to {out_dir}")


def main(argv=None):
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        run(arguments)
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RuntimeFailure as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # no tracebacks for users; say what failed
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_RUNTIME
    return 0


if __name__ == "__main__":
    sys.exit(main())
