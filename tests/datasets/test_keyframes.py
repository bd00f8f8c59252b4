"""The keyframes loader (rankbench/datasets/keyframes.py) on small generated collections in its
layout, including every error it promises: one DataError line naming the file, the problem and
the expected layout."""

import numpy as np
import pytest

from rankbench.datasets.keyframes import Keyframes, natural_key, video_group
from rankbench.errors import ConfigError, DataError
from rankbench.params import check_params
from rankbench.registry import datasets, features

IDS = ["shot1_1_RKF", "shot1_2_RKF", "shot1_10_RKF", "shot2_1_RKF", "shot2_2_RKF", "studio"]


def write_img(path, seed):
    import cv2

    path.parent.mkdir(parents=True, exist_ok=True)
    img = np.random.default_rng(seed).integers(0, 255, size=(12, 16, 3), dtype=np.uint8)
    assert cv2.imwrite(str(path), img)


def make(root, images=True, csv=True, npy=True):
    """A 6-keyframe collection: images (one video in a sub-folder), 2 concepts, a CSV and a .npy
    feature type whose rows are not in id order."""
    if images:
        for i, k in enumerate(IDS):
            sub = "video2/" if k.startswith("shot2") else ""
            write_img(root / "keyframes" / f"{sub}{k}.{'png' if i % 2 else 'jpg'}", i)
    (root / "annotations").mkdir(parents=True)
    (root / "annotations" / "Car.txt").write_text(
        "# Car judgements\nshot1_1_RKF 1\nshot1_2_RKF -1\n\nshot2_1_RKF 0  # unsure\nstudio +1\n")
    (root / "annotations" / "Sky.txt").write_text("shot1_10_RKF -1\nshot2_2_RKF 1\n")
    if csv or npy:
        (root / "features").mkdir()
    order = [3, 0, 5, 1, 4, 2]
    if csv:
        rows = "".join(f"{IDS[i]},{i},{10 * i}\n" for i in order)
        (root / "features" / "colour.csv").write_text("# two numbers per keyframe\nid,a,b\n" + rows)
    if npy:
        np.save(root / "features" / "edge.npy", np.array([[i, -i, 0.5] for i in order], dtype=np.float64))
        (root / "features" / "ids.txt").write_text("".join(IDS[i] + "\n" for i in order))
    return root


def load(root, **params):
    return datasets.build("keyframes", {"root": str(root), **params}).load()


def test_collection(tmp_path):
    ds = load(make(tmp_path))
    assert ds.items["id"].tolist() == IDS  # digit runs by value: shot1_2 < shot1_10
    assert ds.items["group"].tolist() == ["video1"] * 3 + ["video2"] * 2 + ["studio"]
    assert ds.items["path"].iat[3].endswith("keyframes/video2/shot2_1_RKF.png")
    assert ds.info["concepts"] == ["Car", "Sky"] and ds.info["feature_types"] == ["colour", "edge"]
    R = ds.arrays["relevance"]
    assert R.dtype == np.int8
    np.testing.assert_array_equal(R[:, 0], [1, 0, -1, -1, -1, 1])  # file 1/-1/0 -> 1/0/-1; unnamed -1
    np.testing.assert_array_equal(R[:, 1], [-1, -1, 0, -1, 1, -1])
    assert ds.info["n_judged"] == {"Car": 3, "Sky": 2} and ds.info["n_relevant"] == {"Car": 2, "Sky": 1}
    for t, want in (("colour", [[i, 10 * i] for i in range(6)]), ("edge", [[i, -i, 0.5] for i in range(6)])):
        X = ds.arrays[f"feat/{t}"]
        assert X.dtype == np.float32
        np.testing.assert_array_equal(X, want)  # rows follow the items, whatever the file's order
    X = features.build("array", {"key": "feat/edge"}).extract(ds)
    assert X.shape == (6, 3)
    assert ds.image(3).shape == (12, 16, 3)
    sub = ds.subset(np.array([0, 4]))
    np.testing.assert_array_equal(sub.arrays["relevance"], R[[0, 4]])


