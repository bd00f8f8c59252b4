"""Every registered component, held to the contracts of DEVELOPING.md without a test of its own.

Walks the five registries (a component added tomorrow is checked too):

* rankers: clone keeps the parameters, ``fit`` returns self on data of its capability, scoring an
  unfitted ranker raises scikit-learn's NotFittedError, the same ``random_state`` gives the same
  result and different ones change it (where randomness enters), the capability's methods exist;
* extractors: deterministic, one finite row per item, every parameter keys the cache (but the
  ones declared as execution parameters);
* loaders with a folder: a missing folder is one DataError naming the expected layout;
* protocols: a declared headline and metric families that metrics.py knows;
* every component: every ``__init__`` parameter is declared (annotation or scikit-learn's
  constraints), and a wrong type or an out-of-range value of *each* parameter is one line naming
  that parameter (the generated sweep that keeps new components honest).
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from rankbench.datasets.base import Dataset
from rankbench.errors import DataError, ParameterError
from rankbench.metrics import metric_info
from rankbench.params import annotations, check_params, init_params
from rankbench.rankers.base import accepts_views, capabilities
from rankbench.registry import ALL, datasets, features, preprocessors, protocols, rankers

RANKERS = [e.name for e in rankers.entries()]
EXTRACTORS = [e.name for e in features.entries()]
LOADERS = [e.name for e in datasets.entries()]
PROTOCOLS = [e.name for e in protocols.entries()]
ALL_COMPONENTS = [(kind, e.name) for kind, reg in ALL.items() for e in reg.entries()]

#: parameters under which a ranker's randomness enters on the conformance data (e.g. ELF samples
#: negatives only with negatives_per_query); every ranker that declares random_state must be listed here
#: or show its randomness with its defaults
RANDOMNESS = {"elf": {"negatives_per_query": 1, "n_rounds": 10}, "prsvm": {"C": [1e-3, 1e-1, 10.0]},
              "ranksvm": {"C": [0.01, 1.0, 100.0]}, "kernel_ranksvm": {"C": [0.01, 1.0, 100.0]},
              "rankmkl": {"C": [0.01, 1.0, 100.0], "max_iter": 3}, "rankboost": {"threshold_sample": 200},
              "cmds_dml": {"max_iter": [2, 10, 50, 200], "cv": 3}}
#: loader parameters under which a loader reads files (generated loaders read none by default)
READS_FILES = {"synthetic_collection": {"labels": "trecvid2006"}, "table": {"file": "nothing.csv"}}
#: smaller settings so the walk stays fast (defaults tuned for real data sizes)
FAST = {"elf": {"n_rounds": 10}, "rankboost": {"n_rounds": 10}, "ensemble_ranksvm": {"n_rounds": 10},
        "cmds_dml": {"max_iter": 50}}


# ----------------------------------------------------------------------------- data per capability
def reid_data(n_people=30, d=32, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_people), 2)
    cams = np.tile(np.array(["a", "b"]), n_people)
    X = rng.random((n_people, d))[y] + 1.0 * rng.random((2 * n_people, d))  # noisy: no perfect unit
    return X / X.reshape(len(X), -1, 16).sum(-1).repeat(16, axis=1), y, cams  # 16-bin histograms


def fit_args(name: str, seed=0):
    """(X, fit arguments, scoring call) for a ranker's capability."""
    cls = rankers.get(name)
    caps = capabilities(cls)
    rng = np.random.default_rng(seed)
    if "pair_scorer" in caps:
        X, y, cams = reid_data(seed=seed)
        return X, (y,), {"cams": cams}, lambda r: r.similarity(X[::2], X[1::2])
    if "metric" in caps:
        X = rng.normal(size=(60, 8))
        y = np.repeat(np.arange(3), 20).astype(float)
        X[:, 0] += 2 * y
        return X, (y,), {}, lambda r: r.transform(X)
    if "pairwise" in caps:
        X = rng.random((40, 6))
        f = X @ rng.normal(size=6)
        P = rng.integers(0, 40, size=(300, 2))
        P = P[f[P[:, 0]] != f[P[:, 1]]]
        P = np.where((f[P[:, 0]] < f[P[:, 1]])[:, None], P[:, ::-1], P)
        Xf = {"a": X[:, :3], "b": X[:, 3:]} if accepts_views(cls) else X
        return Xf, (P, np.ones(len(P), int)), {}, lambda r: r.decision_function(Xf)
    if "model_booster" in caps:   # base models' outputs in [-1, 1], a few of them informative
        y = (rng.random(200) < 0.2).astype(int)
        H = np.tanh(rng.normal(size=(200, 6)) + np.outer(2 * y - 1, [1.5, 1.0, 0.5, 0, 0, 0]))
        return H, (y,), {}, lambda r: r.decision_function(H)
    if "classifier" in caps or "item_scorer" in caps:
        X = rng.normal(size=(60, 4))
        y = np.repeat(np.arange(3), 20)
        X[:, 0] += 2 * y
        if "classifier" not in caps:
            y = (y == 2).astype(int)
        return X, (y,), {}, lambda r: (r.predict(X) if "classifier" in caps else r.decision_function(X))
    raise AssertionError(f"no conformance data for capabilities {caps}")


