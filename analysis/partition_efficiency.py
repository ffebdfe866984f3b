#!/usr/bin/python3
"""Per-GPU efficiency of spatially partitioned 3D convolutions, from a Tessera profile.

    partition_efficiency.py PROFILE.csv [--workspace-limit BYTES] [--csv OUT.csv]

Why: hybrid data + spatial parallelism (Oyama et al. 2020) splits each sample along depth D over
k GPUs; each GPU runs the layer's convolution on a shard of depth D/k. Whether that pays depends
on how fast a GPU runs the small shard: the per-GPU throughput relative to the unpartitioned
layer is T(1) / (k * T(k)), T(k) being the time of the shard kernel at k partitions. 100% means
the shard runs exactly k times faster; below that the GPU is underused.

What: PROFILE.csv is a file written by `tessera profile` (format: profile_database.hpp), e.g. of
scenarios/cosmoflow128_profile_shards.yaml, which lists every shard of 1..16 depth partitions.
Rows of op `conv` whose shape is 3D ("in CxDxHxW out CxDxHxW") count. A kernel's time is its
fastest row with ok = true (and workspace_bytes <= --workspace-limit when given). A layer is the
group of kernels (same device, dtype and micro-batch) that differ only in their D extents; its
largest D is the unpartitioned kernel and k = D_full / D_shard for each other member, input and
output alike (members with a non-integer or unequal ratio are left out, and so are groups of one:
layers the profile has unsplit only). Per layer and k it prints the efficiency of forward,
backward_data, backward_filter and of their sum ("step", a training step's convolution work), and
per k a total over the layers that have that k: sum of T(1) over sum of k * T(k).

Halos: a shard's profiled kernel is the slab alone, input D/k (not D/k plus halo planes) with the
layer's own zero padding along D where the neighbours' planes would be (core's plan_shards keeps
local_inputs halo-free). It computes the same output, with the same multiply-adds, as the shard's
real work, but reads no halo planes and is one kernel call, whereas the real backend may split a
shard into an interior and boundary boxes (kernels/src/partitioned_convolution.cpp). The halo
exchange is not in these numbers either: they are the convolution kernels' efficiencies only.
The first layer's backward_data, which a training step skips (its input needs no gradient), is
in "step" as the profile has it.

Writes a text table to stdout and, with --csv, one row per layer, k and direction (columns
device, dtype, micro_batch, layer, shape, k, direction, unpartitioned_s, shard_s, efficiency,
unpartitioned_algorithm, shard_algorithm; layer `total` for the totals). Times in seconds.

Exit codes: 0 ok, 1 runtime failure, 2 bad input (missing file, wrong header, bad values).
Needs Debian's python3-pandas; run it with /usr/bin/python3.
"""

import argparse
import csv
import re
import sys

from script_exit import EXIT_RUNTIME, BadInput, exit_status

HEADER = ["device", "op", "direction", "shape", "dtype", "micro_batch", "algorithm", "time_s",
          "workspace_bytes", "ok"]
DIRECTIONS = ["forward", "backward_data", "backward_filter"]
STEP = "step"  # the sum of the three directions
SHAPE = re.compile(r"^conv (?P<params>.*?) in (?P<ic>\d+)x(?P<id>\d+)x(?P<ih>\d+)x(?P<iw>\d+) "
                   r"out (?P<oc>\d+)x(?P<od>\d+)x(?P<oh>\d+)x(?P<ow>\d+)$")
CSV_COLUMNS = ["device", "dtype", "micro_batch", "layer", "shape", "k", "direction",
               "unpartitioned_s", "shard_s", "efficiency", "unpartitioned_algorithm",
               "shard_algorithm"]


