#!/usr/bin/python3
"""Where a rank's idle time goes in a Tessera trace: the gaps between its compute spans.

    trace_gaps.py TRACE.json [TRACE.json ...] [--top N]

Why: a real run's step is longer than its kernels; the difference is the time between them
(launches, synchronisation, host work), which the simulator does not have. The step program's
allocate and release ops run in those gaps, and on a GPU each may cost far more than a launch.
This splits the gaps by whether the trace's "device memory in use" counter changed inside them.

What: TRACE.json is a Chrome trace written by `tessera run --trace` (or validate-sim's
real-trace-N.json): complete events ("ph": "X") on the compute track (tid 0) of each rank (pid),
and counter events ("ph": "C") named "device memory in use". Per trace and rank it prints the
compute spans, the gaps between consecutive ones (in microseconds: count, total, mean) with and
without a memory change, when the first span starts (a trace's times count from the step's
start), and the --top largest gaps with the
spans around them. A counter sample at a gap's boundary counts as inside it.

Exit codes: 0 ok, 1 runtime failure, 2 bad input (missing file, not a trace, no compute spans).
"""

import argparse
import sys

from script_exit import EXIT_BAD_INPUT, EXIT_RUNTIME, BadInput, read_json

COMPUTE_TRACK = 0
MEMORY_COUNTER = "device memory in use"


def load_events(path):
    trace = read_json(path)
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise BadInput(f"{path}: no traceEvents list: not a Chrome trace")
    return events


def gaps_by_rank(events):
    """{pid: summary} of the compute spans' gaps, split by a memory change inside them."""
    spans, changes = {}, {}
    for event in events:
        if not isinstance(event, dict):
            continue
        pid = event.get("pid", 0)
        if event.get("ph") == "X" and event.get("tid") == COMPUTE_TRACK:
            start = float(event["ts"])
            spans.setdefault(pid, []).append((start, start + float(event.get("dur", 0)),
                                              event.get("name", "")))
        elif event.get("ph") == "C" and event.get("name") == MEMORY_COUNTER:
            changes.setdefault(pid, []).append(float(event["ts"]))
    summaries = {}
    for pid, rank_spans in spans.items():
        rank_spans.sort()
        moments = changes.get(pid, [])
        gaps = []
        for (_, end, before), (start, _, after) in zip(rank_spans, rank_spans[1:]):
            memory = any(end <= moment <= start for moment in moments)
            gaps.append({"us": max(0.0, start - end), "memory": memory,
                         "before": before, "after": after})
        summaries[pid] = {"spans": len(rank_spans), "gaps": gaps, "first_us": rank_spans[0][0]}
    return summaries


def totals(gaps, memory):
    chosen = [gap["us"] for gap in gaps if gap["memory"] == memory]
    total = sum(chosen)
    return len(chosen), total, total / len(chosen) if chosen else 0.0


def report(path, summaries, top):
    for pid in sorted(summaries):
        summary = summaries[pid]
        gaps = summary["gaps"]
        print(f"{path}, rank {pid}: {summary['spans']} compute spans, "
              f"{sum(g['us'] for g in gaps):.0f} us between them")
        for memory, label in ((True, "with a memory change"), (False, "without")):
            count, total, mean = totals(gaps, memory)
            print(f"  gaps {label:22s} {count:4d}  total {total:10.0f} us  mean {mean:8.1f} us")
        print(f"  the first span starts at {summary['first_us']:.0f} us")
        for gap in sorted(gaps, key=lambda g: -g["us"])[:top]:
            mark = "memory" if gap["memory"] else ""
            print(f"  {gap['us']:8.0f} us  {gap['before']} -> {gap['after']}  {mark}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="TRACE.json")
    parser.add_argument("--top", type=int, default=5, help="the largest gaps to list (default 5)")
    arguments = parser.parse_args(argv)
    try:
        for path in arguments.traces:
            summaries = gaps_by_rank(load_events(path))
            if not summaries:
                raise BadInput(f"{path}: no compute spans (complete events on track 0)")
            report(path, summaries, arguments.top)
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (KeyError, TypeError, ValueError) as error:
        print(f"error: malformed event: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:  # pylint: disable=broad-except
        print(f"error: {error}", file=sys.stderr)
        return EXIT_RUNTIME
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
