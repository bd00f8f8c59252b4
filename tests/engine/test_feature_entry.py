"""Features enter a run as real, finite numbers whose squared distances are finite, whatever the
extractor; an embedding whose distances overflow stops k-NN instead of ranking the first rows.

Generated sweep: one row per bad matrix; the oracle for "too large" is scipy's own squared
distance of the rows, which must overflow where the check refuses."""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from rankbench.datasets.base import Dataset
from rankbench.engine.cache import get_features
from rankbench.errors import DataError
from rankbench.metrics import knn_regress, knn_vote
from rankbench.registry import features


def shipped(X) -> Dataset:
    X = np.asarray(X)
    return Dataset(name="toy", items=pd.DataFrame({"id": [f"it{i}" for i in range(len(X))]}), arrays={"feat": X})


def extracted(X):
    return get_features(shipped(X), features.build("array", {}, "features.f"), use_cache=False)


GOOD = np.arange(12.0).reshape(4, 3)


def with_cell(value, row=2, col=1):
    X = GOOD.copy()
    X[row, col] = value
    return X


# (id, matrix, expected words)
BAD = [
    ("nan", with_cell(np.nan), ["item 3 (id 'it2')", "NaN or infinite", "1 such item"]),
    ("inf", with_cell(-np.inf, row=0), ["item 1 (id 'it0')", "NaN or infinite"]),
    ("1e300", with_cell(1e300), ["item 3", "overflow", "1e+300", "rescale"]),
    ("all 1e200", GOOD * 1e200, ["item 1", "4 such item", "overflow"]),
    ("no values per item", np.zeros((4, 0)), ["expected real numbers, one row per item", "(4, 0)"]),
    ("norm overflows though each value does not", np.full((3, 400), 1e153), ["item 1", "overflow"]),
]


@pytest.mark.parametrize("case, X, words", BAD, ids=[b[0] for b in BAD])
def test_bad_features_are_one_line_naming_extractor_dataset_and_item(case, X, words):
    with pytest.raises(DataError) as err:
        extracted(X)
    msg = str(err.value)
    assert "extractor 'array'" in msg and "dataset 'toy'" in msg and "\n" not in msg
    assert all(w in msg for w in words), msg


@pytest.mark.parametrize("scale", [1.0, 1e100, 1e150, 1e152, 1e153, 3e153, 1e154, 1e200])
def test_features_are_refused_exactly_when_a_squared_distance_could_overflow(scale):
    # the rows x and -x are as far apart as rows of their norms can be: |2x|^2 = 4 |x|^2
    X = np.array([[scale, scale], [-scale, -scale], [0.0, 0.0]])
    overflows = not np.isfinite(cdist(X, X, "sqeuclidean")).all()
    if overflows:
        with pytest.raises(DataError, match="overflow"):
            extracted(X)
    else:
        assert np.array_equal(extracted(X), X)


def test_good_features_pass_unchanged():
    X = np.random.default_rng(0).normal(size=(5, 4))
    assert np.array_equal(extracted(X), X)


@pytest.mark.parametrize("knn", [knn_regress, knn_vote])
def test_knn_on_overflowing_distances_is_an_error_naming_the_cause(knn):
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(6, 2))
    y = np.array([0, 0, 1, 1, 2, 2.0])
    # finite embeddings whose squared distances are infinite: every neighbour would tie at inf
    with pytest.raises(ValueError, match=r"overflow to infinity .*up to \d.*e\+200.*rescale"):
        knn(Z * 1e200, y, Z[:2] * -1e200, 3)
    # the same geometry at a sane scale predicts from the true nearest rows (brute force)
    D = ((Z[:2, None, :] - Z[None, :, :]) ** 2).sum(-1)
    nn = np.argsort(D, axis=1, kind="stable")[:, :1]
    assert np.array_equal(knn(Z, y, Z[:2], 1), y[nn][:, 0])


def test_features_that_are_no_real_numbers_are_refused_and_booleans_pass():
    for X, said in [(np.ones((4, 2)) + 1j, "complex128"), (np.array([["a"]] * 4), "<U1")]:
        with pytest.raises(DataError, match=f"expected real numbers, one row per item .*of {said}"):
            _checked(X)
    assert _checked(np.ones((4, 2), bool)).dtype == bool   # binary codes are numbers


def _checked(X):
    from rankbench.engine.cache import checked_features

    return checked_features(X, features.build("array", {}, "f"), shipped(np.zeros((len(X), 1))))


def test_an_extractor_that_fails_is_one_line_naming_its_feature_set(cli, tmp_path):
    """Parameters wrong only together (elf_regions' heights above n_cells) and an extractor that
    raises anything else: one line naming the config's feature set, a non-zero exit."""
    plugin = tmp_path / "broken.py"
    plugin.write_text("from rankbench.features.base import Extractor\n\n\n"
                      "class Broken(Extractor):\n"
                      "    def transform_image(self, img):\n"
                      "        raise RuntimeError('no pixels today')\n")
    for feature, words in [("{name: r, extractor: elf_regions, n_cells: 4, heights: [1, 6]}",
                            ["features.r: elf_regions.heights: region height 6 must lie in 1..n_cells=4"]),
                           (f"{{name: b, extractor: '{plugin}:Broken'}}",
                            ["features.b (", "the extractor failed", "RuntimeError: no pixels today"])]:
        path = tmp_path / "bad.yaml"
        path.write_text("dataset: {name: synthetic_reid, n_people: 12}\n"
                        f"features: [{feature}]\n"
                        "protocol: {name: reid, n_test: 6}\ntrials: 1\nrankers: [{name: L1, ranker: l1}]\n")
        res = cli("run", path, "--out", tmp_path / "out", "--no-cache", "--quiet")
        lines = res.output.strip().splitlines()
        assert res.exit_code not in (0, None) and "Traceback" not in res.output, res.output
        assert len(lines) == 1 and lines[0].startswith("rankbench: error:"), res.output
        assert all(w in lines[0] for w in words), lines[0]
