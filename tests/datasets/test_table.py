"""The table loader: your own items from one CSV / Parquet file or from image file names.

The examples of datasets/README.md (one per protocol) are run as written, on generated files of
the names they use; then each kind of mistake gives its one line.
"""

import re
from pathlib import Path

import cv2
import numpy as np
import pandas as pd
import pytest
import yaml
from toydata import write_tracks_table

from rankbench import app
from rankbench.errors import ConfigError, DataError
from rankbench.registry import datasets

DOC = (Path(__file__).resolve().parents[2] / "datasets" / "README.md").read_text()
SECTION = DOC[DOC.index("## Your own data, without writing a loader"):]
EXAMPLES = re.findall(r"```yaml\n(.*?)```", SECTION, re.S)


def image(path: Path, colour, rng) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    img = np.clip(np.array(colour)[None, None, :] + rng.normal(0, 25, (64, 24, 3)), 0, 255).astype(np.uint8)
    cv2.imwrite(str(path), img)


def make_files(root: Path, rng) -> None:
    """Every file the examples name, under the data root ``root``."""
    mine = root / "mine"
    mine.mkdir(parents=True)
    people = []
    for p in range(24):
        colour = rng.integers(0, 255, 3)
        for cam in "ab":
            image(mine / "crops" / f"{p:04d}_{cam}.png", colour, rng)
            people.append((f"crops/{p:04d}_{cam}.png", f"{p:04d}", cam))
    pd.DataFrame(people, columns=["path", "identity", "cam"]).to_csv(mine / "people.csv", index=False)
    for p in range(24):  # Market-1501 names, three sub-folders, plus a junk and a distractor image
        colour = rng.integers(0, 255, 3)
        for cam, sub in (("1", "bounding_box_test"), ("2", "query"), ("2", "bounding_box_test")):
            sub = "bounding_box_train" if p < 12 else sub
            image(root / "market" / sub / f"{p + 1:04d}_c{cam}s1_{rng.integers(1e5):06d}_01.jpg", colour, rng)
    image(root / "market" / "bounding_box_test" / "-1_c1s1_000001_00.jpg", (0, 0, 0), rng)
    image(root / "market" / "bounding_box_test" / "0000_c2s1_000002_00.jpg", (0, 0, 0), rng)

    labels = np.repeat(np.arange(4), 12)
    pd.DataFrame({"id": [f"img{i:03d}" for i in range(48)], "label": labels}).to_csv(mine / "faces.csv", index=False)
    np.save(mine / "faces.npy", labels[:, None] + rng.normal(0, 0.5, (48, 3)))
    y = rng.integers(0, 2, 80)
    pd.DataFrame({"label": y, "train": np.arange(80) < 50}).to_csv(mine / "points.csv", index=False)
    np.save(mine / "points.npy", np.c_[y * 2.0, np.zeros(80)] + rng.normal(size=(80, 2)))
    cats = np.repeat(["coast", "forest", "city"], 12)
    pd.DataFrame({"id": [f"s{i}" for i in range(36)], "category": cats}).to_csv(mine / "scenes.csv", index=False)
    (mine / "strengths.csv").write_text("attribute,coast,forest,city\nnatural,3,3,1\nopen,3,1,2\n")
    level = {"coast": [3, 3], "forest": [3, 1], "city": [1, 2]}
    np.save(mine / "scenes.npy", np.array([level[c] for c in cats], float) + rng.normal(0, 0.3, (36, 2)))
    beach, urban = rng.random(200) < 0.2, rng.random(200) < 0.3
    judged = np.where(rng.random(200) < 0.1, "", urban.astype(int).astype(str))   # some unjudged
    pd.DataFrame({"id": [f"shot{i // 20}_{i}" for i in range(200)], "group": [f"video{i // 20}" for i in range(200)],
                  "beach": beach.astype(int), "urban": judged}).to_csv(mine / "shots.csv", index=False)
    np.save(mine / "colour.npy", np.c_[beach, urban] + rng.normal(0, 0.7, (200, 2)))
    np.save(mine / "texture.npy", rng.normal(size=(200, 5)))
    write_tracks_table(mine, rng)


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKBENCH_CACHE", str(tmp_path / "cache"))
    make_files(tmp_path / "data", np.random.default_rng(0))
    return tmp_path / "data"