def test_selection_and_features_only(tmp_path):
    root = make(tmp_path, images=False)
    ds = load(root, concepts=["Sky"], feature_types=["edge"])
    assert ds.items["id"].tolist() == IDS and "path" not in ds.items
    assert ds.info["concepts"] == ["Sky"] and list(ds.arrays) == ["relevance", "feat/edge"]
    with pytest.raises(ConfigError, match="dataset.concepts: unknown concept 'Sea'.*has: Car, Sky"):
        load(root, concepts=["Sea"])
    with pytest.raises(ConfigError, match="dataset.feature_types: unknown feature type 'gist'"):
        load(root, feature_types=["gist"])
    with pytest.raises(ConfigError, match="at least one feature type"):
        load(root, feature_types=[])


def test_images_only_and_fingerprint(tmp_path):
    root = make(tmp_path, csv=False, npy=False)
    ds = load(root)
    assert list(ds.arrays) == ["relevance"] and ds.info["feature_types"] == []
    assert ds.fingerprint == load(root).fingerprint
    assert load(root, check_images=True).fingerprint == ds.fingerprint
    append(root / "annotations" / "Sky.txt", "studio 1\n")  # new judgements keep cached image features
    assert load(root).fingerprint == ds.fingerprint


def test_extension_case_and_byte_order_mark(tmp_path):
    """``Car.TXT`` is concept ``Car``, and a UTF-8 byte order mark (Excel's "CSV UTF-8") is no part
    of a file's first line: the CSV header, the first id of ids.txt and the first judgement."""
    root = make(tmp_path)
    (root / "annotations" / "Car.txt").rename(root / "annotations" / "Car.TXT")
    for name in ("annotations/Sky.txt", "features/colour.csv", "features/ids.txt"):
        (root / name).write_bytes(b"\xef\xbb\xbf" + (root / name).read_bytes())
    (root / "features" / "colour.csv").write_text((root / "features" / "colour.csv").read_text().replace(
        "# two numbers per keyframe\n", ""))   # the header first, right after the mark
    ds = load(root)
    assert ds.info["concepts"] == ["Car", "Sky"] and ds.info["n_judged"] == {"Car": 3, "Sky": 2}
    np.testing.assert_array_equal(ds.arrays["feat/colour"], [[i, 10 * i] for i in range(6)])
    np.testing.assert_array_equal(ds.arrays["feat/edge"], [[i, -i, 0.5] for i in range(6)])


def write_npz(path):
    with open(path, "wb") as f:   # np.savez(path) would add .npz to the name
        np.savez(f, a=np.zeros((6, 2)))


def test_helpers():
    assert video_group("shot259_17_RKF") == "video259" and video_group("shot3_1_NRKF_2") == "video3"
    assert video_group("kf_0001") == "kf_0001"
    assert sorted(["a10", "a9", "b1", "a10b"], key=natural_key) == ["a9", "a10", "a10b", "b1"]


def test_declared_parameters():
    check_params(Keyframes, {"root": "x", "concepts": ["Car"], "feature_types": [], "check_images": True}, "dataset")
    with pytest.raises(ConfigError, match="dataset.concepts: expected"):
        check_params(Keyframes, {"concepts": []}, "dataset")
    with pytest.raises(ConfigError, match="dataset.check_images: expected true or false"):
        check_params(Keyframes, {"check_images": "yes"}, "dataset")


# --------------------------------------------------------------------------- errors
def append(path, text):
    path.write_text(path.read_text() + text)


def corrupt_image(root):
    (root / "keyframes" / "shot1_1_RKF.jpg").write_bytes(b"not a jpeg")


def extra_csv_row(root):
    append(root / "features" / "colour.csv", "shot9_9_RKF,1,2\n")


