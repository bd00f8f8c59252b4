"""The PubFig relative-attributes loader."""


import numpy as np
import pytest

from rankbench.errors import DataError
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


def test_pubfig_loader(tmp_path):
    with pytest.raises(DataError, match=r"dataset pubfig: image .*is 40x40 pixels, expected 256x256"):
        datasets.build("pubfig", {"root": str(make_pubfig(tmp_path / "pubfig"))}).load()
    d = datasets.build("pubfig", {"root": str(tmp_path / "pubfig"), "check_images": False}).load()
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


def test_pubfig_fingerprint_follows_its_images(tmp_path):
    """The fingerprint keys the feature cache: an image replaced under the same name must change it,
    or the old image's features are served for the new one."""
    root = make_pubfig(tmp_path / "pubfig")
    load = lambda: datasets.build("pubfig", {"root": str(root), "check_images": False}).load().fingerprint  # noqa: E731
    before = load()
    write_jpg(root / "images" / "Ann_0.jpg", 999)
    assert load() != before
