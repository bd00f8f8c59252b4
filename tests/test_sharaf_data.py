"""PubFig / OSR loaders on generated fixture folders in the real layouts, the synthetic set and the
comparison protocol (Parikh & Grauman pairs; Sharaf et al. BMVC 2015 evaluation)."""

import numpy as np
import pandas as pd
import pytest

from rankbench.errors import ConfigError, DataError
from rankbench.metrics import pair_accuracy
from rankbench.protocols.base import Meter
from rankbench.protocols.comparison import Comparison, training_pairs
from rankbench.registry import datasets


def write_jpg(path, seed):
    import cv2

    img = np.random.default_rng(seed).integers(0, 255, size=(40, 40, 3), dtype=np.uint8)
    cv2.imwrite(str(path), img)


def make_pubfig(root, n_per=6, drop=None, fields_out=()):
    import scipy.io

    classes = ["Ann", "Bob", "Cid"]
    attrs = ["Male", "Young"]
    names, labels, train = [], [], []
    (root / "images").mkdir(parents=True)
    for k, c in enumerate(classes):
        for i in range(n_per):
            nm = f"{c}_{i}.jpg"
            names.append(nm)
            labels.append(k + 1)
            train.append(1 if i < 2 else 0)
            if nm != drop:
                write_jpg(root / "images" / nm, 10 * k + i)
    n = len(names)
    im_names = np.empty((1, n), dtype=object)
    im_names[0, :] = names
    fields = {
        "im_names": im_names,
        "class_labels": np.array(labels, np.uint8)[:, None],
        "class_names": np.array([classes], dtype=object),
        "attribute_names": np.array([attrs], dtype=object),
        "relative_ordering": np.array([[3, 1, 2], [1, 2, 2]], np.uint8),
        "used_for_training": np.array(train, np.uint8)[:, None],
        "feat": np.random.default_rng(0).uniform(size=(n, 542)),
    }
    for f in fields_out:
        fields.pop(f)
    scipy.io.savemat(str(root / "pubfig_data.mat"), fields)
    return root


def make_osr(root, csv=None, extra=None):
    (root / "images").mkdir(parents=True)
    for c in ("coast", "forest", "street"):
        for i in range(5):
            write_jpg(root / "images" / f"{c}_img{i}.jpg", i)
    if extra:
        write_jpg(root / "images" / extra, 99)
    (root / "relative_ordering.csv").write_text(csv or "# strengths\nattribute,coast,forest,street\n"
                                                "natural,3,3,1\nopen,3,1,2\n")
    return root


def test_pubfig_loader(tmp_path):
    d = datasets.build("pubfig", {"root": str(make_pubfig(tmp_path / "pubfig"))}).load()
    assert list(d.items.columns) == ["id", "category", "train", "path"]
    assert d.items.train.sum() == 6 and d.arrays["feat"].shape == (18, 542)
    assert d.arrays["gist_ref"].shape == (18, 512)
    assert d.info["strength"].loc["Ann", "Male"] == 3 and d.info["strength"].loc["Cid", "Young"] == 2
    assert d.image(0).shape == (40, 40, 3)


def test_pubfig_errors(tmp_path):
    with pytest.raises(DataError, match="pubfig_data.mat"):
        datasets.build("pubfig", {"root": str(tmp_path)}).load()
    root = make_pubfig(tmp_path / "a", drop="Bob_3.jpg")
    with pytest.raises(DataError, match="Bob_3.jpg"):
        datasets.build("pubfig", {"root": str(root)}).load()
    root = make_pubfig(tmp_path / "b", fields_out=("relative_ordering",))
    with pytest.raises(DataError, match="relative_ordering"):
        datasets.build("pubfig", {"root": str(root)}).load()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "pubfig_data.mat").write_bytes(b"not a mat file")
    with pytest.raises(DataError, match="cannot be read"):
        datasets.build("pubfig", {"root": str(tmp_path / "c")}).load()


