"""Experiment configs: YAML schema, ``extends``, ``--set`` overrides and sweeps.

Every mistake becomes a one-line :class:`~rankbench.errors.ConfigError` naming the file, the key
path and what was expected. The schema is in ``DEVELOPING.md``; keys that are not schema fields
are parameters of the named loader / extractor / ranker / protocol and are checked against that
class's ``__init__`` signature.
"""

from __future__ import annotations

import copy
import itertools
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError
from .registry import check_params, datasets, features, preprocessors, protocols, rankers


# ------------------------------------------------------------------------------------ schema
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _WithParams(BaseModel):
    model_config = ConfigDict(extra="allow")

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


class ProtocolCfg(_WithParams):
    name: str
    trials: int = Field(5, ge=1)
    seed: int = 0


class ExpectedCfg(_Strict):
    method: str
    metric: str
    value: float
    tolerance: float = Field(..., ge=0)
    source: str = ""
    setting: str | None = None
    note: str = ""
    #: why we are known not to match; a miss beyond tolerance is then graded GAP (shown, not failed)
    known_gap: str = ""


class RegressCfg(_Strict):
    trials: int | None = Field(None, ge=1)
    set: dict[str, Any] = Field(default_factory=dict)


class OutputCfg(_Strict):
    plots: bool = True


class Config(_Strict):
    name: str
    description: str = ""
    dataset: DatasetCfg
    features: list[FeatureCfg] = Field(default_factory=list)
    protocol: ProtocolCfg
    rankers: list[RankerCfg] = Field(..., min_length=1)
    sweep: dict[str, list[Any]] = Field(default_factory=dict)
    expected: list[ExpectedCfg] = Field(default_factory=list)
    regress: RegressCfg | None = None
    output: OutputCfg = Field(default_factory=OutputCfg)


# ------------------------------------------------------------------------------------ loading
class _Loader(yaml.SafeLoader):
    """YAML 1.1 reads ``1e-10`` (no dot) as a string; papers write parameters that way."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def yaml_load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


def read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        data = yaml_load(path.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}: YAML syntax error{where}: {problem}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config ({exc.strerror})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys at the top level")
    return data


def merge(base: dict, over: dict) -> dict:
    """Deep-merge ``over`` into a copy of ``base``: dicts merge, everything else is replaced."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def load_raw(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The config as a plain dict with ``extends`` resolved (relative to the extending file)."""
    path = Path(path).resolve()
    if path in _seen:
        raise ConfigError(f"{path}: extends: circular chain")
    data = read_yaml(path)
    parent = data.pop("extends", None)
    if parent is not None:
        if not isinstance(parent, str):
            raise ConfigError(f"{path}: extends: expected a file path, got {type(parent).__name__}")
        base = load_raw(path.parent / parent, _seen + (path,))
        if "name" not in data:
            base.pop("name", None)  # an extending file is its own experiment
        data = merge(base, data)
    data.setdefault("name", path.stem)
    return data


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
    if "=" not in item:
        raise ConfigError(f"--set {item}: expected key.path=value")
    key, raw = item.split("=", 1)
    try:
        return key.strip(), yaml_load(raw)
    except yaml.YAMLError:
        return key.strip(), raw


# ------------------------------------------------------------------------------------ validation
def _format_validation(err: ValidationError, data: dict, origin: str) -> str:
    e = err.errors()[0]
    loc = list(e["loc"])
    # name list items (rankers.PRSVM) rather than numbering them (rankers.2)
    shown = []
    node: Any = data
    for part in loc:
        if isinstance(node, list) and isinstance(part, int) and part < len(node):
            item = node[part]
            label = item.get("name") or item.get("extractor") if isinstance(item, dict) else None
            shown.append(str(label) if label else str(part))
        else:
            shown.append(str(part))
        node = node[part] if isinstance(node, (dict, list)) and _has(node, part) else None
    msg = e["msg"]
    if e["type"] == "extra_forbidden":
        msg = "unknown key"
    elif e["type"] == "missing":
        msg = "required key missing"
    got = e.get("input")
    suffix = f" (got {got!r})" if e["type"] not in ("missing", "extra_forbidden") and not isinstance(got, (dict, list)) else ""
    return f"{origin}: {'.'.join(shown)}: {msg}{suffix}"


