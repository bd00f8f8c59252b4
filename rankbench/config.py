"""Experiment configs: YAML schema, ``extends``, overrides, sweeps and every check before a run.

A config is read (duplicate keys and undecodable files are errors, not silent choices), merged
with what it ``extends``, overridden (the ``regress`` block, ``--set``, ``--trials`` / ``--seed``),
validated against the schema below, and every component it names is looked up and its
parameters checked against the constraints the component declares (:mod:`rankbench.params`).
Every mistake is one :class:`~rankbench.errors.ConfigError` line: ``<file>: <key path>: expected
<what>, got <value>``. The schema is documented in ``docs/developer/extending.md``.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .components import ComponentSpec
from .errors import ConfigError, ConfigErrors, ErrorList, did_you_mean
from .metrics import METRICS, metric_info
from .registry import preprocessors, protocols


# ------------------------------------------------------------------------------------ schema
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _WithParams(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class DatasetCfg(_WithParams):
    name: str
    root: str | None = None


class FeatureCfg(_WithParams):
    extractor: str
    name: str | None = None

    @property
    def key(self) -> str:
        return self.name or self.extractor


class RankerCfg(_WithParams):
    name: str
    ranker: str
    features: str | list[str] | None = None
    combine: Literal["concat", "views"] = "concat"
    preprocess: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _named(cls, name: str) -> str:
        if not name.strip():
            raise ValueError(f"expected a method name (it heads the method's rows in every table), got {name!r}")
        if name != name.strip():
            raise ValueError(f"expected a method name without leading or trailing spaces, got {name!r}")
        return name


class ProtocolCfg(_WithParams):
    name: str


class ExpectedCfg(_Strict):
    method: str
    metric: str
    value: float = Field(..., allow_inf_nan=False)
    tolerance: float = Field(..., ge=0, allow_inf_nan=False)
    source: str = ""
    setting: str | None = None
    note: str = ""
    #: why we are known not to match; a miss beyond 1.5x tolerance is then graded GAP
    known_gap: str = ""
    #: a published row of a method this config does not run (shown beside ours, not graded)
    published_only: bool = False
    #: trials behind the published number; a run with fewer says so when checked
    trials: int | None = Field(None, ge=1)
    #: the paper's standard deviation over its trials (one trial's spread): with a one-trial run,
    #: the standard error the check assumes for our number
    std: float | None = Field(None, ge=0, allow_inf_nan=False)


class BaselineRef(_Strict):
    """A claim's ``baseline_limit`` given as a measured value of the run: ``method``'s ``metric``
    at ``setting`` (mean over trials), e.g. the labelled-data baseline a constraint method starts from."""

    method: str
    metric: str
    setting: str = ""


class ClaimCfg(_Strict):
    """A relative claim of a paper, graded on every run (see :mod:`rankbench.report.claims`)."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    kind: Literal["better", "improves", "dominates", "speedup"]
    method: str
    name: str = ""
    than: str | None = None
    metric: str | None = None
    settings: list[str] | None = Field(None, min_length=1)
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    curve: str | None = None
    x: str | None = None
    y: str | None = None
    setting: str | None = None
    by: float = Field(0.0, ge=0, allow_inf_nan=False)
    at_least: float | None = Field(None, gt=0, allow_inf_nan=False)
    #: what is paired: the trials both sides ran, or every trial x task value ``metric/<task>``
    unit: Literal["trials", "tasks"] = "trials"
    #: ``improves`` from another method's / metric's value (defaults: ``method``, ``metric``)
    from_method: str | None = None
    from_metric: str | None = None
    #: curves compared where both exist, or over the union of their x ranges (each held at its end)
    span: Literal["overlap", "union"] = "overlap"
    #: ``speedup``: the target is this fraction of ``than``'s best y
    level: float = Field(1.0, gt=0, le=1, allow_inf_nan=False)
    #: the worst value of the baseline that still resembles the paper's own (a number, or a value the
    #: run measures); worse is graded VOID
    baseline_limit: Annotated[float, Field(allow_inf_nan=False)] | BaselineRef | None = None
    source: str = ""
    note: str = ""
    known_gap: str = ""

    #: the fields each kind needs
    NEEDS: ClassVar[dict[str, tuple[str, ...]]] = {
        "better": ("than", "metric"), "improves": ("metric", "from_", "to"),
        "dominates": ("than", "curve", "x", "y"), "speedup": ("than", "curve", "x", "y", "at_least")}
    #: the optional fields only some kinds take
    ONLY: ClassVar[dict[str, tuple[str, ...]]] = {
        "settings": ("better",), "unit": ("better", "improves"), "from_method": ("improves",),
        "from_metric": ("improves",), "setting": ("dominates", "speedup"), "span": ("dominates",),
        "level": ("speedup",), "by": ("better", "improves", "dominates")}

    @model_validator(mode="after")
    def _complete(self):
        missing = [f for f in self.NEEDS[self.kind] if getattr(self, f) is None]
        if missing:
            name = "from" if missing[0] == "from_" else missing[0]
            raise ValueError(f"a {self.kind!r} claim needs {name!r}")
        for name, kinds in self.ONLY.items():
            if name in self.model_fields_set and self.kind not in kinds:
                raise ValueError(f"{name!r} applies to {' and '.join(kinds)} claims, not to a {self.kind!r} claim")
        if self.than == self.method:
            raise ValueError(f"'than' is the claim's own method {self.method!r}; expected another method")
        return self


class RegressCfg(_Strict):
    trials: int | None = Field(None, ge=1)
    set: dict[str, Any] = Field(default_factory=dict)


class OutputCfg(_Strict):
    plots: bool = True


