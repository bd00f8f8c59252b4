"""Tests."""


import numpy as np
import pytest

from rankbench.datasets.fgnet import FGNET
from rankbench.datasets.umist import UMIST
from rankbench.metrics import knn_regress, mae
from rankbench.preprocess.pca import PCA
from rankbench.protocols.ordinal import Ordinal
from rankbench.rankers.metric_learning.cmds_dml import CMDSDML
from rankbench.rankers.metric_learning.ldmlr import LDMLR

pytestmark = pytest.mark.realdata


def test_umist_counts_match_the_paper(shared_data):
    ds = UMIST(labels="subject_labels.csv").load(shared_data)
    assert len(ds) == 575 and ds.items["subject"].nunique() == 20
    assert ds.arrays["images"].shape == (575, 112, 92)
    counts = ds.items["label"].value_counts().to_dict()
    assert counts == {2.0: 225, 1.0: 239, 0.0: 111}  # Yu & Li, Section 5.1


def test_fgnet_counts_match_the_paper(shared_data):
    ds = FGNET(ages=[1, 5, 9, 15, 19], relabel=[1, 2, 3, 4, 5]).load(shared_data)
    assert ds.items["label"].value_counts().sort_index().tolist() == [27, 40, 25, 30, 23]
    assert ds.arrays["landmarks"].shape == (145, 136)
    assert len(FGNET().load(shared_data)) == 1002


def test_umist_cmds_dml_beats_ldmlr_in_a_few_trials(shared_data):
    ds = UMIST(labels="subject_labels.csv").load(shared_data)
    X = ds.arrays["images"].reshape(len(ds), -1).astype(float)
    y = ds.column("label").astype(float)
    proto = Ordinal(n_per_label=10, k=5)
    ours, base = [], []
    for t in range(3):
        split = proto.split(ds, np.random.default_rng(t))
        tr, te = np.array(split["train"]), np.array(split["test"])
        pca = PCA(150).fit(X[tr])
        Xtr, Xte = pca.transform(X[tr]), pca.transform(X[te])
        for est, out in ((CMDSDML(max_iter=1500), ours), (LDMLR(), base)):
            est.fit(Xtr, y[tr])
            out.append(mae(y[te], knn_regress(est.transform(Xtr), y[tr], est.transform(Xte), 5)))
    assert np.mean(ours) < np.mean(base)
    assert abs(np.mean(ours) - 0.3463) < 0.08  # Table 3, K = 5 (few trials: loose)


def _authors_file(shared_data, name):
    path = shared_data / "yuli-authors" / name
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return np.loadtxt(path, delimiter=",")


def _same_up_to_column_sign(A, B):
    sign = np.sign((A * B).sum(axis=0))
    return np.abs(A * sign - B).max() / np.abs(B).max()


def test_umist_authors_labels_and_transductive_pca_are_the_authors_data(shared_data):
    from rankbench.features.raw import Pixels

    ds = UMIST(labels="authors").load(shared_data)
    np.testing.assert_array_equal(ds.column("label"), _authors_file(shared_data, "UMISTlabel.csv"))
    Z = Pixels(transductive_pca=150).extract(ds)
    assert _same_up_to_column_sign(Z, _authors_file(shared_data, "UMISTdata.csv")) < 1e-8


def test_fgnet_unit_norm_transductive_pca_is_the_authors_data(shared_data):
    from rankbench.features.raw import Array

    ds = FGNET(ages=[1, 5, 9, 15, 19], relabel=[1, 2, 3, 4, 5], unlabelled=True).load(shared_data)
    assert len(ds) == 1002 and np.isfinite(ds.column("label")).sum() == 145
    Z = Array(key="landmarks", unit_norm=True, transductive_pca=80).extract(ds)
    order = np.argsort(ds.items["age"].to_numpy(), kind="stable")  # the authors' rows: by age
    ages = _authors_file(shared_data, "FGNETlabel.csv")
    np.testing.assert_array_equal(ds.items["age"].to_numpy()[order], ages)
    assert _same_up_to_column_sign(Z[order], _authors_file(shared_data, "FGNETdata.csv")) < 1e-8