def make(name, **over):
    cls = rankers.get(name)
    params = {**FAST.get(name, {}), **over}
    return cls(**{k: v for k, v in params.items() if k in init_params(cls)})


# ----------------------------------------------------------------------------- rankers
@pytest.mark.parametrize("name", RANKERS)
def test_ranker_contract(name):
    r = make(name)
    assert capabilities(r), f"{name} declares no capability"
    c = clone(r)
    assert c.get_params() == r.get_params() and c is not r
    X, args, kwargs, score = fit_args(name)
    with pytest.raises(NotFittedError):
        score(make(name))
    assert r.fit(X, *args, **kwargs) is r
    out = np.asarray(score(r), dtype=float)
    assert np.isfinite(out).all()
    d = getattr(r, "diagnostics_", {})
    assert isinstance(d, dict)


#: rankers whose randomness enters only at a scale too large for this walk, and where it is tested
RANDOM_AT_SCALE = {"lgbm_lambdarank": "tests/rankers/boosting/test_peers.py (queries beyond 10,000 rows)"}


@pytest.mark.parametrize("name", [n for n in RANKERS if "random_state" in init_params(rankers.get(n))
                                  and n not in RANDOM_AT_SCALE])
def test_random_state_is_honoured_and_matters(name):
    X, args, kwargs, score = fit_args(name)
    extra = RANDOMNESS.get(name, {})
    runs = [np.asarray(score(make(name, random_state=s, **extra).fit(X, *args, **kwargs)), float) for s in (0, 0)]
    np.testing.assert_array_equal(runs[0], runs[1])
    others = [np.asarray(score(make(name, random_state=s, **extra).fit(X, *args, **kwargs)), float)
              for s in (1, 2, 3, 4)]
    assert any(not np.array_equal(runs[0], o) for o in others), \
        f"{name}: random_state changes nothing; drop it, or list parameters under which randomness enters"


# ----------------------------------------------------------------------------- extractors
def image_dataset(n=3):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, size=(n, 128, 64, 3), dtype=np.uint8)
    return Dataset("conformance", pd.DataFrame({"id": [str(i) for i in range(n)]}),
                   arrays={"images": imgs, "feat": rng.random((n, 5))}, fingerprint="conf")


@pytest.mark.parametrize("name", EXTRACTORS)
def test_extractor_is_deterministic_and_keyed(name):
    ds = image_dataset()
    ext = features.get(name)()
    a, b = ext.extract(ds), features.get(name)().extract(ds)
    assert a.ndim == 2 and len(a) == len(ds) and np.isfinite(a).all()
    np.testing.assert_array_equal(a, b)
    key = ext.cache_key()
    for p, value in ext.get_params().items():
        if p in ext.execution_params:
            continue
        other = clone(ext)
        other.set_params(**{p: ("other" if isinstance(value, str) else (value, "other"))})
        assert other.cache_key() != key, f"{name}.{p} does not key the cache"


# ----------------------------------------------------------------------------- loaders, protocols
@pytest.mark.parametrize("name", [n for n in LOADERS if datasets.get(n).folder or "root" in init_params(datasets.get(n))])
def test_loader_reports_its_layout_on_a_missing_folder(name, tmp_path):
    cls = datasets.get(name)
    params = dict(READS_FILES.get(name, {}))
    root = init_params(cls).get("root")
    if root is not None and root.default is root.empty:  # a loader for any folder: give it a missing one
        params["root"] = str(tmp_path / "nothing")
    loader = cls(**params)
    with pytest.raises(DataError) as exc:
        loader.load(str(tmp_path))
    msg = str(exc.value)
    assert "expected layout" in msg and "\n" not in msg