class Config(_Strict):
    #: the run's folder is results/<name>/...: a name, never a path
    name: str
    description: str = ""
    dataset: DatasetCfg
    features: list[FeatureCfg] = Field(default_factory=list)
    protocol: ProtocolCfg
    rankers: list[RankerCfg] = Field(..., min_length=1)
    trials: int = Field(5, ge=1, le=100_000)
    seed: int = Field(0, ge=0, le=2**32 - 1)
    #: run only these rankers (display names; default every one): ``--methods``. Published rows
    #: and claims of the others stay in the config and are graded NOT RUN.
    methods: list[str] | None = Field(None, min_length=1)
    sweep: dict[str, list[Any]] = Field(default_factory=dict)
    expected: list[ExpectedCfg] = Field(default_factory=list)
    claims: list[ClaimCfg] = Field(default_factory=list)
    #: documented gaps of named claims, ``{claim name: reason}``: a mapping, so that a config which
    #: ``extends`` a shared list of claims adds the gaps of its own data (folded into each claim's
    #: ``known_gap`` when the config is resolved)
    known_gaps: dict[str, str] | None = None
    regress: RegressCfg | None = None
    output: OutputCfg = Field(default_factory=OutputCfg)

    @field_validator("name")
    @classmethod
    def _a_name(cls, v: str) -> str:
        if not v.strip() or v in (".", "..") or any(c in v for c in "/\\") or not v.isprintable():
            raise ValueError(f"expected a run name (printable, no '/' or '\\', not '.' or '..'), got {v!r}: "
                             "it names a folder under the results folder")
        return v

    @field_validator("sweep")
    @classmethod
    def _settings(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in v.items():
            if not values:
                raise ValueError(f"{key}: expected a list of one value or more (each value is a setting), got []")
            seen: dict[Any, Any] = {}
            for x in values:   # 1 and 1.0 are one number, so one setting once the parameter is typed
                same = _fmt(float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x)
                if same in seen:
                    given = _fmt(x) if _fmt(x) == _fmt(seen[same]) else f"{_fmt(seen[same])} (as {_fmt(x)})"
                    raise ValueError(f"{key}: the value {given} is given twice; expected each setting once")
                seen[same] = x
        return v

    def run_rankers(self) -> list[RankerCfg]:
        """The rankers this run computes: those named in ``methods`` (config order), else all."""
        return [r for r in self.rankers if self.methods is None or r.name in self.methods]


@dataclass(frozen=True)
class Components:
    """A config's components, each looked up and its parameters checked once
    (:func:`check_components`): what the engine builds, never checked again."""

    dataset: ComponentSpec
    #: by feature set (``FeatureCfg.key``)
    features: dict[str, ComponentSpec]
    protocol: ComponentSpec
    #: by display name: the ranker and its preprocessing steps, in order
    rankers: dict[str, tuple[ComponentSpec, tuple[ComponentSpec, ...]]]


@dataclass
class Setting:
    """One sweep setting: its label (``protocol.n_test=316``), typed values, validated config and
    its checked components."""

    label: str
    values: dict[str, Any]
    config: Config
    components: Components


@dataclass
class Experiment:
    """A resolved config: the dict written to ``config.yaml``, its validated form, its checked
    components and its settings."""

    origin: str
    data: dict[str, Any]
    config: Config
    components: Components
    settings: list[Setting] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.config.name


# ------------------------------------------------------------------------------------ YAML
#: bounds of a YAML document, checked before any object is built from it: its size in bytes, and
#: the values it holds with every alias expanded (an alias bomb of a few lines holds billions; the
#: largest config here holds about a thousand)
MAX_YAML_BYTES = 2**20
MAX_YAML_VALUES = 100_000
_MERGE = "tag:yaml.org,2002:merge"


class _Loader(yaml.SafeLoader):
    """Safe YAML with a few fixes: numbers are YAML 1.2's (``010`` and ``1:30`` are text, not YAML 1.1's
    octal 8 and sexagesimal 90) and ``1e-10`` (no dot) is a float, as papers write parameters; a
    key given twice in one mapping is an error instead of silently keeping the last value (keys a
    merge key ``<<: *base`` brings in may be overridden); a key must be a plain value, not a list or
    a mapping; and a document is bounded (:data:`MAX_YAML_VALUES`) before any object is built."""

    def get_single_data(self):
        node = self.get_single_node()
        if node is None:
            return None
        _check_expanded_size(node)
        return self.construct_document(node)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue
                if not isinstance(key_node, yaml.ScalarNode):
                    kind = "list" if isinstance(key_node, yaml.SequenceNode) else "mapping"
                    raise yaml.constructor.ConstructorError(
                        None, None, f"a key that is a {kind} ('? ...'); a config's keys are names", key_node.start_mark)
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (first at line {seen[key].line + 1})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _check_expanded_size(root: yaml.Node) -> None:
    """A YAML error when the document, with every alias expanded, holds more than
    :data:`MAX_YAML_VALUES` values or refers to itself (counted on the node graph, which holds
    each anchored node once, so the count costs the document's size, not its expansion's)."""
    size: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in size:
            continue
        kids = ([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode)
                else list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if not children_done:
            busy.add(id(node))
            stack.append((node, True))
            for k in kids:
                if id(k) in busy:
                    raise yaml.composer.ComposerError(None, None, "an alias refers to a value that contains it "
                                                                  "(a recursive document)", k.start_mark)
                if id(k) not in size:
                    stack.append((k, False))
            continue
        busy.discard(id(node))
        size[id(node)] = 1 + sum(size[id(k)] for k in kids)
        if size[id(node)] > MAX_YAML_VALUES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_YAML_VALUES:,} values once its aliases are expanded (an alias "
                            "bomb?); a config holds far fewer", node.start_mark)


# numbers as YAML 1.2 reads them, not YAML 1.1: ``010`` (octal 8) and ``1:30`` (sexagesimal 90) stay the text
# written, which a number field refuses and a name keeps, never a number the user did not write
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_Loader.yaml_implicit_resolvers = {c: [r for r in rs if r[0] not in (_INT, _FLOAT)]
                                   for c, rs in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(_INT, re.compile(r"^(?:[-+]?(?:0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+)$"), list("-+0123456789"))
_Loader.add_implicit_resolver(
    _FLOAT,
    re.compile(r"^(?:[-+]?(?:[0-9][0-9_]*\.[0-9_]*|\.[0-9][0-9_]*|[0-9][0-9_]*(?=[eE]))(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."),
)


def yaml_load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


def read_yaml(path: Path, what: str = "config") -> dict[str, Any]:
    """A YAML file's top-level mapping, or one ConfigError line naming the file (``what`` it is) and
    the problem."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # before opening: a pipe would block the open
            raise ConfigError(f"{path}: not a file")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_YAML_BYTES + 1)
        if len(raw) > MAX_YAML_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_YAML_BYTES // 2**20} MB; a {what} is a few kilobytes")
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); save the {what} "
                          "as UTF-8") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    try:
        data = yaml_load(text)
    except RecursionError:
        raise ConfigError(f"{path}: YAML error: nested too deeply; a config is a few levels deep") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: YAML error{where}: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys at the top level, "
                          f"got {type(data).__name__}")
    return data


def merge(base: dict, over: dict) -> dict:
    """Deep-merge ``over`` into a copy of ``base``: dicts merge, everything else is replaced."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def load_raw(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The config as a plain dict with ``extends`` resolved (relative to the extending file)."""
    path = Path(path)
    try:
        resolved = path.resolve()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot resolve path ({exc.strerror or exc})") from None
    except RuntimeError:  # Python < 3.13 reports a symbolic-link loop so
        raise ConfigError(f"{path}: cannot resolve path (Too many levels of symbolic links)") from None
    if resolved in _seen:
        raise ConfigError(f"{path}: extends: circular chain ({' -> '.join(p.name for p in _seen + (resolved,))})")
    data = _plugins_beside(read_yaml(path), path)
    parent = data.pop("extends", None)
    if parent is not None:
        if not isinstance(parent, str) or not parent.strip():
            raise ConfigError(f"{path}: extends: expected a file path, got {parent!r}")
        base = load_raw(path.parent / parent, _seen + (resolved,))
        if "name" not in data:
            base.pop("name", None)  # an extending file is its own experiment
        data = merge(base, data)
    data.setdefault("name", path.stem)
    return data


_PLUGIN_FILE = re.compile(r"(?P<file>[^:]+\.py):(?P<cls>[A-Za-z_]\w*)")


def _plugins_beside(node: Any, path: Path) -> Any:
    """``node`` with each plug-in file a config names (``my_ranker.py:MyRanker``, relative) taken
    from the config's folder, as ``extends`` is; where it is not there, from the working folder.
    Present in both as two different files, it is refused: which one ran would depend on where
    the command was typed."""
    if isinstance(node, dict):
        return {k: _plugins_beside(v, path) for k, v in node.items()}
    if isinstance(node, list):
        return [_plugins_beside(v, path) for v in node]
    m = _PLUGIN_FILE.fullmatch(node) if isinstance(node, str) else None
    if m is None or Path(m["file"]).expanduser().is_absolute():
        return node
    beside, here = path.parent / m["file"], Path(m["file"])
    if not beside.is_file():
        return node
    if here.is_file() and not here.samefile(beside):
        raise ConfigError(f"{path}: {node!r}: {m['file']} is both beside the config ({beside}) and in the working "
                          f"folder ({here.resolve()}), two different files; expected one: a plug-in file is "
                          "taken from the config's folder")
    return f"{beside.resolve()}:{m['cls']}"


# ------------------------------------------------------------------------------------ key paths
def _step(node: Any, key: str, path: str, create: bool) -> tuple[Any, Any]:
    """The container and resolved key for one step of a dotted path."""
    if isinstance(node, list):
        if key.isdigit() and int(key) < len(node):
            return node, int(key)
        for i, item in enumerate(node):  # list items are addressed by their name
            if isinstance(item, dict) and key in (item.get("name"), item.get("extractor")):
                return node, i
        names = [str(it.get("name") or it.get("extractor")) for it in node if isinstance(it, dict)]
        raise ConfigError(f"{path}: no item named {key!r} (have: {', '.join(names)})")
    if isinstance(node, dict):
        if key not in node and not create:
            raise ConfigError(f"{path}: key {key!r} not found")
        return node, key
    raise ConfigError(f"{path}: {key!r} cannot be looked up inside a {type(node).__name__}")


def set_path(data: dict, dotted: str, value: Any, origin: str) -> None:
    """Set ``a.b.c`` (list items by name or index; ``*`` for every item) to ``value``."""
    parts = dotted.split(".")
    if not dotted or any(not p for p in parts):
        raise ConfigError(f"{origin}: {dotted!r}: expected a key path like protocol.n_test")
    nodes = [data]
    for depth, key in enumerate(parts):
        last = depth == len(parts) - 1
        nxt = []
        for node in nodes:
            if key == "*" and isinstance(node, list):
                targets = [(node, i) for i in range(len(node))]
            else:
                targets = [_step(node, key, f"{origin}: {dotted}", create=last)]
            for container, k in targets:
                if last:
                    container[k] = copy.deepcopy(value)
                else:
                    if isinstance(container, dict) and container.get(k) is None:
                        container[k] = {}
                    nxt.append(container[k])
        nodes = nxt


def parse_set(item: str) -> tuple[str, Any]:
    """``key.path=value`` (the value read as YAML) from one ``--set``."""
    if "=" not in item:
        raise ConfigError(f"--set {item}: expected key.path=value")
    key, raw = item.split("=", 1)
    try:
        return key.strip(), yaml_load(raw)
    except yaml.YAMLError:
        return key.strip(), raw


class _Absent:
    def __repr__(self) -> str:
        return "absent"


#: the value :func:`first_difference` gives for a key its config does not have
ABSENT = _Absent()


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place where two resolved configs differ: its key path (list items by name or
    index), its value in ``a`` and in ``b`` (:data:`ABSENT` where a config has no such key); None
    when they are equal. The values come with the path because a key may hold dots itself (a
    sweep's ``rankers.LDMLR.mu``), so the path alone cannot be looked up again."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}{k}", a.get(k, ABSENT), b.get(k, ABSENT)
            d = first_difference(a[k], b[k], f"{path}{k}.")
            if d is not None:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            label = x.get("name") if isinstance(x, dict) and x.get("name") else str(i)
            d = first_difference(x, y, f"{path}{label}.")
            if d is not None:
                return d
        return None
    return None if a == b else (path.rstrip(".") or "(top level)", a, b)


# ------------------------------------------------------------------------------------ validation
_MOVED = {"protocol.trials": "trials", "protocol.seed": "seed"}


def _format_validation(err: ValidationError, data: dict, origin: str) -> list[str]:
    """One line per mistake: the errors pydantic gives for one value (one per member of a union
    such as ``str | list[str]``) are one mistake."""
    groups: dict[tuple, list[dict]] = {}
    for e in err.errors():
        key = tuple(e["loc"]) if e["type"] in ("missing", "extra_forbidden") else _in_data(e["loc"], data)
        groups.setdefault(key, []).append(e)
    return [_format_error(errs, list(loc), data, origin) for loc, errs in groups.items()]


def _in_data(loc: tuple, data: dict) -> tuple:
    """The part of an error's location that exists in the config (not a union member's tag)."""
    node, n = data, 0
    for part in loc:
        if not (isinstance(node, (dict, list)) and _has(node, part)):
            break
        node, n = node[part], n + 1
    return tuple(loc[:n])


def _format_error(errs: list[dict], loc: list, data: dict, origin: str) -> str:
    e = errs[0]
    shown, node = [], data
    for part in loc:  # name list items (rankers.PRSVM) rather than numbering them (rankers.2)
        if isinstance(node, list) and isinstance(part, int) and part < len(node):
            item = node[part]
            label = (item.get("name") or item.get("extractor")) if isinstance(item, dict) else None
            shown.append(str(label) if label and str(label).strip() else str(part))
        else:
            shown.append(str(part))
        node = node[part] if isinstance(node, (dict, list)) and _has(node, part) else None
    where = ".".join(shown)
    if e["type"] == "extra_forbidden":
        return f"{origin}: {where}: unknown key"
    if e["type"] == "missing":
        return f"{origin}: {where}: required key missing"
    if e["type"] == "value_error":  # a model's own check (e.g. a claim missing a field)
        return f"{origin}: {where}: {e['msg'].removeprefix('Value error, ')}"
    want = " or ".join(dict.fromkeys(f"a list of at least {x['ctx']['min_length']} item(s)" if x["type"] == "too_short"
                                     else x["msg"].removeprefix("Input should be ").removeprefix("Value should be ")
                                     for x in errs))
    return f"{origin}: {where}: expected {want}, got {node if loc else e.get('input')!r}"


def _has(node: Any, part: Any) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(part, int) and part < len(node)


def _schema(data: dict, origin: str) -> Config:
    """A config dict against the schema; every mistake one line."""
    proto = data.get("protocol")
    if isinstance(proto, dict):
        for old, new in _MOVED.items():
            if old.split(".")[1] in proto:
                raise ConfigError(f"{origin}: {old}: '{new}' is a run parameter now; write it at the "
                                  f"top level of the config ({new}: {proto[old.split('.')[1]]!r})")
    try:
        return Config.model_validate(data)
    except ValidationError as err:
        errors = ErrorList()
        for message in _format_validation(err, data, origin):
            errors.add(message)
        errors.raise_any()
        raise  # pragma: no cover - raise_any raised


def check_published(config: dict, doc: dict, origin: str) -> Config:
    """A run's ``config`` with the published numbers and claims of ``doc`` (its own config, or an
    ``--expected`` file named by ``origin``), checked exactly as a config's own are when it is
    validated (the schema and :func:`_check_expected`: methods of the run, metrics of its
    protocol, settings of its sweep, finite numbers), without looking up its other components (a
    run is checked long after it ran, perhaps where its plug-ins are gone)."""
    for key in ("expected", "claims"):
        if doc.get(key) is not None and not isinstance(doc.get(key), list):
            raise ConfigError(f"{origin}: {key}: expected a list, got {type(doc[key]).__name__}")
    cfg = _schema({**config, "expected": doc.get("expected") or [], "claims": doc.get("claims") or []}, origin)
    errors = ErrorList()
    with errors.check():
        _check_expected(cfg, protocols.get(cfg.protocol.name, f"{origin}: protocol.name"), origin, errors)
    errors.raise_any()
    return cfg


def check_components(cfg: Config, origin: str, memo: dict | None = None) -> Components:
    """Every component looked up, its parameters checked and kept (:class:`Components`), and the
    cross-references; every mistake found (one per component at most) is reported together.
    ``memo`` holds the components already checked (sweep settings share most): each once."""
    errors, memo = ErrorList(), {} if memo is None else memo

    def spec(kind: str, name: str, params: dict, path: str, name_path: str) -> ComponentSpec:
        key = (kind, name, json.dumps(params, sort_keys=True, default=repr))
        if key not in memo:
            memo[key] = ComponentSpec.checked(kind, name, params, f"{origin}: {path}", f"{origin}: {name_path}")
        return memo[key]

    dataset = protocol = pcls = None
    feats, ranked = {}, {}
    with errors.check():
        dataset = spec("datasets", cfg.dataset.name, dataset_params(cfg), "dataset", "dataset.name")
    keys = [f.key for f in cfg.features]
    for f in cfg.features:
        with errors.check():
            feats[f.key] = spec("features", f.extractor, f.params(), f"features.{f.key}", f"features.{f.key}.extractor")
    dup = [k for k in keys if keys.count(k) > 1]
    if dup:
        errors.add(f"{origin}: features: two feature sets are named {dup[0]!r}; give each a distinct 'name'")
    with errors.check():
        pcls = protocols.get(cfg.protocol.name, f"{origin}: protocol.name")  # published numbers need it
        protocol = spec("protocols", cfg.protocol.name, cfg.protocol.params(), "protocol", "protocol.name")
    names = [r.name for r in cfg.rankers]
    dup = [n for n in names if names.count(n) > 1]
    if dup:
        errors.add(f"{origin}: rankers: two rankers are named {dup[0]!r}; display names must be unique")
    for r in cfg.rankers:
        with errors.check():
            ranked[r.name] = _check_ranker(cfg, r, keys, origin, spec, getattr(pcls, "ranker_input", ""))
    with errors.check():
        _check_methods(cfg.methods, names, f"{origin}: methods")
    if pcls is not None:
        _check_expected(cfg, pcls, origin, errors)
    errors.raise_any()
    return Components(dataset, feats, protocol, ranked)


def _check_ranker(cfg: Config, r: RankerCfg, keys: list[str], origin: str, spec,
                  ranker_input: str = "") -> tuple[ComponentSpec, tuple[ComponentSpec, ...]]:
    """A ranker entry: its ranker and preprocessing steps checked (by ``spec``), its feature sets;
    ``ranker_input``: what the protocol's rankers learn from, when not the features."""
    ranker = spec("rankers", r.ranker, r.params(), f"rankers.{r.name}", f"rankers.{r.name}.ranker")
    for fname in ranker_feature_names(cfg, r):
        if fname not in keys:
            raise ConfigError(f"{origin}: rankers.{r.name}.features: unknown feature set {fname!r}; "
                              f"defined: {', '.join(keys) or '(none)'}")
        if isinstance(r.features, list) and r.features.count(fname) > 1:
            raise ConfigError(f"{origin}: rankers.{r.name}.features: the feature set {fname!r} is named twice; "
                              "expected each set once")
    if r.preprocess and r.combine == "views":
        raise ConfigError(f"{origin}: rankers.{r.name}.preprocess: not available with combine: views "
                          "(each view would need its own steps); preprocess the views' features instead")
    if r.preprocess and ranker_input:
        raise ConfigError(f"{origin}: rankers.{r.name}.preprocess: protocol {cfg.protocol.name}'s rankers learn from "
                          f"{ranker_input}, not the features the steps would transform; preprocess is not available")
    steps = []
    for i, step in enumerate(r.preprocess):
        step = dict(step)
        sname = step.pop("name", None)
        if sname is None:
            raise ConfigError(f"{origin}: rankers.{r.name}.preprocess.{i}: missing 'name'; valid: "
                              f"{', '.join(preprocessors.names())}")
        steps.append(spec("preprocessors", sname, step, f"rankers.{r.name}.preprocess.{sname}",
                          f"rankers.{r.name}.preprocess.{i}"))
    return ranker, tuple(steps)


def _check_methods(methods: list[str] | None, names: list[str], where: str) -> None:
    """Every name in ``methods`` (``--methods`` or the ``methods`` key) is one of the rankers ``names``, once."""
    for m in methods or []:
        if m not in names:
            raise ConfigError(f"{where}: {m!r} is not a ranker of this config; {did_you_mean(str(m), names)}"
                              f"its rankers: {', '.join(names)}")
        if methods.count(m) > 1:
            raise ConfigError(f"{where}: {m!r} is named twice")


def _check_expected(cfg: Config, protocol_cls: type, origin: str, errors: ErrorList) -> None:
    methods = [r.name for r in cfg.rankers]
    declared = set(getattr(protocol_cls, "metric_families", ()))
    families = declared | {m.family for m in METRICS if m.cost} if declared else {m.family for m in METRICS}
    labels = [lbl for lbl, _ in sweep_settings(cfg.sweep)]
    for i, e in enumerate(cfg.expected):
        with errors.check():
            _check_expected_entry(cfg, e, f"{origin}: expected.{i}", methods, families, labels)
    for i, c in enumerate(cfg.claims):
        with errors.check():
            _check_claim(cfg, c, f"{origin}: claims.{i}", methods, families, labels)
            _check_curve(c, f"{origin}: claims.{i}", getattr(protocol_cls, "curve_series", None))


def _check_expected_entry(cfg: Config, e: ExpectedCfg, where: str, methods: list[str], families: set[str],
                          labels: list[str]) -> None:
    if e.method not in methods and not e.published_only:
        raise ConfigError(f"{where}.method: {e.method!r} is not a ranker of this config (rankers: "
                          f"{', '.join(methods)}); mark a published row of another method with "
                          "published_only: true")
    if e.method in methods and e.published_only:
        raise ConfigError(f"{where}.published_only: {e.method!r} is run by this config; drop published_only")
    _check_metric(cfg, e.metric, f"{where}.metric", families)
    if metric_info(e.metric).rate:
        for field_, v in (("value", e.value), ("tolerance", e.tolerance), ("std", e.std)):
            _fraction(v, f"{where}.{field_}")
    if e.setting is not None and e.setting not in labels:
        valid = ", ".join(l for l in labels if l) or "(none: this config has no sweep)"
        raise ConfigError(f"{where}.setting: {e.setting!r} is not a sweep setting; valid: {valid}")


def _check_claim(cfg: Config, c: ClaimCfg, where: str, methods: list[str], families: set[str],
                 labels: list[str]) -> None:
    ref = c.baseline_limit if isinstance(c.baseline_limit, BaselineRef) else None
    for field_, m in (("method", c.method), ("than", c.than), ("from_method", c.from_method),
                      ("baseline_limit.method", ref.method if ref else None)):
        if m is not None and m not in methods:
            raise ConfigError(f"{where}.{field_}: {m!r} is not a ranker of this config (rankers: "
                              f"{', '.join(methods)})")
    valid = ", ".join(l for l in labels if l) or "(none: no sweep)"
    if ref is not None and ref.setting and ref.setting not in labels:
        raise ConfigError(f"{where}.baseline_limit.setting: {ref.setting!r} is not a sweep setting; valid: {valid}")
    for field_, m in (("metric", c.metric), ("from_metric", c.from_metric),
                      ("baseline_limit.metric", ref.metric if ref else None)):
        if m is not None:
            _check_metric(cfg, m, f"{where}.{field_}", families)
    named = (("from", c.from_), ("to", c.to), ("setting", c.setting), *(("settings", s) for s in c.settings or []))
    for field_, v in named:
        if v is not None and v not in labels:
            raise ConfigError(f"{where}.{field_}: {v!r} is not a sweep setting; valid: {valid}")
    _check_claim_values(c, where)


def _check_curve(c: ClaimCfg, where: str, declared: dict[str, tuple[str, ...]] | None) -> None:
    """A curve claim's ``curve``, ``x`` and ``y`` among the series its protocol stores
    (``Protocol.curve_series``; a protocol that does not declare them is not checked): a typo was
    graded MISSING after the whole run."""
    if c.kind not in ("dominates", "speedup") or declared is None:
        return
    if c.curve not in declared:
        raise ConfigError(f"{where}.curve: expected a curve the protocol stores ({', '.join(declared) or 'none'}), "
                          f"got {c.curve!r}")
    for field_, v in (("x", c.x), ("y", c.y)):
        if re.sub(r"@\d+$", "@D", str(v)) not in declared[c.curve]:
            raise ConfigError(f"{where}.{field_}: expected a series of curve {c.curve!r} "
                              f"({', '.join(declared[c.curve])}), got {v!r}")


def _check_metric(cfg: Config, metric: str, where: str, families: set[str]) -> None:
    info = metric_info(metric)
    if info is None or info.family not in families:
        raise ConfigError(f"{where}: unknown metric {metric!r} for protocol {cfg.protocol.name!r}; its metrics: "
                          f"{', '.join(sorted(families))}")


def _check_claim_values(c: ClaimCfg, where: str) -> None:
    """A claim's ``from_metric`` measured like its ``metric``; its ``baseline_limit`` in the metric's units."""
    if c.from_metric is not None:
        info, to = metric_info(c.from_metric), metric_info(c.metric)
        if to is not None and (info.higher_is_better, info.rate) != (to.higher_is_better, to.rate):
            raise ConfigError(f"{where}.from_metric: expected a metric measured like {c.metric!r} (same direction "
                              f"and unit), got {c.from_metric!r}")
    measured = metric_info(c.y if c.kind in ("dominates", "speedup") else c.metric)
    if measured is not None and measured.rate:
        _fraction(c.by, f"{where}.by")
    if isinstance(c.baseline_limit, BaselineRef):
        return
    if c.baseline_limit is not None:
        info = metric_info(c.y if c.kind in ("dominates", "speedup") else (c.from_metric or c.metric))
        if info is not None and info.rate:
            _fraction(c.baseline_limit, f"{where}.baseline_limit")


def _fraction(value: float | None, where: str) -> None:
    """A rate's value, margin or spread is a fraction (rates are stored as fractions)."""
    if value is not None and not 0 <= value <= 1:
        raise ConfigError(f"{where}: expected a fraction in [0, 1] (rates are stored as fractions: 25 % is "
                          f"0.25), got {value!r}")


def dataset_params(cfg: Config) -> dict[str, Any]:
    """Loader parameters; ``root`` only when given (generated datasets have none)."""
    params = cfg.dataset.params()
    if cfg.dataset.root is not None:
        params["root"] = cfg.dataset.root
    return params


def ranker_feature_names(cfg: Config, r: RankerCfg) -> list[str]:
    if r.features is None:
        return [f.key for f in cfg.features]
    return [r.features] if isinstance(r.features, str) else list(r.features)


# ------------------------------------------------------------------------------------ sweeps
def _fmt(v: Any) -> str:
    return yaml.safe_dump(v, default_flow_style=True).strip().removesuffix("...").strip()


def sweep_settings(sweep: dict[str, list[Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(label, {key path: value}) for every combination, in the order written; one empty setting
    without a sweep. Labels are ``key=value`` joined by commas."""
    if not sweep:
        return [("", {})]
    keys = list(sweep)
    out = []
    for combo in itertools.product(*(sweep[k] for k in keys)):
        label = ",".join(f"{k}={_fmt(v)}" for k, v in zip(keys, combo))
        out.append((label, dict(zip(keys, combo))))
    return out


#: the most sweep settings a config may have unless the user raises the limit (``--max-settings``):
#: the settings are counted before anything else is done, so a sweep of millions is refused at once
MAX_SETTINGS = 10_000


def count_settings(data: dict) -> int:
    """How many settings a (raw) config's sweep makes: the product of its value lists' lengths."""
    sweep = data.get("sweep")
    n = 1
    for values in sweep.values() if isinstance(sweep, dict) else []:
        n *= len(values) if isinstance(values, list) else 1
    return n


# ------------------------------------------------------------------------------------ overrides
@dataclass
class Overrides:
    """What a user changes at run time, typed (never spelled as command-line text)."""

    sets: list[tuple[str, Any]] = field(default_factory=list)
    trials: int | None = None
    seed: int | None = None
    regress: bool = False
    #: run only these rankers (``--methods``; the config's ``methods`` key): display names, or
    #: names separated by commas (a word that is a ranker's name is taken whole)
    methods: list[str] | None = None
    #: the most sweep settings accepted (``--max-settings``)
    max_settings: int = MAX_SETTINGS

    def empty(self) -> bool:
        return not (self.sets or self.trials is not None or self.seed is not None or self.regress or self.methods)


def _swept(data: dict, key: str) -> str | None:
    """The sweep key whose places overlap the places ``key`` names (``rankers.*.K`` and
    ``rankers.cMDS-DML.K``, ``features.colour.bins`` and ``features.0.bins`` are one place)."""
    sweep = data.get("sweep")
    if not isinstance(sweep, dict):
        return None
    return next((k for k in sweep if _overlap(data, key, str(k))), None)


def _overlap(data: dict, one: str, other: str) -> bool:
    """Whether two key paths name a place in common in ``data`` (one holds the other, or they meet)."""
    mine = _places(data, one)
    return any(a[:len(b)] == b or b[:len(a)] == a for a in mine for b in _places(data, other))


def _places(data: dict, dotted: str) -> list[tuple]:
    """The places (key paths, list items by index) ``dotted`` names in ``data``; as it is written
    where it does not resolve (the step that fails is reported when it is set)."""
    paths: list[tuple] = [()]
    nodes: list[Any] = [data]
    for key in dotted.split("."):
        nxt_paths, nxt_nodes = [], []
        for path, node in zip(paths, nodes):
            try:
                steps = (list(range(len(node))) if key == "*" and isinstance(node, list)
                         else [_step(node, key, dotted, create=True)[1]])
            except ConfigError:
                return [tuple(dotted.split("."))]
            for k in steps:
                nxt_paths.append(path + (k,))
                nxt_nodes.append(node[k] if isinstance(node, list) or k in node else None)
        paths, nodes = nxt_paths, nxt_nodes
    return paths


def apply_overrides(data: dict, over: Overrides, origin: str) -> dict:
    """A copy of ``data`` with the regress block, ``--set`` values, trials and seed applied."""
    data = copy.deepcopy(data)
    if over.regress:
        block = data.get("regress")
        if not block:
            raise ConfigError(f"{origin}: regress: this config declares no regress block")
        if not isinstance(block, dict):
            raise ConfigError(f"{origin}: regress: expected a mapping with trials and set, got {block!r}")
        for k, v in (block.get("set") or {}).items():
            if k != "sweep" and (hit := _swept(data, k)) is not None:
                raise ConfigError(f"{origin}: regress.set.{k}: this key is swept (sweep: {hit}); a single value "
                                  "would be ignored by every setting; reduce the sweep instead (regress.set.sweep)")
            set_path(data, k, v, f"{origin}: regress.set")
        if block.get("trials"):
            data["trials"] = block["trials"]
        if "rankers" in (block.get("set") or {}) and isinstance(data.get("expected"), list):
            # the reduced run grades only the methods it still runs
            kept = {r.get("name") for r in data["rankers"] if isinstance(r, dict)}
            data["expected"] = [e for e in data["expected"] if not isinstance(e, dict)
                                or e.get("method") in kept or e.get("published_only")]
            if isinstance(data.get("claims"), list):
                data["claims"] = [c for c in data["claims"] if not isinstance(c, dict)
                                  or {c.get("method"), c.get("than", c.get("method"))} <= kept]
    for key, value in over.sets:
        if key.split(".")[0] in ("expected", "claims"):
            raise ConfigError(f"--set {key}: published numbers and claims are not set on the command line (the "
                              "verdicts would credit the paper with them); grade a run against other numbers with "
                              "rankbench check RUN_DIR --expected FILE")
        hit = _swept(data, key)
        if hit is not None:
            raise ConfigError(f"--set {key}: this key is swept (sweep: {hit}); a single value would be "
                              f"ignored by every setting; change the sweep instead, e.g. --set "
                              f"'sweep={{{hit}: [...]}}'")
        set_path(data, key, value, "--set")
    for key, value in (("trials", over.trials), ("seed", over.seed)):
        if value is not None:
            if (hit := _swept(data, key)) is not None:
                raise ConfigError(f"--{key} {value}: this run sweeps {key} (sweep: {hit}); a single value would be "
                                  "ignored by every setting; change the sweep instead")
            data[key] = value
    if over.methods is not None:
        rankers_ = data.get("rankers") if isinstance(data.get("rankers"), list) else []
        data["methods"] = _selected(list(over.methods), [str(r.get("name")) for r in rankers_ if isinstance(r, dict)],
                                    f"--methods ({origin})")
    return data


def _selected(words: list[str], names: list[str], where: str) -> list[str]:
    """The rankers ``--methods`` names: each word is a ranker's display name, taken whole when it is
    one (a name may hold a comma), else names separated by commas."""
    out = []
    for word in words or [""]:
        parts = [word] if word in names else [p.strip() for p in str(word).split(",")]
        if not all(parts):
            raise ConfigError(f"{where}: expected ranker names (one per word, or separated by commas), got {word!r}")
        out += parts
    _check_methods(out, names, where)
    return out


def fold_known_gaps(data: dict, origin: str) -> dict:
    """``known_gaps: {claim name: reason}`` written into the named claims' ``known_gap`` (a claim's
    own ``known_gap`` wins); a name that matches no claim is a mistake."""
    gaps = data.get("known_gaps")
    if not gaps or not isinstance(gaps, dict) or not isinstance(data.get("claims"), list):
        return data
    data = copy.deepcopy(data)
    names = [c.get("name") for c in data["claims"] if isinstance(c, dict)]
    for name, reason in gaps.items():
        if name not in names:
            listed = ", ".join(repr(n) for n in names if n) or "none: give the claims a name"
            raise ConfigError(f"{origin}: known_gaps: {name!r} is not the name of a claim of this config "
                              f"(claim names: {listed})")
    for c in data["claims"]:
        if isinstance(c, dict) and c.get("name") in gaps and not c.get("known_gap"):
            c["known_gap"] = gaps[c["name"]]
    return data


def resolve(data: dict, origin: str, max_settings: int = MAX_SETTINGS) -> Experiment:
    """Validate a resolved dict and every sweep setting of it (every setting's mistakes at once);
    a sweep of more than ``max_settings`` settings is refused before anything else."""
    n = count_settings(data)
    if n > max_settings:
        raise ConfigError(f"{origin}: sweep: {n:,} settings, more than the limit of {max_settings:,}; sweep fewer "
                          "values, or raise the limit with --max-settings")
    data = fold_known_gaps(data, origin)
    memo: dict = {}   # the components checked so far: each one once, whichever settings share it
    cfg = _schema(data, origin)
    components = check_components(cfg, origin, memo)
    if len(cfg.sweep) > 2:
        raise ConfigError(f"{origin}: sweep: at most two key paths, got {len(cfg.sweep)}")
    keys = list(cfg.sweep)
    for i, key in enumerate(keys):   # the later key would overwrite the earlier in every setting
        if (first := next((k for k in keys[:i] if _overlap(data, key, k)), None)) is not None:
            raise ConfigError(f"{origin}: sweep: {first} and {key} name one place; expected each place swept by "
                              "one key")
    for key in keys:   # a label changes no number: its settings would be one run under several names
        if (said := next((k for k in ("name", "description") if _overlap(data, key, k)), None)) is not None:
            raise ConfigError(f"{origin}: sweep: {key}: the run's {said} labels it and changes no number; "
                              "expected a key of what the run computes")
    names = [r.name for r in cfg.rankers]
    settings, errors, seen = [], ErrorList(), set()
    for label, values in sweep_settings(cfg.sweep):
        # the published numbers and claims: checked above against the sweep's labels
        d = copy.deepcopy({k: v for k, v in data.items() if k not in ("sweep", "expected", "claims")})
        where = f"{origin} [{label}]" if label else origin
        found = ErrorList()
        with found.check():
            for k, v in values.items():
                set_path(d, k, v, f"{origin}: sweep")
            checked = _schema(d, where)
            renamed = next(((a, b.name) for a, b in zip(names, checked.rankers) if a != b.name), None)
            if renamed is not None or len(checked.rankers) != len(names):
                raise ConfigError(f"{where}: sweep: " + (f"ranker {renamed[0]!r} is named {renamed[1]!r} in this "
                                  "setting" if renamed else "this setting has other rankers") + "; the tables, "
                                  "published numbers and claims follow each method by its name through the "
                                  "settings: sweep what a ranker computes, not its name")
            settings.append(Setting(label, values, checked, check_components(checked, where, memo)))
        for error in found.found:  # a mistake every setting shares: reported once, at its first
            if str(error).replace(where, origin, 1) not in seen:
                seen.add(str(error).replace(where, origin, 1))
                errors.add(error)
    errors.raise_any()
    return Experiment(origin, data, cfg, components, settings)


def load_experiment(path: str | Path, overrides: Overrides | None = None) -> Experiment:
    """Read, merge, override and validate a config file."""
    origin = str(path)
    overrides = overrides or Overrides()
    data = apply_overrides(load_raw(path), overrides, origin)
    try:
        return resolve(data, origin, overrides.max_settings)
    except ConfigError as exc:
        if not overrides.sets:
            raise
        said = [_blame_set(m, origin, data, overrides.sets) for m in getattr(exc, "messages", [str(exc)])]
        raise (ConfigErrors(said) if isinstance(exc, ConfigErrors) else type(exc)(said[0])) from None


def _blame_set(message: str, origin: str, data: dict, sets: list[tuple[str, Any]]) -> str:
    """``message`` about a place a ``--set`` wrote, said of that --set instead of the config file
    (whose text holds another value there)."""
    if not message.startswith(origin + ": "):
        return message
    where = message[len(origin) + 2:].split(": ", 1)[0]
    places = _places(data, where)
    for key, _ in reversed(sets):   # the last --set of a place is the one that holds
        if any(a[:len(b)] == b for a in places for b in _places(data, key)):
            return f"--set {key} (on {origin}): {message[len(origin) + 2:]}"
    return message
