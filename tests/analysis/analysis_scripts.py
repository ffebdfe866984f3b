"""The analysis/ scripts as modules, for the tests beside this file (not a test itself)."""

import importlib.util
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def script_path(name):
    return os.path.join(REPO, "analysis", name + ".py")


def load_file(path, name):
    """The script at `path`, loaded as module `name` (the scripts are not a package); it imports
    its siblings as when run, from its own folder on the path."""
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name):
    """analysis/<name>.py, loaded as module <name>; it imports its siblings (script_exit) as
    when run, from analysis/ on the path."""
    return load_file(script_path(name), name)
