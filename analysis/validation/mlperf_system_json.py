"""An MLPerf systems file (<org>/systems/<system>.json): how its fields are read, and whether the
system has accelerators at all (CPU-only systems get no row: Tessera predicts GPU runs).
"""

import json
import re

from mlperf_bad_input import BadInput
from mlperf_log import is_number


NO_ACCELERATOR = {"", "n/a", "na", "none", "-", "null"}


def load_system(path, display):
    try:
        with open(path, encoding="utf-8") as handle:
            system = json.load(handle)
    except OSError as error:
        raise BadInput(f"{display}: cannot read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise BadInput(f"{display}:{error.lineno}: not JSON ({error.msg})") from error
    if not isinstance(system, dict):
        raise BadInput(f"{display}: not a JSON object")
    return system


def integer(value):
    if is_number(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def field_text(value):
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value).strip()


def accelerators(system):
    """(model, per node, why CPU-only or None)."""
    model = field_text(system.get("accelerator_model_name"))
    per_node = integer(system.get("accelerators_per_node"))
    if per_node == 0:
        return model, per_node, "accelerators_per_node is 0"
    if model.lower() in NO_ACCELERATOR:
        return model, per_node, f"accelerator_model_name is {model or 'empty'!r}"
    return model, per_node, None