def _has(node: Any, part: Any) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(part, int) and part < len(node)


def validate(data: dict, origin: str) -> Config:
    try:
        cfg = Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_validation(err, data, origin)) from None
    _check_names(cfg, origin)
    return cfg


def _check_names(cfg: Config, origin: str) -> None:
    ds = datasets.get(cfg.dataset.name, f"{origin}: dataset.name")
    check_params(ds, dataset_params(cfg), f"{origin}: dataset ({cfg.dataset.name})")
    keys = []
    for f in cfg.features:
        cls = features.get(f.extractor, f"{origin}: features.{f.key}.extractor")
        check_params(cls, f.params(), f"{origin}: features.{f.key}")
        keys.append(f.key)
    if len(set(keys)) != len(keys):
        raise ConfigError(f"{origin}: features: two feature sets share a name; give each a distinct 'name'")
    pcls = protocols.get(cfg.protocol.name, f"{origin}: protocol.name")
    check_params(pcls, cfg.protocol.params(), f"{origin}: protocol ({cfg.protocol.name})")
    names = [r.name for r in cfg.rankers]
    if len(set(names)) != len(names):
        raise ConfigError(f"{origin}: rankers: display names must be unique, got {names}")
    for r in cfg.rankers:
        cls = rankers.get(r.ranker, f"{origin}: rankers.{r.name}.ranker")
        check_params(cls, r.params(), f"{origin}: rankers.{r.name}")
        for fname in ranker_feature_names(cfg, r):
            if fname not in keys:
                raise ConfigError(f"{origin}: rankers.{r.name}.features: unknown feature set {fname!r}; "
                                  f"defined: {', '.join(keys) or '(none)'}")
        for i, step in enumerate(r.preprocess):
            step = dict(step)
            sname = step.pop("name", None)
            if sname is None:
                raise ConfigError(f"{origin}: rankers.{r.name}.preprocess.{i}: missing 'name'; valid: "
                                  f"{', '.join(preprocessors.names())}")
            scls = preprocessors.get(sname, f"{origin}: rankers.{r.name}.preprocess.{i}")
            check_params(scls, step, f"{origin}: rankers.{r.name}.preprocess.{sname}")
    if len(cfg.sweep) > 2:
        raise ConfigError(f"{origin}: sweep: at most two key paths, got {len(cfg.sweep)}")
    # a method no ranker runs is a published-only row: shown in reports, not graded
    labels = [lbl for lbl, _ in sweep_settings(cfg.sweep)]
    for i, e in enumerate(cfg.expected):
        if e.setting is not None and cfg.sweep and e.setting not in labels:
            raise ConfigError(f"{origin}: expected.{i}.setting: {e.setting!r} is not a sweep setting; "
                              f"valid: {', '.join(labels)}")


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
    """(label, {key path: value}) for every combination; one empty setting without a sweep."""
    if not sweep:
        return [("", {})]
    keys = list(sweep)
    out = []
    for combo in itertools.product(*(sweep[k] for k in keys)):
        label = ",".join(f"{k}={_fmt(v)}" for k, v in zip(keys, combo))
        out.append((label, dict(zip(keys, combo))))
    return out


def load_config(path: str | Path, sets: list[str] | tuple[str, ...] = (), regress: bool = False) -> tuple[dict, Config]:
    """Read, merge, override and validate a config; returns (raw dict, validated Config)."""
    origin = str(path)
    data = load_raw(path)
    if regress:
        block = data.get("regress")
        if not block:
            raise ConfigError(f"{origin}: regress: this config declares no regress block")
        for k, v in (block.get("set") or {}).items():
            set_path(data, k, v, f"{origin}: regress.set")
        if block.get("trials"):
            data.setdefault("protocol", {})["trials"] = block["trials"]
    for item in sets:
        key, value = parse_set(item)
        set_path(data, key, value, "--set")
    cfg = validate(data, origin)
    return data, cfg


def setting_configs(data: dict, cfg: Config, origin: str) -> list[tuple[str, Config]]:
    """One validated Config per sweep setting (the sweep keys applied)."""
    out = []
    for label, values in sweep_settings(cfg.sweep):
        d = copy.deepcopy(data)
        d.pop("sweep", None)
        for k, v in values.items():
            set_path(d, k, v, f"{origin}: sweep")
        out.append((label, validate(d, origin)))
    return out