def read_profile(path):
    """The profile's rows as a DataFrame (comment lines skipped, every value checked)."""
    import pandas as pd
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            lines = [(number, text) for number, text in enumerate(handle, start=1)
                     if not text.startswith("#") and text.strip()]
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"{path}: cannot read ({error})") from None
    if not lines:
        raise BadInput(f"{path}: no header")
    records = list(csv.reader(text for _, text in lines))
    if records[0] != HEADER:
        raise BadInput(f"{path}:{lines[0][0]}: expected the header {','.join(HEADER)}")
    rows = []
    for (line, _), record in zip(lines[1:], records[1:]):
        if len(record) != len(HEADER):
            raise BadInput(f"{path}:{line}: expected {len(HEADER)} columns, got {len(record)}")
        row = dict(zip(HEADER, record))
        try:
            row["micro_batch"] = int(row["micro_batch"])
            row["time_s"] = float(row["time_s"])
            row["workspace_bytes"] = float(row["workspace_bytes"])
        except ValueError:
            raise BadInput(f"{path}:{line}: micro_batch, time_s, workspace_bytes: expected "
                           "numbers") from None
        if row["ok"] not in ("true", "false"):
            raise BadInput(f"{path}:{line}: ok: expected true or false, got '{row['ok']}'")
        if not row["time_s"] >= 0:
            raise BadInput(f"{path}:{line}: time_s: expected seconds >= 0")
        row["ok"] = row["ok"] == "true"
        rows.append(row)
    if not rows:
        raise BadInput(f"{path}: no rows after the header")
    return pd.DataFrame(rows)


def best_times(frame, workspace_limit):
    """Fastest usable algorithm per 3D convolution kernel: shape, D extents and layer key."""
    usable = frame[(frame["op"] == "conv") & frame["ok"]]
    if workspace_limit is not None:
        usable = usable[usable["workspace_bytes"] <= workspace_limit]
    keys = ["device", "dtype", "micro_batch", "shape", "direction"]
    best = usable.loc[usable.groupby(keys)["time_s"].idxmin()].copy()
    parts = best["shape"].str.extract(SHAPE)
    best = best[parts["params"].notna()]
    parts = parts[parts["params"].notna()]
    best["in_d"] = parts["id"].astype(int)
    best["out_d"] = parts["od"].astype(int)
    best["layer_key"] = (parts["params"] + " in " + parts["ic"] + "xDx" + parts["ih"] + "x" +
                         parts["iw"] + " out " + parts["oc"] + "xDx" + parts["oh"] + "x" +
                         parts["ow"])
    best["volume"] = parts["ih"].astype(int) * parts["iw"].astype(int) * best["in_d"]
    return best[keys + ["algorithm", "time_s", "in_d", "out_d", "layer_key", "volume"]]


def pairs(best):
    """One row per layer, k > 1 and direction: the unpartitioned and the shard kernel's times."""
    import pandas as pd
    group = ["device", "dtype", "micro_batch", "layer_key"]
    full = best.loc[best.groupby(group)["out_d"].idxmax(), group + ["out_d", "in_d", "volume"]]
    full = full.rename(columns={"out_d": "full_out_d", "in_d": "full_in_d"})
    # Number the layers largest input volume first (network order for CosmoFlow).
    full = full.sort_values(["device", "dtype", "micro_batch", "volume"],
                            ascending=[True, True, True, False], kind="stable")
    full["layer"] = full.groupby(["device", "dtype", "micro_batch"]).cumcount() + 1
    both = best.merge(full.drop(columns="volume"), on=group)
    unsplit = both[both["out_d"] == both["full_out_d"]]
    split = both[(both["out_d"] < both["full_out_d"]) &
                 (both["full_out_d"] % both["out_d"] == 0)].copy()
    split["k"] = split["full_out_d"] // split["out_d"]
    split = split[split["full_in_d"] == split["k"] * split["in_d"]]
    merged = split.merge(unsplit[group + ["direction", "shape", "time_s", "algorithm"]],
                         on=group + ["direction"], suffixes=("", "_full"))
    if merged.empty:
        return pd.DataFrame(columns=CSV_COLUMNS)
    out = pd.DataFrame({
        "device": merged["device"], "dtype": merged["dtype"],
        "micro_batch": merged["micro_batch"], "layer": merged["layer"].astype(str),
        "shape": merged["shape_full"], "k": merged["k"], "direction": merged["direction"],
        "unpartitioned_s": merged["time_s_full"], "shard_s": merged["time_s"],
        "unpartitioned_algorithm": merged["algorithm_full"],
        "shard_algorithm": merged["algorithm"]})
    return add_steps(out)


def add_steps(rows):
    """Adds a `step` row (sum of the three directions) per layer and k that has all three."""
    import pandas as pd
    keys = ["device", "dtype", "micro_batch", "layer", "shape", "k"]
    directional = rows[rows["direction"].isin(DIRECTIONS)]
    sums = directional.groupby(keys).agg(
        unpartitioned_s=("unpartitioned_s", "sum"), shard_s=("shard_s", "sum"),
        count=("direction", "nunique")).reset_index()
    sums = sums[sums["count"] == len(DIRECTIONS)].drop(columns="count")
    sums["direction"] = STEP
    sums["unpartitioned_algorithm"] = sums["shard_algorithm"] = ""
    return pd.concat([directional, sums], ignore_index=True)


