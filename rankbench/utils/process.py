"""What a user's code (a plug-in's import, a ranker's fit) may not change for the whole run: the
working directory, which every relative path of the run is read against, and the standard streams
the run reports on. :func:`kept` puts them back, with a warning naming what changed."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings


@contextlib.contextmanager
def kept(who: str):
    """Run the block, then put back the working directory and ``sys.stdout`` / ``sys.stderr`` as
    they were (a closed stream reopened on its file descriptor), warning that ``who`` changed them."""
    cwd = os.getcwd()
    streams = {"stdout": (sys.stdout, 1), "stderr": (sys.stderr, 2)}
    try:
        yield
    finally:
        changed = []
        if os.getcwd() != cwd:
            changed.append(f"changed the working directory to {os.getcwd()}")
            os.chdir(cwd)
        for name, (stream, fd) in streams.items():
            if getattr(sys, name) is not stream or stream.closed:
                changed.append(f"{'closed' if stream.closed else 'replaced'} sys.{name}")
                setattr(sys, name, open(fd, "w", buffering=1, closefd=False) if stream.closed else stream)
        if changed:
            warnings.warn(f"{who} {' and '.join(changed)}; rankbench put it back", RuntimeWarning, stacklevel=3)
