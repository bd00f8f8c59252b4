"""What a user's code (a plug-in's import, a ranker's fit) may not change for the whole run: the
working directory, which every relative path of the run is read against, and the standard streams
the run reports on. :func:`kept` puts them back, with a warning naming what changed; nor may it end
the run's process (``os._exit``), which would end the run at the status it chose, saying nothing.
What the code prints goes to stderr, with the run's progress: stdout carries the run's report alone
(``rankbench run CONFIG > report.md``)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import warnings


class ExitRefused(SystemExit):
    """``os._exit(status)`` called by a user's code inside :func:`kept`, raised instead of ending the
    process (``how`` names the call for the messages that report it, as ``sys.exit`` for SystemExit)."""

    how = "os._exit"


class _Printed(io.TextIOBase):
    """``sys.stdout`` inside :func:`kept`: what is printed is written to ``to`` (stderr). Closing it
    closes nothing of the run's."""

    def __init__(self, to):
        self._to = to

    def write(self, text: str) -> int:
        return self._to.write(text)

    def flush(self) -> None:
        self._to.flush()

    def fileno(self) -> int:
        return self._to.fileno()

    def isatty(self) -> bool:
        return self._to.isatty()


@contextlib.contextmanager
def kept(who: str):
    """Run the block, then put back the working directory and ``sys.stdout`` / ``sys.stderr`` as
    they were (a closed stream reopened on its file descriptor), warning that ``who`` changed them.
    Inside the block, ``os._exit`` called from the main thread raises :class:`ExitRefused` instead
    (other threads, a Dask worker's, keep the real one: their process is not the run's), and in the
    main thread what is printed goes to stderr."""
    cwd = os.getcwd()
    streams = {"stdout": (sys.stdout, 1), "stderr": (sys.stderr, 2)}
    main = threading.current_thread() is threading.main_thread()   # other threads: not the run's process
    inside = {"stdout": _Printed(sys.stderr) if main else sys.stdout, "stderr": sys.stderr}
    sys.stdout = inside["stdout"]
    real_exit = os._exit

    def refused(status: int) -> None:
        if threading.current_thread() is not threading.main_thread():
            real_exit(status)
        raise ExitRefused(status)

    os._exit = refused
    try:
        yield
    finally:
        os._exit = real_exit
        changed = []
        if os.getcwd() != cwd:
            changed.append(f"changed the working directory to {os.getcwd()}")
            os.chdir(cwd)
        for name, (stream, fd) in streams.items():
            if getattr(sys, name) is not inside[name] or stream.closed:
                changed.append(f"{'closed' if stream.closed else 'replaced'} sys.{name}")
            setattr(sys, name, open(fd, "w", buffering=1, closefd=False) if stream.closed else stream)
        if changed:
            warnings.warn(f"{who} {' and '.join(changed)}; rankbench put it back", RuntimeWarning, stacklevel=3)