CASES = [
    # (name, how to break the collection, file named, words of the problem, load params)
    ("missing keyframe", lambda r: append(r / "annotations" / "Car.txt", "shot9_9_RKF 1\n"),
     "Car.txt:7", "keyframe 'shot9_9_RKF' has no image in keyframes/", {}),
    ("duplicate line", lambda r: append(r / "annotations" / "Sky.txt", "\nshot1_10_RKF 1\n"),
     "Sky.txt:4", "keyframe 'shot1_10_RKF' is annotated twice (also on line 1)", {}),
    ("unknown label", lambda r: append(r / "annotations" / "Sky.txt", "studio 2\n"),
     "Sky.txt:3", "unknown label '2' for keyframe 'studio' (expected 1 relevant, -1 not relevant", {}),
    ("malformed line", lambda r: append(r / "annotations" / "Sky.txt", "studio 1 extra\n"),
     "Sky.txt:3", "expected '<keyframe id> <label>', found 'studio 1 extra'", {}),
    ("duplicate image", lambda r: write_img(r / "keyframes" / "video2" / "studio.png", 9),
     "studio.png", "keyframe 'studio' has two images", {}),
    ("corrupt image", corrupt_image, "shot1_1_RKF.jpg", "unreadable", {"check_images": True}),
    ("csv extra id", extra_csv_row,
     "colour.csv", "keyframe ids do not match the collection: 1 keyframe(s) not in the images", {}),
    ("csv missing id", lambda r: (r / "features" / "colour.csv").write_text("id,a\nstudio,1\n"),
     "colour.csv", "5 keyframe(s) of the images in", {}),
    ("csv duplicate id", lambda r: append(r / "features" / "colour.csv", "studio,1,2\n"),
     "colour.csv:9", "duplicate keyframe 'studio' (also on line 5)", {}),
    ("csv not a number", lambda r: append(r / "features" / "colour.csv", "x,1,abc\n"),
     "colour.csv:9", "value 2 is 'abc', expected a finite number", {}),
    ("csv short row", lambda r: append(r / "features" / "colour.csv", "x,1\n"),
     "colour.csv:9", "value 2 is missing, expected a finite number", {}),
    ("csv long row", lambda r: append(r / "features" / "colour.csv", "x,1,2,3\n"),
     "colour.csv", "rows of unequal length (Expected 3 fields in line 9, saw 4)", {}),
    ("npy rows", lambda r: append(r / "features" / "ids.txt", "zzz\n"),
     "edge.npy", "6 rows, but", {}),
    ("npy ids duplicate", lambda r: (r / "features" / "ids.txt").write_text("a\nb\na\n"),
     "ids.txt:3", "duplicate keyframe 'a' (also on line 1)", {}),
    ("npy without ids", lambda r: (r / "features" / "ids.txt").unlink(),
     "edge.npy", "needs", {}),
    ("npy not finite", lambda r: np.save(r / "features" / "edge.npy", np.full((6, 2), np.nan)),
     "edge.npy", "row 0 (keyframe 'shot2_1_RKF') has a non-finite value", {}),
    ("npy complex", lambda r: np.save(r / "features" / "edge.npy", np.ones((6, 2)) + 1j),
     "edge.npy", "expected a 2-D array of real numbers, found shape (6, 2) of complex numbers", {}),
    ("npy overflows float32", lambda r: np.save(r / "features" / "edge.npy", np.array([[0, 1e300]] * 6)),
     "edge.npy", "row 0 (keyframe 'shot2_1_RKF') value 2 is 1e+300, which overflows float32", {}),
    ("csv overflows float32", lambda r: append(r / "features" / "colour.csv", "x,1,-1e39\n"),
     "colour.csv:9", "value 2 is -1e+39, which overflows float32; expected values within float32's range", {}),
    ("npz archive", lambda r: write_npz(r / "features" / "edge.npy"),
     "edge.npy", "expected one .npy array, found an .npz archive", {}),
    ("empty annotation", lambda r: (r / "annotations" / "Sky.txt").write_text("# to do\n"),
     "Sky.txt", "no judgements (the file is empty or holds only comments)", {}),
    ("no relevant keyframe", lambda r: (r / "annotations" / "Sky.txt").write_text("shot1_10_RKF -1\nstudio 0\n"),
     "Sky.txt", "no keyframe judged relevant (1): its 2 line(s) hold 0 relevant (1), 1 not relevant (-1) and "
     "1 unjudged (0)", {}),
    ("0 read as not relevant", lambda r: (r / "annotations" / "Sky.txt").write_text("shot1_10_RKF 0\nstudio 1\n"),
     "Sky.txt", "no keyframe judged not relevant (-1): its 2 line(s) hold 1 relevant (1), 0 not relevant (-1) "
     "and 1 unjudged (0); TRECVID codes are 1 relevant, -1 not relevant, 0 unjudged", {}),
    ("concept in two cases", lambda r: (r / "annotations" / "car.TXT").write_text("studio 1\nshot1_1_RKF -1\n"),
     "car.TXT", "concept 'car' is given twice", {}),
    ("type in two cases", lambda r: (r / "features" / "Colour.CSV").write_text("studio,1\n"),
     "Colour.CSV", "feature type 'colour' is given twice", {}),
    ("broken image link", lambda r: (r / "keyframes" / "shot3_1_RKF.jpg").symlink_to(r / "gone.jpg"),
     "shot3_1_RKF.jpg", "gone.jpg, which does not exist", {}),
    ("broken annotation link", lambda r: (r / "annotations" / "Sea.txt").symlink_to("../Sea.txt"),
     "annotations/Sea.txt", "is a symbolic link to", {}),
    ("type twice", lambda r: np.save(r / "features" / "colour.npy", np.zeros((6, 2))),
     "colour.npy", "feature type 'colour' is given twice", {}),
    ("empty keyframes", lambda r: [p.unlink() for p in (r / "keyframes").rglob("*.*")],
     "keyframes", "holds no images", {}),
    ("empty annotations", lambda r: [p.unlink() for p in (r / "annotations").iterdir()],
     "annotations", "holds no <concept>.txt files", {}),
    ("empty features", lambda r: [p.unlink() for p in (r / "features").iterdir()],
     "features", "holds no <type>.csv or <type>.npy files", {}),
]