def test_osr_loader_and_errors(tmp_path):
    d = datasets.build("osr", {"root": str(make_osr(tmp_path / "osr"))}).load()
    assert len(d) == 15 and set(d.items.category) == {"coast", "forest", "street"}
    assert "train" not in d.items.columns
    assert d.info["strength"].loc["street", "open"] == 2
    assert len(datasets.build("osr", {"root": str(tmp_path / "osr"), "n_per_category": 2}).load()) == 6
    with pytest.raises(DataError, match="no known category prefix"):
        datasets.build("osr", {"root": str(make_osr(tmp_path / "o2", extra="desert_x.jpg"))}).load()
    with pytest.raises(DataError, match="numeric"):
        datasets.build("osr", {"root": str(make_osr(tmp_path / "o3", csv="attribute,coast\nnatural,high\n"))}).load()
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="relative_ordering.csv"):
        datasets.build("osr", {"root": str(tmp_path / "empty")}).load()


def test_training_pairs_orientation_and_cap():
    strength = np.array([1, 1, 2, 3, 3])
    pairs, sign = training_pairs(strength, None, True, np.random.default_rng(0))
    assert len(pairs) == 10 and (sign == 0).sum() == 2
    o = sign == 1
    assert (strength[pairs[o, 0]] > strength[pairs[o, 1]]).all()
    assert (strength[pairs[~o, 0]] == strength[pairs[~o, 1]]).all()
    pairs, sign = training_pairs(strength, 4, False, np.random.default_rng(0))
    assert len(pairs) == 4 and (sign == 1).all()


def test_comparison_protocol_on_synthetic():
    from rankbench.rankers.ranksvm import RankSVM

    d = datasets.build("synthetic_attributes", {}).load()
    p = Comparison(n_train_pairs=300)
    split = p.split(d, np.random.default_rng(0))
    assert set(split["train"]) == set(np.flatnonzero(d.items.train))
    meter = Meter(measure_memory=False)
    res = p.evaluate(lambda: RankSVM(C=1.0), d.arrays["feat"], d, split, meter)
    attrs = d.info["attributes"]
    assert set(res.metrics) == {"pair_acc", *[f"pair_acc/{a}" for a in attrs]}
    assert res.metrics["pair_acc"] == pytest.approx(np.mean([res.metrics[f"pair_acc/{a}"] for a in attrs]))
    assert res.metrics["pair_acc"] > 0.9 and meter.train_s > 0
    assert all(v <= 300 for v in res.extra["n_train_pairs"].values())
    # the grouped count agrees with listing every test pair
    test = np.asarray(split["test"])
    st = d.info["strength"]["attr0"].reindex(d.column("category")).to_numpy()[test]
    scores = RankSVM().fit(d.arrays["feat"][split["train"]], *training_pairs(
        d.info["strength"]["attr0"].reindex(d.column("category")).to_numpy()[split["train"]], None, True,
        np.random.default_rng(0))).decision_function(d.arrays["feat"][test])
    i, j = np.triu_indices(len(test), 1)
    keep = st[i] != st[j]
    P = np.where((st[i] > st[j])[keep, None], np.column_stack([i, j])[keep], np.column_stack([j, i])[keep])
    from rankbench.metrics import grouped_pair_accuracy

    acc, n = grouped_pair_accuracy(scores, st)
    assert n == len(P) and acc == pytest.approx(pair_accuracy(scores, P, np.ones(len(P))))


def test_comparison_draws_per_category_and_checks():
    d = datasets.build("synthetic_attributes", {}).load()
    d.items = d.items.drop(columns="train")
    with pytest.raises(ConfigError, match="n_train_per_category"):
        Comparison().check_dataset(d)
    p = Comparison(n_train_per_category=3)
    s1, s2 = p.split(d, np.random.default_rng(1)), p.split(d, np.random.default_rng(1))
    assert s1 == s2
    cats = d.column("category")[s1["train"]]
    assert all((cats == c).sum() == 3 for c in set(cats))
    with pytest.raises(ConfigError, match="unknown attribute 'smile'"):
        Comparison(attributes=["smile"], n_train_per_category=3).check_dataset(d)
    with pytest.raises(DataError, match="cannot draw"):
        Comparison(n_train_per_category=50).split(d, np.random.default_rng(0))


def test_synthetic_attributes_is_seeded():
    a = datasets.build("synthetic_attributes", {"random_state": 3}).load()
    b = datasets.build("synthetic_attributes", {"random_state": 3}).load()
    assert a.fingerprint == b.fingerprint and a.arrays["images"].dtype == np.uint8
    assert isinstance(a.info["strength"], pd.DataFrame)
