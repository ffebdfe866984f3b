"""Where one GPU's simulated step goes: the operations of a `tessera run --trace` timeline,
summed by name over the first traced GPU, largest first, so that each compared row says what
the simulator spent its predicted step on (and whether the time came from a profile or the
roofline).
"""

import json


def top_operations(trace_path, count=3):
    """[(name, seconds, source)] of the `count` longest operations of the first traced GPU (its
    compute, communication, input and copy lanes), or [] if the trace cannot be read."""
    try:
        with open(trace_path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError):
        return []
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    spans = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "dur" in e]
    if not spans:
        return []
    gpu = spans[0].get("pid")
    totals, sources = {}, {}
    for e in spans:
        if e.get("pid") != gpu:
            continue
        name = e.get("name", "?")
        totals[name] = totals.get(name, 0.0) + float(e["dur"]) * 1e-6
        source = (e.get("args") or {}).get("source")
        if source:
            sources.setdefault(name, source)
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:count]
    return [(name, seconds, sources.get(name, "")) for name, seconds in ranked]


def describe(operations, step_s):
    """'conv1 backward_filter 66.2 ms, 63%, profile; ...' (the share of the step where known)."""
    parts = []
    for name, seconds, source in operations:
        share = f", {100 * seconds / step_s:.0f}%" if step_s else ""
        parts.append(f"{name} {seconds * 1e3:.1f} ms{share}" + (f", {source}" if source else ""))
    return "; ".join(parts)
