"""Tracking-crop loaders (tracks, towncentre): layout errors, sequences, selection, PETA concepts."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankbench.datasets.tracks import cut_sequences
from rankbench.protocols.video_classification import overlapping_sequences, sequence_table
from rankbench.errors import ConfigError, DataError
from rankbench.registry import datasets


def make_dump(folder: Path, crops: dict[int, list[int]], valid_images: bool = False) -> Path:
    """``<track>_<frame>.jpg`` files; real 8x4 JPEGs only when asked (loading never decodes by default)."""
    folder.mkdir(parents=True, exist_ok=True)
    for t, frames in crops.items():
        for f in frames:
            path = folder / f"{t}_{f}.jpg"
            if valid_images:
                import cv2

                cv2.imwrite(str(path), np.full((8, 4, 3), 10 * t % 255, np.uint8))
            else:
                path.write_bytes(b"not decoded")
    return folder


CROPS = {3: [0, 9, 18, 27, 36, 90, 99], 7: [5, 14, 23], 12: [40, 49, 58, 67, 76, 85]}


def load(name="tracks", **params):
    return datasets.build(name, params).load()


# ------------------------------------------------------------------------------ sequences
def test_cut_sequences_by_gap_and_length_in_temporal_order():
    track = np.array([3] * 7 + [7] * 3 + [12] * 6)
    frame = np.array(CROPS[3] + CROPS[7] + CROPS[12])
    assert cut_sequences(track, frame).tolist() == [0] * 7 + [1] * 3 + [2] * 6
    # gap 36 -> 90 (> 18) splits track 3; ids by first frame: 3@0, 7@5, 12@40, 3@90
    assert cut_sequences(track, frame, max_gap=18).tolist() == [0] * 5 + [3] * 2 + [1] * 3 + [2] * 6
    # at most 4 crops, near-equal pieces: track 3's runs 5 -> 3 + 2 and 2; track 7: 3; track 12: 6 -> 3 + 3
    seq = cut_sequences(track, frame, max_gap=18, sequence_length=4)
    sizes = pd.Series(seq).value_counts().sort_index().tolist()
    assert sorted(sizes) == [2, 2, 3, 3, 3, 3] and max(sizes) <= 4
    assert (np.diff(seq[:5]) >= 0).all() and len(set(seq[:5])) == 2
    firsts = pd.DataFrame({"s": seq, "f": frame}).groupby("s").f.min()
    assert firsts.is_monotonic_increasing  # temporal numbering
    assert len(set(cut_sequences(track, frame, sequence_length=1))) == 16


# ------------------------------------------------------------------------------ tracks loader
def test_generic_dump_loads_items_and_info(tmp_path):
    root = make_dump(tmp_path / "dump", CROPS)
    (root / "notes.txt").write_text("ignored")
    ds = load(root=str(root), max_gap=18, sequence_length=4)
    it = ds.items
    assert list(it.columns) == ["id", "identity", "frame", "sequence", "group", "path"]
    assert len(ds) == 16 and it.id.is_unique and it.id.iat[0] == "3_0"
    assert (it.identity == it.group).all() and it.identity.tolist() == [3] * 7 + [7] * 3 + [12] * 6
    assert it.frame.tolist() == CROPS[3] + CROPS[7] + CROPS[12]
    assert ds.info["n_sequences"] == it.sequence.nunique() == 6
    assert ds.info["tracks"] == [3, 7, 12] and ds.info["n_frames"] == 16 and ds.info["n_shared_frames"] == 0
    assert Path(it.path.iat[0]).name == "3_0.jpg" and ds.fingerprint
    assert load(root=str(root)).info["n_sequences"] == 3  # by default a sequence is a track


def test_selection_by_list_and_by_top_k(tmp_path):
    root = str(make_dump(tmp_path / "d", {**CROPS, 20: [1, 2, 3, 4, 5, 6]}))
    assert load(root=root, tracks=[12, 7]).items.identity.unique().tolist() == [7, 12]
    top = load(root=root, top_k=2)
    assert top.info["tracks"] == [3, 12]  # 7 crops, then 6 (12 before 20: ties by id)
    assert len(top) == 13


def test_shared_frames_counted(tmp_path):
    ds = load(root=str(make_dump(tmp_path / "d", {1: [0, 9, 18], 2: [9, 18, 27], 3: [18]})))
    assert ds.info["n_frames"] == 4 and ds.info["n_shared_frames"] == 2


@pytest.mark.parametrize("bad", ["3_x.jpg", "track3_9.jpg", "3_9_1.jpg", "-3_9.png", "3.jpg"])
def test_unparsable_name_is_named(tmp_path, bad):
    root = make_dump(tmp_path / "d", CROPS)
    (root / bad).write_bytes(b"")
    with pytest.raises(DataError, match=rf"{bad}.*does not parse as <track>_<frame>.*expected layout"):
        load(root=str(root))


def test_crops_in_a_sub_folder_are_refused_not_left_out(tmp_path):
    root = make_dump(tmp_path / "d", CROPS)
    make_dump(root / "cam2", {20: [1, 2, 3]})      # a second dump nested in the first
    (root / "thumbs").mkdir()
    (root / "thumbs" / "notes.txt").write_text("no images here")
    with pytest.raises(DataError, match=r"sub-folder .*cam2 holds 3 image\(s\) that would not be read.*layout"):
        load(root=str(root))
    (root / "cam2" / "20_1.jpg").rename(root / "20_1.jpg")
    for f in (root / "cam2").iterdir():
        f.rename(root / "cam2" / ("." + f.name))  # hidden files are not images
    assert len(load(root=str(root))) == 17


def test_empty_and_missing_folders(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.txt").write_text("no crops")
    with pytest.raises(DataError, match=r"no <track>_<frame> images in .*empty.*expected layout"):
        load(root=str(tmp_path / "empty"))
    with pytest.raises(DataError, match=r"folder .*nowhere not found.*; expected layout"):
        load(root=str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="missing required parameter 'root'"):
        datasets.build("tracks", {})


def test_selected_track_without_crops(tmp_path):
    root = str(make_dump(tmp_path / "d", CROPS))
    with pytest.raises(DataError, match=r"selected track 5 has no crops in .*d"):
        load(root=root, tracks=[3, 5])
    with pytest.raises(ConfigError, match="top_k: 4 asked for, but .* holds 3 tracks"):
        load(root=root, top_k=4)
    with pytest.raises(ConfigError, match="tracks or top_k, not both"):
        load(root=root, tracks=[3], top_k=1)


def test_duplicate_track_and_frame(tmp_path):
    root = make_dump(tmp_path / "d", CROPS)
    (root / "3_09.jpg").write_bytes(b"")  # (3, 9) again
    with pytest.raises(DataError, match=r"two crops of track 3 at frame 9 .*3_09.jpg and 3_9.jpg"):
        load(root=str(root))


def test_check_images_names_an_unreadable_crop(tmp_path):
    root = make_dump(tmp_path / "d", {1: [0, 9]}, valid_images=True)
    ds = load(root=str(root), check_images=True)
    assert ds.image(0).shape == (8, 4, 3)
    (root / "1_18.jpg").write_bytes(b"broken")
    with pytest.raises(DataError, match="1_18.jpg is unreadable"):
        load(root=str(root), check_images=True)


def test_parameters_are_declared():
    from rankbench.datasets.tracks import Tracks
    from rankbench.params import check_params

    with pytest.raises(ConfigError, match="top_k"):
        check_params(Tracks, {"root": "x", "top_k": 0}, "dataset tracks")
    with pytest.raises(ConfigError, match="sequence_length"):
        check_params(Tracks, {"root": "x", "sequence_length": "8"}, "dataset tracks")


# ------------------------------------------------------------------------------ towncentre layout
def make_towncentre(tmp_path, labels: str | None) -> Path:
    root = tmp_path / "towncentre"
    make_dump(root / "images", CROPS)
    if labels is not None:
        (root / "PETA_TownCentre_Label.txt").write_text(labels)
    return root


def test_towncentre_attributes_become_concepts(tmp_path):
    root = make_towncentre(tmp_path, "3 hairBlack personalMale\n7 personalFemale\n\n12 hairBlack\n99 x\n")
    ds = datasets.build("towncentre", {"top_k": 2}).load(str(tmp_path))
    assert ds.info["concepts"] == ["hairBlack", "personalFemale", "personalMale", "x"]
    R = ds.arrays["relevance"]
    assert R.dtype == np.int8 and R.shape == (len(ds), 4)
    by_track = {t: R[(ds.items.identity == t).to_numpy()] for t in (3, 12)}
    assert (by_track[3] == [1, 0, 1, 0]).all() and (by_track[12] == [1, 0, 0, 0]).all()
    (root / "PETA_TownCentre_Label.txt").unlink()
    plain = datasets.build("towncentre", {}).load(str(tmp_path))
    assert "relevance" not in plain.arrays and "concepts" not in plain.info
    assert plain.info["n_sequences"] == 4  # defaults max_gap 18, sequence_length 8: track 3 cut at 36 -> 90


@pytest.mark.parametrize("labels, match", [
    ("3 a\nseven b\n", r"PETA_TownCentre_Label.txt line 2 does not start with a track id"),
    ("3 a\n3 b\n7 c\n12 d\n", r"line 2: track 3 is labelled twice"),
    ("3 a\n12 d\n", r"track 7 has no line in .*PETA_TownCentre_Label.txt"),
    ("3 upperBodyGrey\n7 UpperBodyGrey\n12 d\n", r"PETA_TownCentre_Label.txt: attributes 'UpperBodyGrey' and "
                                                  r"'upperBodyGrey' differ only in case"),
])
def test_towncentre_label_file_errors(tmp_path, labels, match):
    make_towncentre(tmp_path, labels)
    with pytest.raises(DataError, match=match):
        datasets.build("towncentre", {}).load(str(tmp_path))


def test_towncentre_needs_its_images_folder(tmp_path):
    (tmp_path / "towncentre").mkdir()
    with pytest.raises(DataError, match=r"images not found.*; expected layout: towncentre/images/"):
        datasets.build("towncentre", {}).load(str(tmp_path))


# ------------------------------------------------------------------------------ real data
@pytest.mark.realdata
def test_real_towncentre_counts(shared_data):
    ds = datasets.build("towncentre", {}).load(str(shared_data))
    it = ds.items
    assert len(ds) == 6967 and it.identity.nunique() == 222 and it.id.is_unique
    assert ds.info["n_sequences"] == 995
    assert (ds.info["n_frames"], ds.info["n_shared_frames"]) == (3403, 2185)
    assert ds.arrays["relevance"].shape == (6967, len(ds.info["concepts"]))
    assert it.groupby("sequence").size().max() <= 8
    # every crop carries its track's attributes
    assert (ds.arrays["relevance"][(it.identity == 139).to_numpy()].std(0) == 0).all()
    whole = datasets.build("towncentre", {"max_gap": None, "sequence_length": None}).load(str(shared_data))
    assert whole.info["n_sequences"] == 222


@pytest.mark.realdata
@pytest.mark.parametrize("k, tracks, crops, sequences, overlaps", [
    (6, [139, 58, 55, 196, 201, 43], 507, 69, 43),
    (5, [139, 58, 55, 196, 201], 444, 59, 33),
])
def test_real_towncentre_paper_settings(shared_data, k, tracks, crops, sequences, overlaps):
    """The paper's 6-person (63 sequences, 363 images) and 5-person (156, 1118) settings, here."""
    ds = datasets.build("towncentre", {"top_k": k}).load(str(shared_data))
    assert ds.info["tracks"] == tracks
    assert len(ds) == crops and ds.info["n_sequences"] == sequences
    assert len(overlapping_sequences(sequence_table(ds.items))) == overlaps
    assert sorted(ds.items.sequence.unique()) == list(range(sequences))


