"""Progress bars that stay quiet when output is not a terminal."""

from __future__ import annotations

import sys
from typing import Iterable, TypeVar

T = TypeVar("T")


def progress_bar(it: Iterable[T], desc: str = "", total: int | None = None, enabled: bool = True):
    """Wrap ``it`` in a tqdm bar when ``enabled`` and stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        return it
    from tqdm.auto import tqdm

    return tqdm(it, desc=desc, total=total, leave=False, dynamic_ncols=True)
