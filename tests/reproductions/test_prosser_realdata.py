"""Prosser et al. on real VIPeR (skipped when ../shared/datasets is absent)."""



import numpy as np
import pytest

from rankbench.datasets.viper import VIPeR
from rankbench.features.elf_strips import ELFStrips
from rankbench.metrics import cmc_curve
from rankbench.rankers.ranksvm.prsvm import PRSVM


@pytest.mark.realdata
def test_real_viper_prsvm_beats_l1(shared_data):
    from rankbench.datasets.viper import VIPeR
    from rankbench.features.elf_strips import ELFStrips
    from rankbench.rankers.baselines.template import L1Norm

    if not (shared_data / "viper").is_dir():
        pytest.skip("no viper folder")
    ds = VIPeR(check_images=False).load(str(shared_data))
    people = np.random.default_rng(0).permutation(ds.items["identity"].unique())[:160]
    ds = ds.subset(np.flatnonzero(ds.items["identity"].isin(people)))
    X = ELFStrips().extract(ds)
    y, cams = ds.column("identity"), ds.column("cam")
    train = np.isin(y, people[:60])
    pa, pb = ~train & (cams == "a"), ~train & (cams == "b")
    r = PRSVM(C=0.005).fit(X[train], y[train], cams[train])
    ours = cmc_curve(r.similarity(X[pa], X[pb]), y[pa], y[pb])
    l1 = cmc_curve(L1Norm().fit(X[train]).similarity(X[pa], X[pb]), y[pa], y[pb])
    assert ours[19] > l1[19] + 0.1  # 100 test people: learning the weights pays off clearly


@pytest.mark.realdata
def test_real_viper(shared_data):
    if not (shared_data / "viper").is_dir():
        pytest.skip("no viper folder")
    ds = VIPeR(check_images=False).load(str(shared_data))
    assert len(ds) == 1264
    assert ds.items["identity"].nunique() == 632
    assert (ds.items.groupby("identity")["cam"].nunique() == 2).all()
    F = ELFStrips().extract(ds.subset(np.arange(0, 1264, 158)))
    assert F.shape == (8, 2784) and np.isfinite(F).all()