@pytest.mark.parametrize("name, breaker, file, words, params", CASES, ids=[c[0] for c in CASES])
def test_errors_are_one_line_naming_file_and_problem(tmp_path, name, breaker, file, words, params):
    root = make(tmp_path)
    breaker(root)
    with pytest.raises(DataError) as e:
        load(root, **params)
    msg = str(e.value)
    assert "\n" not in msg and file in msg and words in msg, msg
    if name != "corrupt image":  # read_image's own message names the file
        assert msg.endswith(Keyframes.layout) and "expected layout:" in msg


def test_missing_keyframe_named_against_features_without_images(tmp_path):
    root = make(tmp_path, images=False, csv=False)
    append(root / "annotations" / "Car.txt", "shot9_9_RKF 1\n")
    with pytest.raises(DataError, match=r"Car.txt:7: keyframe 'shot9_9_RKF' has no row in .*edge.npy"):
        load(root)


def test_missing_folders(tmp_path):
    with pytest.raises(DataError, match="folder .* not found"):
        load(tmp_path / "nowhere")
    (tmp_path / "annotations").mkdir()
    with pytest.raises(DataError, match="neither a keyframes/ nor a features/ folder"):
        load(tmp_path)
    root = make(tmp_path / "c")
    for p in (root / "annotations").iterdir():
        p.unlink()
    (root / "annotations").rmdir()
    with pytest.raises(DataError, match="annotations not found; expected layout"):
        load(root)