def test_there_is_an_example_for_every_protocol():
    protocols = [yaml.safe_load(e)["protocol"]["name"] for e in EXAMPLES]
    assert sorted(set(protocols)) == ["classification", "comparison", "ordinal", "reid", "retrieval",
                                      "video_classification"]


@pytest.mark.parametrize("k", range(len(EXAMPLES)))
def test_each_documented_example_runs_as_written(k, root, tmp_path):
    cfg = {"name": f"example{k}", "trials": 2, **yaml.safe_load(EXAMPLES[k])}   # a fixed split says its trials
    path = tmp_path / "example.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = app.run(path, out=tmp_path / "run", options=app.EngineOptions(data_root=str(root), progress=False),
                  plots=False)
    assert res.outcome.n_done == res.outcome.n_total == cfg["trials"]
    headline = {"reid": "cmc@1", "ordinal": "mae", "classification": "error_rate", "comparison": "pair_acc",
                "retrieval": "map", "video_classification": "error_rate"}[cfg["protocol"]["name"]]
    assert headline in set(res.report.summary["metric"])


def load(data_root, **params):
    return datasets.build("table", params, "dataset").load(str(data_root))


def test_columns_are_typed_and_paths_relative_to_the_table(root):
    ds = load(root, file="mine/people.csv")
    assert list(ds.items.columns) == ["path", "id", "identity", "cam"]
    assert ds.items["identity"].iat[0] == "0000" and ds.items["id"].iat[1] == "0000_b"   # text, not 0
    assert Path(ds.items["path"].iat[0]).is_file() and ds.image(0).shape == (64, 24, 3)
    faces = load(root, file="mine/faces.csv", features="faces.npy")
    assert faces.items["label"].dtype == float and faces.arrays["feat"].shape == (48, 3)
    shots = load(root, file="mine/shots.csv", concepts=["beach", "urban"],
                 features={"colour": "colour.npy", "texture": "texture.npy"})
    R = shots.arrays["relevance"]
    raw = pd.read_csv(root / "mine" / "shots.csv", dtype=str, keep_default_na=False)
    assert shots.info["concepts"] == ["beach", "urban"] and R.dtype == np.int8
    assert (R[:, 1] == -1).tolist() == (raw["urban"] == "").tolist() and set(np.unique(R[:, 0])) == {0, 1}
    assert set(shots.arrays) == {"feat/colour", "feat/texture", "relevance"}
    assert "beach" not in shots.items.columns and shots.items["group"].iat[0] == "video0"


def test_a_row_column_picks_feature_rows_and_other_columns_are_kept(root):
    d = root / "mine"
    pd.DataFrame({"label": [1, 2, 3], "row": [2, 0, 1], "note": ["a", "b", "c"]}).to_csv(d / "rows.csv", index=False)
    np.save(d / "rows.npy", np.array([[0.0], [10.0], [20.0]]))
    ds = load(root, file="mine/rows.csv", features="rows.npy")
    assert ds.arrays["feat"].ravel().tolist() == [20.0, 0.0, 10.0] and ds.items["note"].tolist() == ["a", "b", "c"]



def test_spaces_around_column_names_and_cells_are_not_read(root):
    """Before: a header 'row ' was a column of its own, and the items took the features in table
    order (an ordinal run's MAE 1.25 where the rows give 0); a group column's 'v0 ' and 'v0' were
    two videos, drawn to both sides of a split."""
    d = root / "mine"
    (d / "spaced.csv").write_text("label, row ,video \n1,2, v0 \n2,0,v0\n3,1,v1 \n")
    np.save(d / "spaced.npy", np.array([[0.0], [10.0], [20.0]]))
    ds = load(root, file="mine/spaced.csv", features="spaced.npy")
    assert ds.arrays["feat"].ravel().tolist() == [20.0, 0.0, 10.0]
    assert ds.items["video"].tolist() == ["v0", "v0", "v1"] and "row" not in ds.items.columns
    mapped = load(root, file="mine/spaced.csv", features="spaced.npy", columns={"group": "video "})
    assert mapped.items["group"].tolist() == ["v0", "v0", "v1"]
    # a semicolon- or tab-separated file was one column, then 'needs a label column (has: id, label;row)'
    for sep in (";", "\t"):
        (d / "semi.csv").write_text(f"label{sep}row\n1{sep}2\n")
        with pytest.raises(DataError, match="semi.csv: expected comma-separated columns, .*separated by "
                                            + re.escape(repr(sep))):
            load(root, file="mine/semi.csv")

