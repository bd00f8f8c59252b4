"""ComponentSpec: one way to name, check and build a component (rankbench/components.py)."""

import pickle

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.ensemble import GradientBoostingClassifier

from rankbench.components import ComponentSpec
from rankbench.errors import ConfigError, ParameterError
from rankbench.protocols.stacked_retrieval import StackedRetrieval
from rankbench.protocols.video_classification import VideoClassification
from rankbench.rankers.boosting.svm_bank import SVMBank
from rankbench.registry import rankers
from rankbench.utils.seeds import split_seed, stream_seed


def test_a_name_is_looked_up_and_its_parameters_checked_once_with_the_key_paths_given():
    spec = ComponentSpec.checked("rankers", "svm_bank", {"C": [1, 2], "gamma": 2}, "protocol.base_models",
                                 "protocol.base_models.ranker")
    assert spec.cls is SVMBank and spec.params == {"C": (1.0, 2.0), "gamma": 2.0}  # as the constructor takes it: a tuple
    assert all(isinstance(v, float) for v in (*spec.params["C"], spec.params["gamma"]))
    with pytest.raises(ConfigError, match=r"^protocol.base_models.ranker: unknown ranker 'svm_bnak'; did you mean"):
        ComponentSpec.checked("rankers", "svm_bnak", {}, "protocol.base_models", "protocol.base_models.ranker")
    with pytest.raises(ParameterError, match=r"^protocol.base_models.cv: expected an integer >= 2, got 1$"):
        ComponentSpec.checked("rankers", "svm_bank", {"cv": 1}, "protocol.base_models")
    with pytest.raises(ParameterError, match=r"^rankers.P.preprocess.0: unknown parameter 'n'"):
        ComponentSpec.checked("preprocessors", "pca", {"n": 3}, "rankers.P.preprocess.0")


def test_build_makes_a_fresh_instance_seeded_only_where_random_state_is_left_to_the_caller():
    spec = ComponentSpec.checked("rankers", "svm_bank", {"cv": 2}, "x")
    a, b = spec.build(7), spec.build(8)
    assert a is not b and (a.random_state, b.random_state, a.cv) == (7, 8, 2)
    assert spec.build().random_state is None and spec.params == {"cv": 2}  # the spec itself is unchanged
    for given in ({"random_state": 3}, {"random_state": None}):
        kept = ComponentSpec.checked("rankers", "svm_bank", given, "x").build(7)
        assert kept.random_state == (3 if given["random_state"] is not None else 7)
    klr = ComponentSpec.checked("rankers", "kernel_logreg", {"lam": 0.01}, "x")
    assert not klr.seeded and not hasattr(klr.build(7), "random_state")   # takes no seed: none given
    # with_seed: the parameters alone say what is built (what a cache is keyed by)
    seeded = spec.with_seed(7)
    assert seeded.params == {"cv": 2, "random_state": 7} and seeded.build().get_params() == a.get_params()
    assert klr.with_seed(7) is klr and ComponentSpec.checked("rankers", "svm_bank", {"random_state": 3}, "x") \
        .with_seed(7).params == {"random_state": 3}


def test_an_objects_parts_left_unseeded_are_seeded_too():
    """Before: make_pipeline(StandardScaler(), RandomForestClassifier()) ran unseeded (its forest's
    random_state None), so two identical evaluations gave other numbers at exit 0."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = ComponentSpec.of(make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=3)))
    assert pipe.seeded and pipe.build(7).get_params()["randomforestclassifier__random_state"] == 7
    ovr = ComponentSpec.of(OneVsRestClassifier(RandomForestClassifier(n_estimators=3, random_state=1)))
    assert not ovr.seeded and ovr.build(7).get_params()["estimator__random_state"] == 1   # the user's seed kept
    mixed = ComponentSpec.of(make_pipeline(PCA(2, random_state=5), RandomForestClassifier(n_estimators=3))).build(9)
    assert (mixed.get_params()["pca__random_state"], mixed.get_params()["randomforestclassifier__random_state"]) == (5, 9)


class WritesItsOptions:
    """A user's ranker that writes to a mapping it was given (a YAML anchor can give two methods one)."""

    def __init__(self, opts=None):
        self.opts = opts
        self.opts["p"] += 1


def test_each_build_gets_its_own_copy_of_the_parameters():
    # built from the config's one mapping, the second job saw the first's write (p = 2, 3 ...)
    spec = ComponentSpec.checked("rankers", f"{__name__}:WritesItsOptions", {"opts": {"p": 1}}, "x")
    assert [spec.build().opts["p"] for _ in range(3)] == [2, 2, 2] and spec.params == {"opts": {"p": 1}}


def test_an_object_is_a_component_whose_builds_are_fresh_copies():
    proto = GradientBoostingClassifier(n_estimators=3)
    spec = ComponentSpec.of(proto)
    assert spec.name == "sklearn.ensemble._gb:GradientBoostingClassifier" and spec.cls is GradientBoostingClassifier
    a = spec.build(11)
    assert a is not proto and a.random_state == 11 and proto.random_state is None and a.n_estimators == 3
    assert ComponentSpec.of(PCA(random_state=4)).build(11).random_state == 4
    assert pickle.loads(pickle.dumps(spec)).build(2).random_state == 2   # sent to worker processes


def test_protocols_build_their_models_through_the_spec():
    bank = StackedRetrieval(base_models={"ranker": "svm_bank", "cv": 2})._bank()
    assert bank == ComponentSpec("rankers", "svm_bank", {"cv": 2})
    with pytest.raises(ParameterError, match=r"^protocol.base_models.cv: expected an integer >= 2"):
        StackedRetrieval(base_models={"ranker": "svm_bank", "cv": 1})._bank()
    with pytest.raises(ConfigError, match=r"^protocol.base_models.ranker: 'l1' is not a model bank"):
        StackedRetrieval(base_models={"ranker": "l1"})._bank()
    selector = VideoClassification(n_constraints=2, selector={"lam": 0.01, "features": "f"}).selector_spec()
    assert selector == ComponentSpec("rankers", "kernel_logreg", {"lam": 0.01})
    assert isinstance(selector.build(5), rankers.get("kernel_logreg"))
    with pytest.raises(ConfigError, match=r"^protocol.selector.ranker: expected a classifier with decoding_losses"):
        VideoClassification(n_constraints=2, selector={"ranker": "l1"}).selector_spec()


def test_a_stream_seed_is_the_first_word_of_the_seed_sequence_of_seed_and_index():
    """A trial's split seed from the run seed, and a protocol's model per concept from the seed its
    split records, are one derivation (stacked_retrieval's banks kept the values they had)."""
    assert [stream_seed(5, i) for i in range(4)] == [split_seed(5, i) for i in range(4)]
    assert len({stream_seed(5, i) for i in range(100)}) == 100
    words = np.random.SeedSequence([5, 3]).generate_state(1)
    assert stream_seed(5, 3) == int(words[0]) % 2**31
