"""Seeds of a run: every trial's split and every ranker's randomness, from the run seed.

A trial's split seed is the one rankbench has always recorded (so recorded splits stay valid):
the first word of ``SeedSequence([run seed, trial])``. Rankers get an independent stream, a
spawned child of that sequence, so a ranker's own randomness (cross-validation folds, sampling)
never repeats the permutation that drew the split. Both are recorded in ``splits.json``.
"""

from __future__ import annotations

import numpy as np

_MASK = 0x7FFFFFFF


def stream_seed(seed: int, index: int) -> int:
    """The seed of stream ``index`` derived from ``seed``: the first word of
    ``SeedSequence([seed, index])`` (a trial's split seed from the run seed; a protocol's models,
    one per concept, from a seed its split records)."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0] & _MASK)


def split_seed(run_seed: int, trial: int) -> int:
    return stream_seed(run_seed, trial)


def ranker_seed(run_seed: int, trial: int) -> int:
    child = np.random.SeedSequence([run_seed, trial]).spawn(1)[0]
    return int(child.generate_state(1)[0] & _MASK)
