"""Reading a results repository from git: a partial mirror may lack the large files elsewhere in
the repository, so only the results and systems files of one commit are exported, with
`git ls-tree` and `git cat-file`, never a checkout.
"""

import os
import re
import subprocess


class GitFailure(Exception):
    pass


def _git(git_dir, *arguments, data=None):
    try:
        done = subprocess.run(["git", "--git-dir", git_dir, *arguments], input=data,
                              capture_output=True, check=False)
    except OSError as error:
        raise GitFailure(f"git: {error.strerror}") from error
    if done.returncode != 0:
        raise GitFailure(f"git {' '.join(arguments[:2])} in {git_dir}: "
                         f"{done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def export_from_git(git_dir, revision, benchmark, destination):
    """Writes <org>/results/<system>/<benchmark>/* and <org>/systems/*.json of the revision
    under destination; returns the commit's full hash."""
    commit = _git(git_dir, "rev-parse", "--verify", f"{revision}^{{commit}}").decode().strip()
    names = _git(git_dir, "ls-tree", "-r", "-z", "--name-only", commit).decode().split("\0")
    wanted = re.compile(r"[^/]+/(results/[^/]+/" + re.escape(benchmark) + r"/[^/]+|"
                        r"systems/[^/]+\.json)")
    chosen = [name for name in names if name and wanted.fullmatch(name)]
    if not chosen:
        return commit
    request = "".join(f"{commit}:{name}\n" for name in chosen).encode()
    output = _git(git_dir, "cat-file", "--batch", data=request)
    at = 0
    for name in chosen:
        end = output.index(b"\n", at)
        header = output[at:end].decode(errors="replace").split()
        at = end + 1
        if len(header) < 3 or header[1] != "blob":
            raise GitFailure(f"{name}: {' '.join(header[1:]) or 'unreadable'} in {git_dir}")
        size = int(header[2])
        target = os.path.join(destination, *name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(output[at:at + size])
        at += size + 1
    return commit


def checkout_commit(root):
    try:
        done = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=False)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