def add_totals(rows):
    """Adds per k and direction a `total` row: sum T(1) / sum k * T(k) over the layers."""
    import pandas as pd
    keys = ["device", "dtype", "micro_batch", "k", "direction"]
    rows = rows[rows["layer"] != "total"]
    totals = rows.groupby(keys).agg(unpartitioned_s=("unpartitioned_s", "sum"),
                                    shard_s=("shard_s", "sum")).reset_index()
    totals["layer"] = "total"
    totals["shape"] = totals["unpartitioned_algorithm"] = totals["shard_algorithm"] = ""
    both = pd.concat([rows, totals], ignore_index=True)
    both["efficiency"] = both["unpartitioned_s"] / (both["k"] * both["shard_s"])
    order = {d: i for i, d in enumerate(DIRECTIONS + [STEP])}
    both["_layer"] = both["layer"].map(lambda v: 10**9 if v == "total" else int(v))
    both["_direction"] = both["direction"].map(order)
    both = both.sort_values(["device", "dtype", "micro_batch", "_layer", "k", "_direction"])
    return both.drop(columns=["_layer", "_direction"])[CSV_COLUMNS].reset_index(drop=True)


def percent(value):
    return "-" if value != value else f"{100 * value:.1f}"


def table_lines(rows):
    """The text table: per device/dtype/micro-batch the layers, then rows per layer and k."""
    lines = []
    for (device, dtype, batch), block in rows.groupby(["device", "dtype", "micro_batch"],
                                                      sort=False):
        lines.append(f"== {device}, {dtype}, micro-batch {batch}: efficiency % = "
                     "T(1) / (k * T(k))")
        layers = block[block["layer"] != "total"][["layer", "shape"]].drop_duplicates()
        for layer, shape in layers.itertuples(index=False):
            lines.append(f"layer {layer}: {shape}")
        lines.append(f"{'layer':>6}{'k':>4}{'T(1) step s':>14}{'T(k) step s':>14}"
                     f"{'forward':>9}{'bwd_data':>10}{'bwd_filter':>11}{'step':>8}")
        wide = block.pivot_table(index=["layer", "k"], columns="direction",
                                 values="efficiency", sort=False)
        for (layer, k), effs in wide.iterrows():
            step = block[(block["layer"] == layer) & (block["k"] == k) &
                         (block["direction"] == STEP)]
            t1 = f"{step['unpartitioned_s'].iloc[0]:.4g}" if len(step) else "-"
            tk = f"{step['shard_s'].iloc[0]:.4g}" if len(step) else "-"
            cells = [percent(effs.get(d, float("nan"))) for d in DIRECTIONS + [STEP]]
            lines.append(f"{layer:>6}{k:>4}{t1:>14}{tk:>14}{cells[0]:>9}{cells[1]:>10}"
                         f"{cells[2]:>11}{cells[3]:>8}")
    return lines


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", help="a profile CSV written by tessera profile")
    parser.add_argument("--workspace-limit", type=float, metavar="BYTES",
                        help="only algorithms whose workspace_bytes is at most this")
    parser.add_argument("--csv", metavar="OUT", help="also write the rows to this CSV file")
    args = parser.parse_args(argv)
    try:
        import pandas  # noqa: F401 - checked here so that a missing package is exit 1
    except ImportError as error:
        print(f"error: {error}; needs Debian's python3-pandas (run with /usr/bin/python3)",
              file=sys.stderr)
        return EXIT_RUNTIME
    def report():
        if args.workspace_limit is not None and not args.workspace_limit >= 0:
            raise BadInput("--workspace-limit: expected bytes >= 0")
        rows = pairs(best_times(read_profile(args.profile), args.workspace_limit))
        if rows.empty:
            raise BadInput(f"{args.profile}: no 3D convolution with partitioned shards "
                           "(no two kernels differing only in depth)")
        rows = add_totals(rows)
        print("\n".join(table_lines(rows)))
        if args.csv:
            rows.to_csv(args.csv, index=False, float_format="%.9g")
            print(f"wrote {args.csv}")

    return exit_status(report)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