def test_tracks_are_cut_into_sequences_and_sorted_with_their_features(root):
    ds = load(root, file="mine/tracks.csv", features="tracks.npy", max_gap=20, sequence_length=8)
    raw = pd.read_csv(root / "mine" / "tracks.csv")
    order = np.lexsort((raw["frame"], raw["track"]))
    assert ds.items["track"].tolist() == raw["track"].to_numpy()[order].tolist()
    assert np.array_equal(ds.arrays["feat"], np.load(root / "mine" / "tracks.npy")[order])
    per_track = ds.items.groupby("track")["sequence"].nunique().to_dict()
    assert per_track == {55: 2, 58: 2, 139: 4}   # 16 crops: 2 of 8; track 139 has a gap of 365 frames too
    assert (ds.items["identity"] == ds.items["track"]).all() and ds.items["group"].iat[0] == "55"


def test_market1501_names_give_identity_cam_and_subset_and_keep_junk_and_distractors_as_labels(root):
    ds = load(root, root="market", pattern="market1501")
    assert len(ds) == 24 * 3 + 2 and {"-1", "0000"} <= set(ds.items["identity"])
    assert ds.info["identity_roles"] == {"-1": "junk", "0000": "distractor"}
    assert set(ds.items["cam"]) == {"1", "2"}
    assert set(ds.items["subset"]) == {"bounding_box_test", "bounding_box_train", "query"}
    assert ds.items.loc[ds.items["identity"] == "0000", "subset"].tolist() == ["bounding_box_test"]
    assert ds.items["id"].iat[0].startswith("-1_c1")
    own = load(root, root="market", pattern=r"(?P<identity>-?\d+)_c(?P<cam>\d)s1_(?P<frame>\d+)")
    assert len(own) == 24 * 3 + 2 and own.items["frame"].dtype == np.int64 and "identity_roles" not in own.info


def test_images_of_one_name_in_two_folders_take_their_folders_as_ids(root):
    """PRID 2011: cam_a/person_0001.png and cam_b/person_0001.png. Before: "column 'id', row 39:
    'person_0001' names two items", of a pattern run that has no id column."""
    rng = np.random.default_rng(3)
    for cam in ("cam_a", "cam_b"):
        for p in (1, 2, 3):
            image(root / "prid" / cam / f"person_{p:04d}.png", (40 * p, 90, 20), rng)
    ds = load(root, root="prid", pattern=r"^person_(?P<identity>\d+)")
    assert sorted(ds.items["id"]) == [f"{c}/person_{p:04d}" for c in ("cam_a", "cam_b") for p in (1, 2, 3)]
    assert sorted(load(root, root="prid/cam_a", pattern=r"^person_(?P<identity>\d+)").items["id"]) == [
        "person_0001", "person_0002", "person_0003"]     # one folder: the names, as before


def test_a_market1501_run_must_say_what_junk_and_distractors_are(root, tmp_path):
    cfg = yaml.safe_load(next(e for e in EXAMPLES if "market1501" in e))
    cfg["protocol"] = {k: v for k, v in cfg["protocol"].items() if k != "junk"}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"name": "x", **cfg}))
    with pytest.raises(ConfigError, match=r"protocol.junk: dataset .*market' marks identity '-1' as junk images"):
        app.validate(path, data_root=str(root))


