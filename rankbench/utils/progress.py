"""Progress that a researcher can follow on a terminal and in a log file.

On a terminal a tqdm bar is drawn (and removed when done). When stderr is not a terminal (CI,
``nohup``, a batch job), a plain line is printed per finished step instead, with the elapsed time
and an estimate of what remains, at most every ``min_interval`` seconds (always for the last
step), so a log shows where a long run stands without being flooded.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")


def fmt_duration(seconds: float) -> str:
    """``42 s``, ``3.5 min``, ``1.2 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """Counts finished steps of one piece of work and reports them (bar or log lines).

    Parameters
    ----------
    total : number of steps.
    desc : what the work is (``"viper_p316"``, ``"features elf_strips"``).
    enabled : False = silent.
    min_interval : least seconds between two log lines (log mode only).
    stream : where to write (default stderr); a tty gets a bar, anything else log lines.
    """

    def __init__(self, total: int, desc: str = "", enabled: bool = True, min_interval: float = 0.0,
                 stream=None):
        self.total = int(total)
        self.desc = desc
        self.enabled = enabled and self.total > 0
        self.min_interval = min_interval
        self.stream = stream or sys.stderr
        self.done = 0
        self.t0 = time.perf_counter()
        self._last_line = -float("inf")
        self._bar = None
        if self.enabled and getattr(self.stream, "isatty", lambda: False)():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=desc, leave=False, dynamic_ncols=True, file=self.stream)

    def step(self, what: str = "", n: int = 1) -> None:
        """``n`` more steps finished; ``what`` names the last one (shown beside the count)."""
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            if what:
                self._bar.set_postfix_str(what, refresh=False)
            self._bar.update(n)
            return
        now = time.perf_counter()
        if now - self._last_line < self.min_interval and self.done < self.total:
            return
        self._last_line = now
        elapsed = now - self.t0
        eta = elapsed / self.done * (self.total - self.done) if self.done else float("nan")
        tail = f", about {fmt_duration(eta)} left" if self.done < self.total else ""
        label = f" {what}" if what else ""
        print(f"[{self.desc}] {self.done}/{self.total}{label} done; {fmt_duration(elapsed)} elapsed{tail}",
              file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def track(items: Iterable[T], total: int | None = None, desc: str = "", enabled: bool = True,
          min_interval: float = 30.0, label: Callable[[T], str] | None = None) -> Iterator[T]:
    """Iterate ``items`` and report each one as finished when the loop comes back for the next."""
    items = list(items) if total is None else items
    n = len(items) if total is None else total
    with Progress(n, desc, enabled, min_interval) as p:
        for it in items:
            yield it
            p.step(label(it) if label else "")
