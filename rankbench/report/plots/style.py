"""The look of every figure and how it is written: the house style file (``rankbench.mplstyle``:
sizes, fonts, SVG / PDF text) with a user's ``--style`` file on top, one colour, marker and line
style per method, and the files (PNG at 300 dpi, SVG with text as text, PDF), the same bytes for
the same figure."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import io
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...utils.fileio import atomic_write_bytes

#: the house style (a matplotlib style file); SVG element ids come from a fixed salt in it, so a
#: figure redrawn from the same trials is the same file (and a report collected twice the same page)
STYLE_FILE = Path(__file__).parent.parent / "rankbench.mplstyle"
#: a user's style file applied on top of the house style while a report draws (``--style``)
_USER_STYLE: contextvars.ContextVar[str | None] = contextvars.ContextVar("rankbench_user_style", default=None)
#: every figure is written in each of these formats
FORMATS = ("png", "svg", "pdf")
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (3, 1)))
#: every figure is FIG_H inches high and FIG_W wide; figures of many categories (methods, tasks)
#: grow wider, up to twice FIG_W, so that a report shows them at one consistent scale
FIG_W, FIG_H = 6.4, 4.0


def figsize(categories: int = 0, per_category: float = 0.0, fixed: float = 0.0) -> tuple[float, float]:
    """The figure size of the style in use (``figure.figsize``; the house style's is FIG_W x
    FIG_H), or wider for ``categories`` x ``per_category`` inches plus ``fixed`` (axis labels,
    legend), at most twice as wide."""
    import matplotlib

    w, h = matplotlib.rcParams["figure.figsize"]
    return min(2 * w, max(w, fixed + per_category * categories)), h


def pyplot():
    """matplotlib's ``pyplot`` on the Agg backend (files only, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def style_file(path: str | Path) -> Path:
    """A user's matplotlib style file, checked: it exists and matplotlib reads it."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ConfigError(f"--style {path}: expected a matplotlib style file (.mplstyle), got "
                          + ("a folder" if p.exists() else "no such file"))
    import matplotlib

    try:
        matplotlib.rc_params_from_file(str(p), use_default_template=False)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"--style {path}: not a readable matplotlib style file ({exc})") from None
    return p


@contextlib.contextmanager
def user_style(path: str | Path | None):
    """While drawing, apply ``path`` (a matplotlib style file) on top of the house style."""
    token = _USER_STYLE.set(str(style_file(path)) if path else None)
    try:
        yield
    finally:
        _USER_STYLE.reset(token)


def in_style():
    """The house style, and a user's on top of it, without touching the caller's settings."""
    user = _USER_STYLE.get()
    return pyplot().style.context([str(STYLE_FILE)] + ([user] if user else []))


def styled(fn):
    """Build a figure in the style (:func:`in_style`)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with in_style():
            return fn(*args, **kwargs)

    return wrapper


def save(fig, out: Path, stem: str, laid_out: bool = False, root: Path | None = None) -> list[Path]:
    """Write ``fig`` as ``<stem>.png`` (300 dpi), ``<stem>.svg`` (editable text) and ``<stem>.pdf``
    and close it; the paths written. No creation date is written, so the same figure is the same
    file. Each file is written atomically through no link below ``root`` (default ``out``; a
    run's plots: the run folder).

    Every format is written from one layout. ``laid_out``: the figure was drawn since it last
    changed (by :func:`layout_problems`), so its layout stands."""
    import matplotlib

    plt = pyplot()
    out.mkdir(parents=True, exist_ok=True)
    files = []
    undated = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}}
    with in_style():
        if not laid_out:
            fig.canvas.draw()
        bbox = None
        if matplotlib.rcParams["savefig.bbox"] == "tight":
            pad = matplotlib.rcParams["savefig.pad_inches"]
            bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(pad, pad)
        # keep the layout made above: with no layout engine (and none made again from the
        # style's rc while saving), savefig neither lays out nor draws a second time per format
        with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)
            for ext in FORMATS:
                p, buf = out / f"{stem}.{ext}", io.BytesIO()
                fig.savefig(buf, format=ext, metadata=undated.get(ext), bbox_inches=bbox)
                atomic_write_bytes(p, buf.getvalue(), root=out if root is None else root)
                files.append(p)
    plt.close(fig)
    return files


def method_styles(methods: list[str]) -> dict[str, dict[str, Any]]:
    """One colour, marker and line style per method, in the run's order (the same in every figure):
    a line drawn over another of the same values still shows the one below."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    return {m: {"color": cmap(i % 10), "marker": MARKERS[i % len(MARKERS)], "linestyle": LINESTYLES[i % len(LINESTYLES)]}
            for i, m in enumerate(methods)}