@pytest.mark.parametrize("name", PROTOCOLS)
def test_protocol_declarations(name):
    cls = protocols.get(name)
    p = cls()
    assert cls.capability and cls.metric_families
    assert metric_info(cls.headline) is not None and metric_info(cls.headline).family in cls.metric_families
    for fam in cls.metric_families:
        assert any(metric_info(m) for m in (fam.replace("@K", "@1").replace("@D", "@10"),)), fam
    assert clone(p).get_params() == p.get_params()


@pytest.mark.parametrize("name", [e.name for e in preprocessors.entries()])
def test_preprocessor_fits_on_rows_and_clones(name):
    X = np.random.default_rng(0).random((20, 6))
    step = preprocessors.get(name)()
    Z = clone(step).fit(X).transform(X)
    assert len(Z) == 20 and np.isfinite(Z).all()


# ----------------------------------------------------------------------------- declared parameters
def _bad_values(hint) -> list[Any]:
    """A wrong-type value and, where the annotation bounds it, an out-of-range one."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        inner = [a for a in args if a is not type(None)]
        out = []
        for a in inner:
            out += [v for v in _bad_values(a) if not _accepted(hint, v)]
        return out[:2] or [object()]
    if origin is Annotated:
        base, metas = args[0], args[1:]
        out = [v for v in _bad_values(base)[:1]]
        for meta in metas:
            for m in getattr(meta, "metadata", [meta]):
                for attr, delta in (("ge", -1), ("gt", 0), ("le", 1), ("lt", 0)):
                    bound = getattr(m, attr, None)
                    if bound is not None:
                        out.append(type(bound)(bound + delta) if base in (int, float) else bound + delta)
                if getattr(m, "min_length", None):
                    out.append([] if typing.get_origin(base) is list else ())
        return out
    if origin is Literal:
        return ["not-an-option"]
    if hint is bool:
        return ["maybe"]
    if hint in (int, float):
        return ["sixteen"]
    if hint is str:
        return [123]
    if origin in (list, tuple, dict, set):
        return ["text"]
    return [object()]


def _accepted(hint, value) -> bool:
    from pydantic import TypeAdapter, ValidationError

    from rankbench.params import _strict

    try:
        TypeAdapter(_strict(hint)).validate_python(value)
        return True
    except (ValidationError, TypeError, ValueError):
        return False


@pytest.mark.parametrize("kind, name", ALL_COMPONENTS, ids=[f"{k}-{n}" for k, n in ALL_COMPONENTS])
def test_every_parameter_is_declared_and_checked(kind, name):
    cls = ALL[kind].get(name)
    hints = annotations(cls)
    sk = getattr(cls, "_parameter_constraints", None) or {}
    required = {p: "x" for p, v in init_params(cls).items() if v.default is v.empty}
    for p in init_params(cls):
        assert p in hints or p in sk, f"{kind} {name}: parameter {p!r} has no declared constraint"
        if p not in hints:
            continue  # scikit-learn checks its own
        for bad in _bad_values(hints[p]):
            if _accepted(hints[p], bad):
                continue
            with pytest.raises(ParameterError) as exc:
                check_params(cls, {**required, p: bad}, f"cfg.yaml: {kind}.{name}")
            msg = str(exc.value)
            assert f"{kind}.{name}.{p}: expected" in msg and "\n" not in msg, msg


def test_a_missing_optional_package_is_a_config_error_before_any_work():
    from rankbench.errors import ParameterError
    from rankbench.params import check_params

    class NeedsAbsent:
        requires = {"rankbench_no_such_module": "pip install it"}

        def __init__(self, k: int = 1):
            self.k = k

    with pytest.raises(ParameterError, match=r"rankers\.X: expected the optional package 'rankbench_no_such_module' "
                                             r"to be installed \(pip install it\)"):
        check_params(NeedsAbsent, {}, "rankers.X")
    from importlib.util import find_spec

    for name, module in (("lgbm_lambdarank", "lightgbm"), ("xgb_pairwise", "xgboost")):
        assert module in vars(rankers.get(name))["requires"]
        if find_spec(module) is not None:   # make install adds the peers: then accepted
            check_params(rankers.get(name), {}, f"rankers.{name}")
