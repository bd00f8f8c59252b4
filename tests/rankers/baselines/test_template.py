"""Template matchers: Bhattacharyya's three forms against per-histogram loops."""

import numpy as np
import pytest

from rankbench.rankers.baselines.template import Bhattacharyya


def _hists(n, H=3, nb=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, H, nb))
    return (X / X.sum(-1, keepdims=True)).reshape(n, -1)


def test_bhattacharyya_forms_against_loops():
    Q, G = _hists(5), _hists(6, seed=1)
    for form in ("coefficient", "hellinger", "log"):
        S = Bhattacharyya(form=form, n_bins=4).fit(Q).similarity(Q, G)
        for i in range(5):
            for j in range(6):
                bcs = [np.sum(np.sqrt(Q[i, h * 4:(h + 1) * 4] * G[j, h * 4:(h + 1) * 4])) for h in range(3)]
                expect = {"coefficient": sum(bcs), "hellinger": -sum(np.sqrt(1 - b) for b in bcs),
                          "log": -sum(-np.log(b) for b in bcs)}[form]
                assert S[i, j] == pytest.approx(expect, rel=1e-9, abs=1e-12)
    # per-histogram forms compare shapes: scaling a histogram changes nothing
    S1 = Bhattacharyya(form="log", n_bins=4).fit(Q).similarity(Q, G)
    S2 = Bhattacharyya(form="log", n_bins=4).fit(Q).similarity(3 * Q, G)
    np.testing.assert_allclose(S1, S2, atol=1e-12)
    with pytest.raises(ValueError, match="multiple of n_bins"):
        Bhattacharyya(form="hellinger", n_bins=5).fit(Q).similarity(Q, G)
