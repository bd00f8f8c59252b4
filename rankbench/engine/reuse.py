"""The key of a job's result in the cache (kind ``trials``): what makes two jobs identical."""

from __future__ import annotations

import os
import sys

import pandas as pd

from .. import __version__
from ..config import dataset_params
from ..datasets.base import Dataset
from ..runfolder import TrialSplit
from ..utils.diskcache import code_fingerprint, digest, source_fingerprint
from .estimator import MethodSpec
from .manifest import package_versions
from .plan import EngineOptions, SettingPlan


#: what a trial's result does not depend on: how results are reported and the command line
_NOT_IN_TRIALS = ("rankbench.report", "rankbench.cli", "rankbench.app", "rankbench.__main__")


def reuse_enabled(opts: EngineOptions) -> bool:
    """Whether finished results are reused: the cache is on (no ``--no-cache``) and
    ``$RANKBENCH_REUSE`` is not ``0`` (features and base models are cached whatever it says)."""
    return opts.use_cache and os.environ.get("RANKBENCH_REUSE", "1") != "0"


class TrialKeys:
    """The key of a job's result in the one cache (kind ``trials``): a digest of everything the
    result is computed from, so that an identical job, in this run (a sweep's setting that does
    not change the method) or in another (a config that repeats another's trials), takes the
    result instead of computing it again.

    The key holds the dataset (its loader's parameters, its files' fingerprint and what a protocol
    reads beside the features: :func:`data_content`), the protocol
    and its parameters, the method's feature matrix (its bytes), the split (rows and seeds), the
    method (its ranker's and preprocessing steps' names and parameters, its feature sets), the
    source of every rankbench module but the report and the command line (any edit, comments
    included, makes new keys), a plug-in's own code (:func:`code_fingerprint`), and the versions of
    Python, rankbench and the libraries. No key (computed every time): an object method
    (``app.evaluate``), a dataset without a fingerprint, code whose source cannot be read. Code a
    plug-in imports from installed packages is not covered: after changing it, ``rankbench cache
    --clear --kind trials``.
    """

    def __init__(self, enabled: bool):
        code = source_fingerprint("rankbench", _NOT_IN_TRIALS) if enabled else None
        self.base = digest(code, __version__, sys.version, package_versions()) if code else None
        self._matrices: dict[tuple, str] = {}

    def setting(self, sp: SettingPlan, contents: tuple[str, str]) -> str | None:
        """The setting's part of its jobs' keys; ``contents``: its :func:`setting_contents`."""
        if self.base is None or not sp.dataset.fingerprint:
            return None
        data = {k: v for k, v in dataset_params(sp.config).items() if k != "root"}
        plugin = _plugin_code(type(sp.protocol))
        if plugin is False:
            return None
        return digest(self.base, sp.config.dataset.name, data, sp.dataset.fingerprint, contents,
                      sp.config.protocol.model_dump(), plugin)

    def matrix(self, mkey: tuple, X) -> str:
        if mkey not in self._matrices:
            self._matrices[mkey] = digest(X)
        return self._matrices[mkey]

    @staticmethod
    def method(spec: MethodSpec) -> str | None:
        parts = [spec.ranker, *spec.steps]
        if spec.fault or any(c.estimator is not None for c in parts):
            return None
        code = [_plugin_code(c.cls) for c in parts]
        if False in code:
            return None
        return digest([[c.kind, c.name, c.params] for c in parts], spec.feature_sets, spec.combine,
                      spec.capability, code)

    @staticmethod
    def job(setting: str | None, matrix: str, method: str | None, split: TrialSplit) -> str | None:
        return None if setting is None or method is None else digest(setting, matrix, method, split.model_dump())


def setting_contents(sp: SettingPlan) -> tuple[str, str]:
    """(:func:`data_content` of the setting's dataset, a digest of the files its protocol reads:
    :meth:`~rankbench.protocols.base.Protocol.input_files`), as splits.json records them."""
    return data_content(sp.dataset), digest([f.read_bytes() for f in sp.protocol.input_files(sp.dataset)])


def data_content(dataset: Dataset) -> str:
    """A digest of what a protocol reads from ``dataset`` beside the features (which key the job
    through its matrix) and the images: the items table, its non-feature arrays (relevance,
    landmarks) and its info (strengths, concepts). A loader's fingerprint keys the feature cache
    and so may leave the labels out: a re-judged collection keeps its features, not its results.
    Where the data sits is left out (file paths, the info's ``root`` and ``source``): the same
    data elsewhere is the same data."""
    def plain(v):  # digest() prints a table through str(), shortened: hash every cell instead
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, (pd.DataFrame, pd.Series)):
            try:
                cells = pd.util.hash_pandas_object(v, index=True)
            except TypeError:  # unhashable cells (lists)
                cells = pd.util.hash_pandas_object(v.astype(str), index=True)
            return [cells.to_numpy(), list(map(str, v.columns if isinstance(v, pd.DataFrame) else [v.name]))]
        return v

    return digest(plain(dataset.items.drop(columns="path", errors="ignore")),
                  plain({k: v for k, v in dataset.info.items() if k not in ("root", "source")}),
                  {k: v for k, v in dataset.arrays.items() if k != "images" and not k.startswith("feat")})


def _plugin_code(cls: type) -> str | None | bool:
    """None for rankbench's own code (in the key's source digest), a plug-in's code fingerprint,
    or False when that cannot be read."""
    if cls.__module__ == "rankbench" or cls.__module__.startswith("rankbench."):
        return None
    return code_fingerprint(cls) or False