def test_parquet_needs_pyarrow_and_reads_like_csv(root):
    frame = pd.read_csv(root / "mine" / "faces.csv")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        (root / "mine" / "faces.parquet").write_bytes(b"PAR1")
        with pytest.raises(DataError, match="optional package 'pyarrow'"):
            load(root, file="mine/faces.parquet")
        return
    frame.to_parquet(root / "mine" / "faces.parquet")
    assert load(root, file="mine/faces.parquet").items.equals(load(root, file="mine/faces.csv").items)


@pytest.mark.parametrize("rows, params, message", [
    ("path,identity\ncrops/none.png,1\n", {}, r"column 'path', row 1: image .*none.png not found"),
    ("id,label\na,1\nb,x\n", {}, r"column 'label', row 2: expected a finite number .*got 'x'"),
    # 9007199254740993 read as ...992: two labels merged into one, a wrong MAE at exit 0
    ("id,label\na,9007199254740992\nb,9007199254740993\n", {}, r"column 'label', row 1: expected a number held "
     r"exactly"),
    ("id,label,train\na,1,maybe\n", {}, r"column 'train', row 1: expected true or false"),
    ("id,label\na,1\na,2\n", {}, r"column 'id', row 2: 'a' names two items"),
    ("id,beach\na,2\n", {"concepts": ["beach"]}, r"column 'beach', row 1: expected a judgement"),
    ("id,beach\na,1\n", {"concepts": ["urban"]}, r"concepts: no column 'urban'"),
    ("id,category\na,desert\n", {"strengths": "strengths.csv"}, r"row 1: unknown category 'desert'"),
    ("id,label\na,1\nb,2\n", {"features": "faces.npy", "columns": {"label": "age"}}, r"columns: no column 'age'"),
    ("id,label,row\na,1,48\n", {"features": "faces.npy"}, r"row 1: its features are row 48 of .*faces.npy, which has 48"),
    ("id,label\na,1\n", {"features": "none.npy"}, r"features: file .*none.npy not found"),
    ("track,frame\n1,5\n1,5\n", {}, r"track 1 has two rows at frame 5"),
    ("track,frame\n1,5.5\n", {}, r"column 'frame', row 1: expected an integer"),
    ("track,frame,group\n1,5,v0\n2,5,v1\n", {}, r"column 'group': beside a 'track' column the group is the track"),
    ("track,frame,label\n1,5,0\n2,5,1\n", {}, r"column 'label': beside a 'track' column the class is the 'identity'"),
    # text classes were first asked to be numbers ('expected a finite number, got 'B'')
    ("track,frame,label\n1,5,A\n2,5,B\n", {}, r"column 'label': beside a 'track' column the class is the 'identity'"),
    ("id,label,row\na,1,3\nb,2,3\n", {"features": "faces.npy"}, r"column 'row', row 2: features row 3 is row 1's too"),
    ("id,identity\na,p0,\nb,p0,\n", {}, r"every data row has more fields than the header's 2"),
    # a short row read as empty cells: its item left out as unlabelled, at exit 0
    ("id,label,x\na,1,0\n\nb\n", {}, r"bad.csv: line 4 has 1 field\(s\) where the header names 3"),
])
def test_each_mistake_is_one_line_naming_the_file_the_column_and_the_row(root, rows, params, message):
    (root / "mine" / "bad.csv").write_text(rows)
    with pytest.raises(DataError, match=message) as err:
        load(root, file="mine/bad.csv", **params)
    assert "bad.csv" in str(err.value) and "\n" not in str(err.value)


def test_a_missing_protocol_column_names_the_table(root, tmp_path):
    cfg = yaml.safe_load(EXAMPLES[0])
    cfg["dataset"]["file"] = "mine/faces.csv"   # the re-id example on a table without re-id columns
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"name": "x", **cfg}))
    with pytest.raises(DataError, match=r"needs a 'identity' column; dataset '.*faces.csv' has: id, label"):
        app.validate(path, data_root=str(root))
    with pytest.raises(ConfigError, match="expected file .* or root and pattern"):
        load(root)
    with pytest.raises(DataError, match=r"file .*nothing.csv not found"):
        load(root, file="mine/nothing.csv")
