"""Yu & Li's Figures 2-4 (UMIST) and 6 (FG-NET) from the run folders of ``configs/yuli/``.

* ``fig2_<run>``: Euclidean distances ||x_i - x_1|| of the training faces (grouped by label, after
  the method's preprocessing, e.g. the PCA) from the first one;
* ``fig3_<run>``: the learned 3-D embedding L x_i of those faces, coloured by label;
* ``fig4_<run>``: the distances ||L(x_i - x_1)|| after learning;
* ``fig6_<run>``: the 3-D embedding of the FG-NET training faces.

Figures 2-4 are drawn for a UMIST run, Figure 6 for an FG-NET run. The training faces are those
of the run's own recorded split (trial 0 of one setting: the first whose swept values agree with
the paper's figures, n = 30 UMIST / 40 FG-NET faces, K = 5, s = 3, else the first), and cMDS-DML is
refitted on them with the run's parameters, as its trial fitted it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..build import RunData
from ..plots.style import pyplot, save

#: the swept values of the paper's figures (UMIST: n = 30, FG-NET: n = 40; K = 5, s = 3)
FIGURE_VALUES = {"umist": {"protocol.n_per_label": 10}, "fgnet": {"protocol.n_per_label": 8}}
COMMON_VALUES = {"rankers.*.K": 5, "rankers.cMDS-DML.K": 5, "rankers.cMDS-DML.s": 3, "rankers.*.s": 3}


def figure_setting(run: RunData) -> str:
    """The setting whose swept values agree with the paper's figures wherever it sweeps them."""
    wanted = {**COMMON_VALUES, **FIGURE_VALUES.get(run.dataset_name, {})}
    values = run.setting_values()
    for label in run.setting_order:
        if all(wanted.get(k, v) == v for k, v in values.get(label, {}).items()):
            return label
    return run.setting_order[0]


def _distance_plot(dist, y, title, out: Path, stem: str) -> list[Path]:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    idx = np.arange(1, len(dist) + 1)
    for v in np.unique(y):
        k = y == v
        ax.plot(idx[k], dist[k], "o", label=f"label {v:g}")
    ax.set_xlabel("i (training images grouped by label)")
    ax.set_ylabel("distance to x_1")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return save(fig, out, stem)


def _embedding_plot(Z, y, title, out: Path, stem: str) -> list[Path]:
    plt = pyplot()
    fig = plt.figure(figsize=(5.5, 5))
    ax = fig.add_subplot(projection="3d")
    for v in np.unique(y):
        k = y == v
        ax.scatter(Z[k, 0], Z[k, 1], Z[k, 2], label=f"label {v:g}", s=25)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return save(fig, out, stem)


def _cmds_dml(run: RunData) -> str | None:
    return next((r["name"] for r in run.config.get("rankers", [])
                 if isinstance(r, dict) and r.get("ranker") == "cmds_dml" and r.get("name") in run.methods), None)


def draw(runs: list[RunData], out: Path, refit=None) -> list[Path]:
    """Figures 2-4 of each UMIST run and Figure 6 of each FG-NET run that has a cMDS-DML method."""
    written = []
    for run in runs:
        method = _cmds_dml(run)
        if method is None or refit is None or run.dataset_name not in FIGURE_VALUES:
            continue
        setting = figure_setting(run)
        fitted = refit(run, setting, 0, method)
        label = (run.config.get("protocol") or {}).get("label_column", "label")
        labels = fitted.dataset.column(label).astype(float)
        train = np.asarray(fitted.split.train, dtype=int)
        train = train[np.argsort(labels[train], kind="stable")]   # grouped by label, as the paper draws them
        y = labels[train]
        X = fitted.X[train]
        model = fitted.model
        steps = getattr(model, "steps", None)
        Xtr = model[:-1].transform(X) if steps else X   # the faces as the learner saw them (after PCA)
        Z = model.transform(X)
        n = f"n = {len(train)}" + (f", {setting}" if setting else "")
        flat = Z.shape[1] < 3   # an embedding of fewer than 3 dimensions is not drawn in 3-D
        if run.dataset_name == "umist":
            written += _distance_plot(np.linalg.norm(Xtr - Xtr[0], axis=1), y,
                                      f"Fig. 2: Euclidean distance ||x_i - x_1|| (UMIST, {n})", out, f"fig2_{run.name}")
            if not flat:
                written += _embedding_plot(Z, y, f"Fig. 3: embedding L x_i (UMIST, {n})", out, f"fig3_{run.name}")
            written += _distance_plot(np.linalg.norm(Z - Z[0], axis=1), y,
                                      f"Fig. 4: learned distance ||L(x_i - x_1)|| (UMIST, {n})", out,
                                      f"fig4_{run.name}")
        elif not flat:
            written += _embedding_plot(Z, y, f"Fig. 6: embedding L x_i (FG-NET, {n})", out, f"fig6_{run.name}")
    return written
