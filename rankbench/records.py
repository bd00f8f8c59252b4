"""The typed records of a run folder: a trial's result, the splits, the manifest.

Each file of a run folder is one of the pydantic models below, with a ``schema_version``. Writers
build the model (a result that breaks the schema is refused when written) and readers validate
every file against it; a file that does not validate is treated as a corrupt one (reported,
recomputed on ``--resume``). Only :mod:`rankbench.runfolder` reads and writes these files.

Version 0 (no ``schema_version`` key) may hold only the keys that format had
(:attr:`_File.LEGACY`); from version 1 every field is written and required; a file of a newer
version than this rankbench knows is refused by name.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_serializer,
                      model_validator)

from .metrics import metric_info
from .utils.fileio import to_json

#: the version this rankbench writes (and the newest it reads); version 2 added
#: :attr:`TrialRecord.reused`, version 3 :attr:`SettingSplits.data_content` and ``protocol_files``
SCHEMA_VERSION = 3
#: the split keys that hold a split's rows (dataset row positions); anything else a split records
#: (constraints drawn, seeds, concepts kept) is the protocol's own
ROW_KEYS = ("train", "test", "probe", "gallery", "base", "boost")
#: where a failed job stopped: building the ranker, fitting it, scoring with it, or in the
#: protocol's own code around them
PHASES = ("build", "fit", "score", "evaluate")

NonNegativeInt = Annotated[int, Field(ge=0)]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _Strict(BaseModel):
    """Strict (no coercion of "0.5" to 0.5 or of true to 1), closed (an unknown key is an error)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, ser_json_inf_nan="constants")


class _File(_Strict):
    """A whole file of a run folder: versioned, parsed and built with one-line errors."""

    #: the keys a file of version 0 (before versions) could hold
    LEGACY: ClassVar[frozenset[str]] = frozenset()
    #: fields added after version 1, with the version that added them: a file of an older version
    #: may lack them (they take their defaults)
    SINCE: ClassVar[dict[str, int]] = {}

    schema_version: NonNegativeInt = 0

    @model_validator(mode="after")
    def _complete(self):
        given = self.model_fields_set
        if self.schema_version == 0:
            newer = sorted(given - self.LEGACY - {"schema_version"})
            if newer:
                raise ValueError(f"{newer[0]}: a field of a newer schema in a file without schema_version")
        else:
            missing = _missing(self, self.schema_version)
            if missing:
                raise ValueError(f"{missing}: missing field")
        return self

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v > SCHEMA_VERSION:
            raise ValueError(f"written by a newer rankbench (schema {v}); this one reads up to {SCHEMA_VERSION}")
        return v

    @classmethod
    def parse(cls, text: str | bytes):
        """The record from its JSON text; ValueError with one line naming the first bad field."""
        try:
            return cls.model_validate_json(text)
        except ValidationError as err:
            raise ValueError(describe_error(err)) from None

    @classmethod
    def build(cls, data: dict[str, Any]):
        """A new record of this version from plain data (numpy scalars and arrays allowed, as
        JSON writes them; fields not given take their defaults); ValueError with one line naming
        the first bad field."""
        defaults = {name: f.get_default(call_default_factory=True)
                    for name, f in cls.model_fields.items() if not f.is_required()}
        return cls.parse(to_json({**defaults, **data, "schema_version": SCHEMA_VERSION}, indent=None))

    def to_json(self) -> str:
        return self.model_dump_json(indent=1)


def _missing(model: BaseModel, version: int, where: str = "") -> str | None:
    """The key path of the first field ``model`` (or a model inside it) was not given, but the
    fields added after ``version`` (a model's ``SINCE``)."""
    skip = {f for f, v in getattr(type(model), "SINCE", {}).items() if v > version}
    for name in type(model).model_fields:
        if name not in model.model_fields_set and name not in skip:
            return f"{where}{name}"
        value = getattr(model, name)
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, BaseModel) and not isinstance(item, TrialSplit):  # a split's keys are its protocol's
                found = _missing(item, version, f"{where}{name}.{i}." if isinstance(value, list) else f"{where}{name}.")
                if found:
                    return found
    return None


def describe_error(err: ValidationError) -> str:
    """A pydantic error as one line: ``<key path>: <what was expected>, got <value>``; of a union's
    branches, the one whose form the value has (its error is about the value, not the type)."""
    errors = err.errors()
    e = next((x for x in errors if not x["type"].endswith("_type")), errors[0])
    where = ".".join(str(p) for p in e["loc"] if not re.fullmatch(r"[\w-]+\[.*\]", str(p)))  # not a branch's tag
    msg = e["msg"].removeprefix("Value error, ")
    if e["type"] == "missing":
        return f"{where}: missing field"
    if e["type"] == "extra_forbidden":
        return f"{where}: unknown field"
    if e["type"] == "value_error":  # the model's own checks name their field
        return f"{where}: {msg}" if where else msg
    got = e.get("input")
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    return f"{where or '(top level)'}: {msg[0].lower() + msg[1:]}, got {shown[:60]}"


