"""How Tessera's analysis scripts end, as its commands do: input the user can fix (a file, a row,
an option) exits 2 with a message naming it; any other failure exits 1."""

import json
import sys

EXIT_RUNTIME = 1
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """Bad input: the message names the file (and line) and what is wrong."""


def read_json(path, display=None):
    """The JSON document at `path`; BadInput naming it (as `display`, default the path) when it
    cannot be read or parsed."""
    display = display or path
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise BadInput(f"{display}: cannot read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise BadInput(f"{display}: line {error.lineno}: not JSON ({error.msg})") from error


def exit_status(body):
    """Runs body(): 0 when it returns, else the exit status of what it raised, with the message
    on stderr."""
    try:
        body()
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:  # noqa: BLE001 - any other failure is a runtime failure
        print(f"error: {error}", file=sys.stderr)
        return EXIT_RUNTIME
    return 0
