"""What a reader would see wrong in a figure, read from matplotlib's renderer extents: text cut
off at the figure's edge, tick labels running together, titles, labels and the legend over each
other, a legend over the plot. Every report's figures are held to it (a warning names each
problem), and the tests draw every figure kind through it."""

from __future__ import annotations


def _overlap(a, b, tol: float = 1.0) -> bool:
    """Whether two display boxes share more than ``tol`` pixels in both directions."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tol and min(a.y1, b.y1) - max(a.y0, b.y0) > tol


def _shown_ticklabels(axis, limits) -> list:
    """The tick labels an axis draws: non-empty, at ticks inside its view."""
    lo, hi = sorted(limits)
    pad = (hi - lo) * 1e-9
    return [t for t, loc in zip(axis.get_ticklabels(), axis.get_ticklocs())
            if t.get_visible() and t.get_text() and lo - pad <= loc <= hi + pad]


def _crowded(name: str, axis, limits, renderer) -> list[str]:
    """Neighbouring tick labels of one axis that run into each other. Turned labels are compared
    as the parallel strips they are (their distance across the strips against the text's height),
    not by their upright bounding boxes, which overlap whenever the labels are turned."""
    import math

    shown = _shown_ticklabels(axis, limits)
    boxes = [t.get_window_extent(renderer) for t in shown]
    order = sorted(range(len(shown)), key=lambda i: (boxes[i].x0, boxes[i].y0))
    out = []
    for i, j in zip(order, order[1:]):
        a, b = shown[i], shown[j]
        angle = math.radians(a.get_rotation() % 180)
        if name == "x" and 0 < angle < math.pi and a.get_rotation() == b.get_rotation():
            gap = abs(b.get_window_extent(renderer).x1 - boxes[i].x1) if a.get_ha() == "right" else \
                abs(b.get_window_extent(renderer).x0 - boxes[i].x0)
            height = a.get_size() * a.figure.dpi / 72 * len(a.get_text().split("\n"))
            if gap * abs(math.sin(angle)) < height:
                out.append(f"{name} tick label {a.get_text()!r} runs into {name} tick label {b.get_text()!r}")
        elif _overlap(boxes[i], boxes[j]):
            out.append(f"{name} tick label {a.get_text()!r} runs into {name} tick label {b.get_text()!r}")
    return out


def layout_problems(fig) -> list[str]:
    """What a reader would see wrong in ``fig``, one phrase each (empty when nothing): a text or the
    legend cut off at the figure's edge, tick labels running into each other, a title, axis label,
    tick label or legend over another, a legend over the plot."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    edge = fig.bbox
    found: list[str] = []
    for ax in fig.axes:
        texts = [(f"title {t.get_text()!r}", t) for t in (ax.title, ax._left_title, ax._right_title)]
        texts += [(f"{n} label {t.get_text()!r}", t) for n, t in (("x", ax.xaxis.label), ("y", ax.yaxis.label))]
        texts = [(n, t.get_window_extent(r)) for n, t in texts if t.get_visible() and t.get_text()]
        ticks = {n: [(f"{n} tick label {t.get_text()!r}", t.get_window_extent(r)) for t in _shown_ticklabels(a, lim)]
                 for n, a, lim in (("x", ax.xaxis, ax.get_xlim()), ("y", ax.yaxis, ax.get_ylim()))}
        leg = ax.get_legend()
        boxes = texts + ticks["x"] + ticks["y"]
        if leg is not None and leg.get_visible():
            boxes.append(("legend", leg.get_window_extent(r)))
            if _overlap(leg.get_window_extent(r), ax.bbox):
                found.append("the legend covers the plot")
        for name, box in boxes:
            if box.x0 < edge.x0 - 1 or box.y0 < edge.y0 - 1 or box.x1 > edge.x1 + 1 or box.y1 > edge.y1 + 1:
                found.append(f"{name} is cut off at the figure's edge")
        for axis, a, lim in (("x", ax.xaxis, ax.get_xlim()), ("y", ax.yaxis, ax.get_ylim())):
            found += _crowded(axis, a, lim, r)
        others = texts + ([("legend", leg.get_window_extent(r))] if leg is not None and leg.get_visible() else [])
        for i, (n1, b1) in enumerate(others):   # titles, axis labels, legend: with each other and the ticks
            for n2, b2 in others[i + 1:] + ticks["x"] + ticks["y"]:
                if _overlap(b1, b2):
                    found.append(f"{n1} overlaps {n2}")
    return found
