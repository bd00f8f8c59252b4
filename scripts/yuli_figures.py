"""Yu & Li's figures 2-4 (UMIST) and 6 (FG-NET) as PNG files.

* Figure 2: Euclidean distances ||x_i - x_1|| of the n = 30 UMIST training faces (10 per label,
  grouped by label, after PCA) from the first one.
* Figure 3: the learned 3-D embedding L x_i of those faces, coloured by label.
* Figure 4: the distances ||L(x_i - x_1)|| after learning.
* Figure 6: the 3-D embedding of n = 40 FG-NET training faces (8 per label).

cMDS-DML's parameters come from configs/yuli/base/*.yaml. The training draw is seeded.

Usage: python scripts/yuli_figures.py OUT_DIR [--data-root ../shared/datasets] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]


def _params(base: str) -> tuple[dict, dict]:
    cfg = yaml.safe_load((REPO / "configs" / "yuli" / "base" / base).read_text())
    r = next(r for r in cfg["rankers"] if r["ranker"] == "cmds_dml")
    params = {k: v for k, v in r.items() if k not in ("name", "ranker", "preprocess", "features")}
    return params, cfg


def _train(X, y, n_per_label, d, params, seed):
    from rankbench.preprocess.pca import PCA
    from rankbench.rankers.metric_learning.cmds_dml import CMDSDML

    rng = np.random.default_rng(seed)
    tr = np.concatenate([rng.choice(np.flatnonzero(y == v), n_per_label, replace=False) for v in np.unique(y)])
    Xtr = PCA(d).fit(X[tr]).transform(X[tr])
    model = CMDSDML(**params).fit(Xtr, y[tr])
    return Xtr, y[tr], model


def _distance_plot(dist, y, title, path):
    import matplotlib.pyplot as plt

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
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _embedding_plot(Z, y, title, path):
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(5.5, 5))
    ax = fig.add_subplot(projection="3d")
    for v in np.unique(y):
        k = y == v
        ax.scatter(Z[k, 0], Z[k, 1], Z[k, 2], label=f"label {v:g}", s=25)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output folder for the PNG files")
    ap.add_argument("--data-root", default=str(REPO.parent / "shared" / "datasets"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    from rankbench.datasets.fgnet import FGNET
    from rankbench.datasets.umist import UMIST

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    params, cfg = _params("umist.yaml")
    um = UMIST(labels=cfg["dataset"]["labels"]).load(args.data_root)
    X = um.arrays["images"].reshape(len(um), -1).astype(float)
    Xtr, ytr, model = _train(X, um.column("label").astype(float), 10, 150, params, args.seed)
    _distance_plot(np.linalg.norm(Xtr - Xtr[0], axis=1), ytr,
                   "Fig. 2: Euclidean distance ||x_i - x_1|| (UMIST, n = 30)", out / "yuli_fig2_umist_euclidean.png")
    Z = model.transform(Xtr)
    _embedding_plot(Z, ytr, "Fig. 3: embedding L x_i (UMIST, s = 3)", out / "yuli_fig3_umist_embedding.png")
    _distance_plot(np.linalg.norm(Z - Z[0], axis=1), ytr,
                   "Fig. 4: learned distance ||L(x_i - x_1)|| (UMIST)", out / "yuli_fig4_umist_learned.png")

    params, cfg = _params("fgnet.yaml")
    ds = cfg["dataset"]
    fg = FGNET(ages=ds["ages"], relabel=ds["relabel"]).load(args.data_root)
    Xf = fg.arrays["landmarks"] * float(cfg["features"][0].get("scale", 1.0))
    Xtr, ytr, model = _train(Xf, fg.column("label").astype(float), 8, 80, params, args.seed)
    _embedding_plot(model.transform(Xtr), ytr, "Fig. 6: embedding L x_i (FG-NET, n = 40, s = 3)",
                    out / "yuli_fig6_fgnet_embedding.png")
    print(f"figures 2, 3, 4 and 6 written to {out}")


if __name__ == "__main__":
    main()
