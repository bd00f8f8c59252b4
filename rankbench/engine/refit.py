"""One job of a run done again, keeping the fitted ranker: what a figure of a model needs.

A run folder keeps numbers, not models. A figure that draws a fitted model (decision boundaries, a
learned embedding) refits it exactly as the run did: the same resolved config, the same recorded
split (rows, constraints, seeds), the method's own ranker seed, and the protocol's own
``evaluate`` (so the model is the one the trial scored, and its metrics can be checked against the
trial's record). Nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn import config_context

from ..config import Experiment
from ..datasets.base import Dataset
from ..errors import RankbenchError
from ..runfolder import TrialSplit
from ..utils.meter import Meter
from .execute import method_matrix, setting_features
from .plan import EngineOptions, plan


@dataclass
class Refitted:
    """A method refitted on one recorded split."""

    #: the fitted ranker (a pipeline when the method has preprocessing), as the protocol fitted it
    model: Any
    #: the method's feature matrix (or views) of every item of the dataset
    X: np.ndarray | dict[str, np.ndarray]
    dataset: Dataset
    #: the recorded split it was fitted on
    split: TrialSplit
    #: what the protocol measured with it on that split (the trial's record has the same)
    metrics: dict[str, float]


def refit(experiment: Experiment, data_root: str | None, setting: str, method: str,
          split: TrialSplit) -> Refitted:
    """Fit ``method`` of ``experiment`` at ``setting`` on a recorded ``split`` as its trial did.

    The protocol's ``evaluate`` makes the ranker (seeded with the split's ``ranker_seed``), fits and
    scores it; the ranker it made last is the fitted model returned. Features come from the cache.
    """
    p = plan(experiment, data_root, published=False)   # a run already made: its numbers are graded as they are
    sp = next((s for s in p.settings if s.label == setting), None)
    if sp is None:
        raise RankbenchError(f"{experiment.origin}: no setting {setting!r} (settings: "
                             f"{', '.join(repr(s.label) for s in p.settings)})")
    spec = next((m for m in sp.methods if m.name == method), None)
    if spec is None:
        raise RankbenchError(f"{experiment.origin}: no method {method!r} in setting {setting or '(default)'!r}")
    X = method_matrix(spec, setting_features(sp, {}, EngineOptions(progress=False), {}))
    made = []

    def make():
        made.append(spec.make(split.fit_seed))
        return made[-1]

    with config_context(skip_parameter_validation=True):   # built from the checked specs, as a job
        result = sp.protocol.evaluate(make, X, sp.dataset, split, Meter(measure_memory=False))
    return Refitted(made[-1], X, sp.dataset, split, result.metrics)