# ----------------------------------------------------------------------------- trial records
class WarningCount(_Strict):
    text: str
    count: Annotated[int, Field(ge=1)]


def _series_of_one_length(series: dict[str, list[float]]) -> dict[str, list[float]]:
    lengths = {k: len(v) for k, v in series.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("series of different lengths (" + ", ".join(f"{k}: {n}" for k, n in lengths.items()) + "); "
                         "expected one value per point in each")
    return series


#: a curve: one series (CMC), or named series of one point each (round, evals, map, ...)
Curve = list[FiniteFloat] | Annotated[dict[str, list[FiniteFloat]], AfterValidator(_series_of_one_length)]


class Reuse(_Strict):
    """Where a reused result was computed: an identical job (the same data, split, method and
    code; :mod:`rankbench.engine.jobs`) of ``run``, at ``at``. Its clock metrics and ``wall_s``
    are the ones measured then."""

    run: str | None
    setting: str
    trial: NonNegativeInt
    method: Annotated[str, Field(min_length=1)]
    at: str


class TrialRecord(_File):
    """One (setting, trial, method) job's result: ``status`` ``ok`` with its metrics, or
    ``failed`` with the error's last line, the phase it stopped in and its traceback.
    ``reused``: the result was not computed by this job but taken from an identical one."""

    LEGACY = frozenset({"setting", "trial", "seed", "ranker_seed", "method", "metrics", "curves", "extra", "wall_s",
                        "warnings"})
    SINCE = {"reused": 2}

    setting: str
    trial: NonNegativeInt
    method: Annotated[str, Field(min_length=1)]
    seed: NonNegativeInt
    ranker_seed: NonNegativeInt | None = None
    status: Literal["ok", "failed"] = "ok"
    metrics: dict[str, FiniteFloat] = Field(default_factory=dict)
    curves: dict[str, Curve] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)
    wall_s: Seconds
    warnings: list[WarningCount] = Field(default_factory=list)
    #: the fingerprint of the resolved config of the run that computed it (absent before version 1)
    config_fingerprint: str | None = None
    error: str | None = None
    phase: Literal[PHASES] | None = None
    traceback: str | None = None
    reused: Reuse | None = None

    @model_validator(mode="after")
    def _consistent(self):
        if self.status == "failed":
            if not self.error:
                raise ValueError("a failed trial names its error")
            if self.reused is not None:
                raise ValueError("reused: a failed trial is never reused")
            if self.metrics:
                raise ValueError("a failed trial holds no metrics")
            return self
        if self.error is not None or self.phase is not None or self.traceback is not None:
            raise ValueError("a finished trial holds no error")
        if not self.metrics:
            raise ValueError("metrics: a finished trial holds at least one metric")
        for name, value in self.metrics.items():
            info = metric_info(name)
            if info is None:
                raise ValueError(f"metrics.{name}: not a declared metric (rankbench.metrics)")
            if info.rate and not 0.0 <= value <= 1.0:
                raise ValueError(f"metrics.{name}: expected a rate in [0, 1], got {value!r}")
            if info.cost and value < 0:
                raise ValueError(f"metrics.{name}: expected a cost >= 0, got {value!r}")
        return self

    @property
    def key(self) -> tuple[str, int, str]:
        return self.setting, self.trial, self.method

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# ----------------------------------------------------------------------------- splits
class TrialSplit(_Strict):
    """One trial's split as the protocol drew it: its number, its seeds and its rows (dataset row
    positions, under :data:`ROW_KEYS`); the protocol's own keys (constraints drawn, concepts kept)
    ride along as they are, read as attributes (``split.concepts``). This is what protocols take.
    Only the keys given are written, and in the order protocols give them (hence the rows' order
    below), so a split is written as it was drawn."""

    model_config = ConfigDict(extra="allow")

    trial: NonNegativeInt
    seed: NonNegativeInt
    ranker_seed: NonNegativeInt | None = None
    base: list[NonNegativeInt] | None = None
    boost: list[NonNegativeInt] | None = None
    train: list[NonNegativeInt] | None = None
    test: list[NonNegativeInt] | None = None
    probe: list[NonNegativeInt] | None = None
    gallery: list[NonNegativeInt] | None = None

    @model_serializer(mode="wrap")
    def _as_given(self, handler):
        return {k: v for k, v in handler(self).items() if k in self.model_fields_set}

    @model_validator(mode="after")
    def _each_row_once(self):
        """A row in two parts (trained on and scored) or twice in one (weighed twice) is no split."""
        parts = [getattr(self, part) or () for part in ROW_KEYS]
        if sum(map(len, parts)) == len(set().union(*parts)):   # the usual case, at C speed
            return self
        seen: dict[int, str] = {}
        for part in ROW_KEYS:
            for r in getattr(self, part) or ():
                if r in seen:
                    raise ValueError(f"{part}: row {r} is in {seen[r]} too" if seen[r] != part else
                                     f"{part}: row {r} is listed twice")
                seen[r] = part
        return self

    @classmethod
    def drawn(cls, split: dict[str, Any], trial: int = 0, seed: int = 0, ranker_seed: int | None = None) -> TrialSplit:
        """A protocol's split (:meth:`~rankbench.protocols.base.Protocol.split`; numpy values
        allowed) with its trial's number and seeds; ValueError naming the first bad key."""
        try:
            return cls.model_validate_json(to_json({"trial": trial, "seed": seed, "ranker_seed": ranker_seed, **split}))
        except ValidationError as err:
            raise ValueError(describe_error(err)) from None

    @property
    def fit_seed(self) -> int:
        """The seed its rankers are built with (the split's own seed when none is recorded)."""
        return self.seed if self.ranker_seed is None else self.ranker_seed

    def top_row(self) -> int:
        """The largest row it uses (-1 for none)."""
        return max((max(getattr(self, k) or [-1]) for k in ROW_KEYS), default=-1)