def test_relative_root_is_relative_to_the_data_root_not_the_working_directory(tmp_path, monkeypatch):
    """A config's ``dataset.root: my_dump`` names <data root>/my_dump from whatever folder it runs in."""
    make_dump(tmp_path / "data" / "my_dump", CROPS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    ds = datasets.build("tracks", {"root": "my_dump"}).load(str(tmp_path / "data"))
    assert len(ds) == sum(len(v) for v in CROPS.values())
    monkeypatch.setenv("RANKBENCH_DATA", str(tmp_path / "data"))
    assert len(datasets.build("tracks", {"root": "my_dump"}).load()) == len(ds)
    with pytest.raises(DataError, match="relative to the data root"):
        datasets.build("tracks", {"root": "not_there"}).load(str(tmp_path / "data"))
    # an absolute root is used as it is
    assert len(datasets.build("tracks", {"root": str(tmp_path / "data" / "my_dump")}).load("/nowhere")) == len(ds)


def test_towncentre_label_file_with_a_byte_order_mark(tmp_path):
    """'\\ufeff139 ...' was 'line 1 does not start with a track id'."""
    make_towncentre(tmp_path, "\ufeff3 a\n7 b\n12 c\n")
    assert datasets.build("towncentre", {}).load(str(tmp_path)).info["concepts"] == ["a", "b", "c"]
