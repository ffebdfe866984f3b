"""One MLPerf HPC result file: its `:::MLLOG` lines, its epochs with the eval inside them taken
out, and the run's throughputs. mlperf_extract.py's docstring says how an epoch and its
throughput are defined; this is where that definition is computed.
"""

import json
import statistics

from mlperf_bad_input import BadInput

MARKER = ":::MLLOG"


def parse_log(path, display=None, lenient=False):
    """(events, skipped lines) of one result file; events are the parsed :::MLLOG objects in file
    order, each with its "line" number added. A malformed line raises BadInput naming the file
    and line, unless lenient, when it is counted and skipped."""
    display = display or path
    decoder = json.JSONDecoder()
    events, skipped = [], 0
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except OSError as error:
        raise BadInput(f"{display}: cannot read: {error.strerror}") from error
    with handle:
        for number, text in enumerate(handle, start=1):
            at = text.find(MARKER)
            if at < 0:
                continue
            payload = text[at + len(MARKER):].strip()
            problem = None
            try:
                event, _ = decoder.raw_decode(payload)
            except json.JSONDecodeError as error:
                problem = f"not JSON after {MARKER} ({error.msg} at column {error.colno})"
            else:
                if not isinstance(event, dict):
                    problem = f"not a JSON object after {MARKER}"
                elif "key" not in event or "time_ms" not in event:
                    problem = "JSON object without 'key' and 'time_ms'"
                elif not isinstance(event["time_ms"], (int, float)) or \
                        isinstance(event["time_ms"], bool):
                    problem = f"time_ms is not a number: {event['time_ms']!r}"
            if problem:
                if lenient:
                    skipped += 1
                    continue
                raise BadInput(f"{display}:{number}: malformed {MARKER} line: {problem}")
            if not isinstance(event.get("metadata"), dict):
                event["metadata"] = {}
            event["line"] = number
            events.append(event)
    return events, skipped


def _values(events, key):
    return [event.get("value") for event in events if event["key"] == key]


def _first_time(events, key):
    times = [event["time_ms"] for event in events if event["key"] == key]
    return min(times) if times else None


def _pair(events, start_key, stop_key):
    """[(start_ms, stop_ms, epoch_num or None, duplicated)] of intervals: by metadata.epoch_num
    where both ends have it, else start and stop in file order; stops without start are dropped,
    starts without stop give stop None."""
    numbered, ordered = {}, []
    for event in events:
        if event["key"] not in (start_key, stop_key):
            continue
        number = event["metadata"].get("epoch_num")
        if number is not None and not isinstance(number, (list, dict)):
            numbered.setdefault(number, []).append(event)
        else:
            ordered.append(event)
    intervals = []
    for number, group in numbered.items():
        starts = [e["time_ms"] for e in group if e["key"] == start_key]
        stops = [e["time_ms"] for e in group if e["key"] == stop_key]
        if not starts:
            continue
        intervals.append((min(starts), max(stops) if stops else None, number,
                          len(starts) > 1 or len(stops) > 1))
    pending = None
    for event in ordered:
        if event["key"] == start_key:
            if pending is not None:
                intervals.append((pending, None, None, False))
            pending = event["time_ms"]
        elif pending is not None:
            intervals.append((pending, event["time_ms"], None, False))
            pending = None
    if pending is not None:
        intervals.append((pending, None, None, False))
    intervals.sort(key=lambda interval: interval[0])
    return intervals


def _union_length(pieces):
    total, end = 0.0, None
    for start, stop in sorted(pieces):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def epochs_of(events):
    """(complete epochs, notes): each epoch a dict start_ms, stop_ms, epoch_num, eval_ms (the
    union of eval intervals clipped to the epoch), after_eval_ms (last eval_stop inside the epoch
    to epoch_stop, None without one) and train_ms = stop - start - eval_ms."""
    notes = []
    epochs = _pair(events, "epoch_start", "epoch_stop")
    evals = [(start, stop) for start, stop, _, _ in _pair(events, "eval_start", "eval_stop")
             if stop is not None and stop >= start]
    if any(duplicated for _, _, _, duplicated in epochs):
        notes.append("some epochs logged more than once (several ranks?): earliest start and "
                     "latest stop taken")
    incomplete = sum(1 for _, stop, _, _ in epochs if stop is None)
    if incomplete:
        notes.append(f"{incomplete} epoch_start without epoch_stop left out")
    complete = []
    for start, stop, number, _ in epochs:
        if stop is None:
            continue
        if stop <= start:
            notes.append(f"epoch {number}: epoch_stop not after epoch_start, left out")
            continue
        inside = [(max(a, start), min(b, stop)) for a, b in evals if b > start and a < stop]
        eval_ms = _union_length(inside)
        last_eval_stop = max((b for _, b in inside), default=None)
        train_ms = stop - start - eval_ms
        if train_ms <= 0:
            notes.append(f"epoch {number}: no training time left after eval, left out")
            continue
        complete.append({"start_ms": start, "stop_ms": stop, "epoch_num": number,
                         "eval_ms": eval_ms, "train_ms": train_ms,
                         "after_eval_ms": None if last_eval_stop is None
                         else stop - last_eval_stop})
    return complete, notes


def summarize_run(events):
    """One run's figures; throughputs in samples/s, None where the log lacks what they need."""
    notes = []
    batches = [v for v in _values(events, "global_batch_size") if is_number(v)]
    samples = [v for v in _values(events, "train_samples") if is_number(v)]
    epochs, epoch_notes = epochs_of(events)
    notes += epoch_notes
    run = {
        "global_batch": batches[0] if batches else None,
        "train_samples": samples[0] if samples else None,
        "eval_samples": next((v for v in _values(events, "eval_samples") if is_number(v)), None),
        "orgs": {str(v) for v in _values(events, "submission_org")},
        "statuses": [e["metadata"].get("status") for e in events if e["key"] == "run_stop"],
        "epochs": epochs, "first": None, "steady": None, "notes": notes,
    }
    if len(set(batches)) > 1 or len(set(samples)) > 1:
        notes.append("global_batch_size or train_samples logged with different values; "
                     "the first taken")
    run["staging_s"] = _span_s(events, "staging_start", "staging_stop")
    run["run_s"] = _span_s(events, "run_start", "run_stop")
    if run["train_samples"] is None or not epochs:
        return run
    per_epoch = [run["train_samples"] / (epoch["train_ms"] / 1000.0) for epoch in epochs]
    run["first"] = per_epoch[0]
    if len(per_epoch) > 1:
        run["steady"] = statistics.median(per_epoch[1:])
    return run


def _span_s(events, start_key, stop_key):
    start, stop = _first_time(events, start_key), _first_time(events, stop_key)
    if start is None or stop is None or stop < start:
        return None
    return (stop - start) / 1000.0


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)