class SettingSplits(_Strict):
    """One setting: its label, typed swept values, the dataset's size (when recorded) and each
    trial's split, trials numbered 0, 1, ... in order."""

    SINCE: ClassVar[dict[str, int]] = {"data_content": 3, "protocol_files": 3}

    label: str
    values: dict[str, Any] = Field(default_factory=dict)
    #: the dataset's size and content fingerprint when the splits were drawn (None before version 1)
    n_items: Annotated[int, Field(ge=1)] | None = None
    dataset_fingerprint: str | None = None
    #: digests of the labels and other data the protocol reads beside features (``data_content``) and
    #: of the files it reads (a split file: ``protocol_files``) when the splits were drawn (None before)
    data_content: str | None = None
    protocol_files: str | None = None
    trials: list[TrialSplit] = Field(min_length=1)

    @model_validator(mode="after")
    def _trials(self):
        for i, split in enumerate(self.trials):
            if split.trial != i:
                raise ValueError(f"trials.{i}.trial: expected {i} (trials in order), got {split.trial!r}")
            if self.n_items is not None and split.top_row() >= self.n_items:
                raise ValueError(f"trials.{i}: row {split.top_row()} is beyond the dataset's {self.n_items} items")
        return self

    def top_row(self) -> int:
        """The largest row any of its trials uses (-1 for none)."""
        return max(t.top_row() for t in self.trials)


class Splits(_File):
    """splits.json: every setting of the run, in sweep order."""

    LEGACY = frozenset({"settings"})

    settings: list[SettingSplits] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self):
        labels = [s.label for s in self.settings]
        dup = next((lbl for lbl in labels if labels.count(lbl) > 1), None)
        if dup is not None:
            raise ValueError(f"settings: the setting {dup!r} appears twice")
        return self

    def setting(self, label: str) -> SettingSplits | None:
        return next((s for s in self.settings if s.label == label), None)


# ----------------------------------------------------------------------------- manifest
class Session(_Strict):
    start: str
    end: str | None = None
    executor: dict[str, Any] = Field(default_factory=dict)


class Manifest(_File):
    """manifest.json: what made the run (versions, config, command, machine, data) and its sessions.

    ``config`` is the resolved config the run was started with and ``config_fingerprint`` its
    digest (:func:`config_fingerprint`): ``--resume`` refuses a folder whose config.yaml no longer
    matches them, naming the first changed key. Both are absent before version 1. ``--resume``
    likewise refuses a run whose plug-ins' code (``plugin_code``) changed since it started.
    """

    LEGACY = frozenset({"rankbench_version", "git_commit", "git_dirty", "python", "packages", "machine", "config_path",
                        "cwd", "invocation", "executor", "data_root", "datasets", "features", "start", "sessions",
                        "end", "wall_s_per_method", "n_results", "n_expected", "complete"})

    rankbench_version: str
    config_fingerprint: str | None = None
    config: dict[str, Any] | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None
    python: str = ""
    packages: dict[str, str] = Field(default_factory=dict)
    machine: dict[str, Any] = Field(default_factory=dict)
    config_path: str = ""
    cwd: str = ""
    invocation: dict[str, Any] = Field(default_factory=dict)
    executor: dict[str, Any] = Field(default_factory=dict)
    data_root: str | None = None
    datasets: dict[str, str] = Field(default_factory=dict)
    #: every plug-in class the run uses (protocol, rankers, their steps) and its code's fingerprint
    plugin_code: dict[str, str] = Field(default_factory=dict)
    features: dict[str, Any] = Field(default_factory=dict)
    start: str
    sessions: list[Session] = Field(default_factory=list)
    end: str | None = None
    wall_s_per_method: dict[str, Seconds] = Field(default_factory=dict)
    n_results: NonNegativeInt = 0
    n_failed: NonNegativeInt = 0
    n_expected: NonNegativeInt = 0
    complete: bool = False

    @model_validator(mode="after")
    def _fingerprint(self):
        if self.config is not None and self.config_fingerprint is not None \
                and config_fingerprint(self.config) != self.config_fingerprint:
            raise ValueError("config_fingerprint: does not match the config recorded beside it")
        return self


def config_fingerprint(config: dict[str, Any]) -> str:
    """A digest of a resolved config (canonical JSON: key order and spelling of numbers do not
    matter, values do)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
