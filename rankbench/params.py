"""Declared parameter constraints of rankbench components, and the one place that checks them.

Every dataset loader, feature extractor, ranker, protocol and preprocessor declares the type,
range and allowed values of each ``__init__`` parameter once, in its signature, with ordinary
type annotations and pydantic constraints::

    from typing import Annotated, Literal
    from pydantic import Field
    from rankbench.params import PositiveInt, PositiveFloat

    class ColorStrips(Extractor):
        def __init__(self, spaces: tuple[Literal["rgb", "hsv", "ycrcb"], ...] = ("rgb",),
                     n_strips: PositiveInt = 6, bins: Annotated[int, Field(ge=2, le=256)] = 16):
            ...

:func:`check_params` validates a config's values against a pydantic model of that signature
(built once per class): a mistake is one line naming the parameter, what was expected and what was
given, before any work starts. Classes from scikit-learn keep their own ``_parameter_constraints``;
a parameter bounded by the data it is fitted on is annotated :class:`AtMost`
(:func:`check_data_bounds`); constraints joining several parameters, or a parameter and the data,
stay with the component. The whole contract: docs/developer/house.md, "Contracts".
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import types
import typing
from typing import Annotated, Any

from pydantic import AfterValidator, AllowInfNan, ConfigDict, Field, Strict, ValidationError, create_model

from .errors import ParameterError

# --------------------------------------------------------------------------- common constraints
PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
#: a proportion strictly between 0 and 1 (a training fraction, a quantile)
OpenFraction = Annotated[float, Field(gt=0, lt=1)]
#: ``random_state``: a non-negative integer seed, or None (the engine then sets the trial's seed)
Seed = Annotated[int, Field(ge=0)] | None
#: one value, or a list of candidates that the component chooses among on its training data
#: (inner cross-validation); the house's one spelling of a searched hyper-parameter. A config's
#: list arrives as a tuple (scikit-learn's convention for sequence parameters); Python callers may
#: give either
PositiveFloatGrid = PositiveFloat | Annotated[tuple[PositiveFloat, ...], Field(min_length=1)]


def _each_once(values: Any) -> Any:
    twice = [v for i, v in enumerate(values) if v in values[:i]]
    if twice:
        raise ValueError(f"each name once ({twice[0]!r} is given twice)")
    return values


#: a sequence whose items are all different
Distinct = AfterValidator(_each_once)
#: one or more names of things counted one each (concepts, attributes): a name given twice would
#: weigh twice in a mean
Names = Annotated[list[str], Field(min_length=1), Distinct]


class AtMost:
    """Annotation of a parameter bounded by the data its component is fitted on: ``n_features``
    (the columns of ``fit``'s matrix, after any preprocessing) or ``n_samples`` (its rows)."""

    WHAT = {"n_features": "the input dimension", "n_samples": "the training rows"}

    def __init__(self, what: str):
        if what not in self.WHAT:
            raise ValueError(f"AtMost: expected one of {', '.join(self.WHAT)}, got {what!r}")
        self.what = what

    def __repr__(self) -> str:
        return f"AtMost({self.what!r})"


def data_bounds(cls: type) -> dict[str, str]:
    """``{parameter: what bounds it}`` of the parameters annotated :class:`AtMost`."""
    out = {}
    for name, hint in annotations(cls).items():
        stack = [hint]
        while stack:
            h = stack.pop()
            if isinstance(h, AtMost):
                out[name] = h.what
            stack.extend(typing.get_args(h))
    return out


def check_data_bounds(est: Any, sizes: dict[str, tuple[int, str] | None], where: str,
                      bounds: dict[str, str] | None = None) -> None:
    """Raise a ParameterError when a parameter of ``est`` declared :class:`AtMost` (or named in
    ``bounds``, ``{parameter: what bounds it}``, instead) exceeds the size ``sizes[what] = (bound,
    why)`` of the data it will be fitted on (a list of candidates: its largest); sizes that are
    absent or None are not known yet and are left to ``fit``."""
    for name, what in (data_bounds(type(est)) if bounds is None else bounds).items():
        known, value = sizes.get(what), getattr(est, name, None)
        values = value if isinstance(value, (list, tuple)) else [value]
        top = max((v for v in values if isinstance(v, int) and not isinstance(v, bool)), default=None)
        if known is not None and top is not None and top > known[0]:
            raise ParameterError(f"{where}.{name}: expected at most {AtMost.WHAT[what]} {known[0]} ({known[1]}), "
                                 f"got {value!r}")


_MODEL_CONFIG = ConfigDict(extra="forbid", arbitrary_types_allowed=True, validate_default=False)


def init_params(cls: type) -> dict[str, inspect.Parameter]:
    """The named parameters of ``cls.__init__`` (no ``self``, no ``*args`` / ``**kwargs``)."""
    if cls.__init__ is object.__init__:
        return {}
    sig = inspect.signature(cls.__init__)
    return {k: p for k, p in sig.parameters.items()
            if k != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}


def accepts_any_keyword(cls: type) -> bool:
    if cls.__init__ is object.__init__:  # no __init__ of its own: takes no parameters
        return False
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(cls.__init__).parameters.values())


def annotations(cls: type) -> dict[str, Any]:
    """Resolved annotations of ``cls.__init__``'s parameters (missing ones are absent)."""
    try:
        hints = typing.get_type_hints(cls.__init__, include_extras=True)
    except Exception as exc:  # an annotation that does not resolve is a bug in the component
        raise TypeError(f"{cls.__module__}.{cls.__qualname__}: parameter annotations do not resolve "
                        f"({exc}); import every name used in them") from exc
    hints.pop("return", None)
    return {k: v for k, v in hints.items() if k in init_params(cls)}


def _strict(hint: Any) -> Any:
    """``hint`` with its scalar types made strict: a YAML ``true`` is not the number 1, the
    string ``"16"`` is not an integer, and a number is finite (a YAML ``.inf`` or ``.nan`` is
    refused: no parameter of a component means anything infinite); containers keep pydantic's
    list -> tuple conversion."""
    if hint is float:
        return Annotated[float, Strict(), AllowInfNan(False)]
    if hint in (int, bool, str):
        return Annotated[hint, Strict()]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if not args or origin is typing.Literal:
        return hint
    if origin is Annotated:
        return Annotated[(_strict(args[0]), *args[1:])]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_strict(a) for a in args)]
    if origin in (list, tuple, set, frozenset, dict):
        return origin[tuple(a if a is Ellipsis else _strict(a) for a in args)]
    return hint


@functools.lru_cache(maxsize=None)
def _model(cls: type):
    hints = annotations(cls)
    fields = {}
    for name, p in init_params(cls).items():
        default = ... if p.default is p.empty else p.default
        fields[name] = (_strict(hints.get(name, Any)), default)
    return create_model(f"{cls.__name__}Params", __config__=_MODEL_CONFIG, **fields)


_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
          type(None): "null", Any: "anything", dict: "a mapping", list: "a list", tuple: "a list"}


def describe(hint: Any) -> str:
    """A reader's phrase for an annotation: ``Annotated[int, Field(ge=1)] | None`` ->
    "an integer >= 1 or null" (used in error messages and ``rankbench list``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        base, bounds = describe(args[0]), []
        for meta in args[1:]:
            for m in getattr(meta, "metadata", [meta]):
                for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
                    if getattr(m, attr, None) is not None:
                        bounds.append(f"{sym} {getattr(m, attr)}")
                if getattr(m, "min_length", None):
                    bounds.append(f"with at least {m.min_length} item(s)")
                if isinstance(m, AtMost):
                    bounds.append(f"<= {AtMost.WHAT[m.what]}")
        return f"{base} {' and '.join(bounds)}" if bounds else base
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args) if len(args) > 1 else repr(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(describe(a) for a in args))
    if origin in (list, tuple, set, frozenset) or origin is collections.abc.Sequence:
        if origin is tuple and args and args[-1] is not Ellipsis:
            return f"a list of {len(args)} items ({', '.join(describe(a) for a in args)})"
        return f"a list (each {describe(args[0])})" if args else "a list"
    if origin is dict:
        return f"a mapping of {describe(args[0])} to {describe(args[1])}" if args else "a mapping"
    if hint in _NAMES:
        return _NAMES[hint]
    return getattr(hint, "__name__", str(hint))


def _format(err: ValidationError, cls: type, params: dict, where: str) -> str:
    first = err.errors()[0]
    name = str(first["loc"][0])
    want = describe(annotations(cls).get(name, Any))
    # an explicit check of the component, in its own words (in a union, the branch that got that far)
    own = next((e for e in err.errors() if e["type"] == "value_error" and str(e["loc"][0]) == name), None)
    if own is not None:
        want = own["msg"].removeprefix("Value error, ")
    elif any(e["type"] == "finite_number" for e in err.errors()):
        want = f"a finite number ({want})"
    number = next((e["input"] for e in err.errors() if e["type"] == "string_type"
                   and isinstance(e.get("input"), (int, float)) and not isinstance(e.get("input"), bool)), None)
    hint = "" if number is None else f" (a label that is a number is text in quotes: {str(number)!r})"
    return f"{where}.{name}: expected {want}, got {params.get(name)!r}{hint}"


def check_params(cls: type, params: dict[str, Any], where: str) -> dict[str, Any]:
    """Validate ``params`` for ``cls(**params)``; returns them as the constructor should get them.

    Raises :class:`~rankbench.errors.ParameterError` (a ConfigError and a ValueError) with ``<where>.<param>: expected ..., got ...``
    (or an unknown / missing parameter) on the first problem.
    """
    _check_requires(cls, where)
    allowed = init_params(cls)
    unknown = [k for k in params if k not in allowed]
    if unknown and not accepts_any_keyword(cls):
        raise ParameterError(f"{where}: unknown parameter {unknown[0]!r}; allowed: "
                          f"{', '.join(allowed) or '(none: this component takes no parameters)'}")
    missing = [k for k, p in allowed.items() if p.default is p.empty and k not in params]
    if missing:
        raise ParameterError(f"{where}: missing required parameter {missing[0]!r}")
    known = {k: v for k, v in params.items() if k in allowed}
    sk_constraints = getattr(cls, "_parameter_constraints", None)
    if isinstance(sk_constraints, dict) and not annotations(cls):
        return {**params, **_check_sklearn(cls, sk_constraints, known, where)}
    try:
        model = _model(cls).model_validate(known)
    except ValidationError as err:
        raise ParameterError(_format(err, cls, known, where)) from None
    return {**params, **{k: getattr(model, k) for k in known}}


def _check_requires(cls: type, where: str) -> None:
    """A component may declare the optional packages it needs, ``requires = {module: how to
    install}``; a missing one is a configuration error found before any work, not at fit time."""
    from importlib.util import find_spec

    for module, how in getattr(cls, "requires", {}).items():
        if find_spec(module) is None:
            raise ParameterError(f"{where}: expected the optional package {module!r} to be installed "
                                 f"({how}), got none")


def _check_sklearn(cls, constraints, params, where):
    """scikit-learn's own declarations, checked by scikit-learn's validator one parameter at a time
    so that the message can name the parameter in rankbench's form. YAML has no tuples: a list
    given where scikit-learn wants a tuple (MinMaxScaler's ``feature_range: [0, 2]``) is one."""
    from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

    params = dict(params)
    for name, value in params.items():
        if name not in constraints:
            continue
        if isinstance(value, list) and tuple in constraints[name]:
            value = params[name] = tuple(value)
        try:
            validate_parameter_constraints({name: constraints[name]}, {name: value}, caller_name=cls.__name__)
        except InvalidParameterError:
            want = " or ".join("a list" if c in (tuple, list) else getattr(c, "__name__", None) or str(c)
                               for c in constraints[name])
            raise ParameterError(f"{where}.{name}: expected {want}, got {value!r}") from None
    return params


def validate_estimator(est: Any, where: str | None = None) -> None:
    """Check an object's parameters where a Python caller's values enter (a ranker's ``fit``, an object
    given to ``app.evaluate``); not under scikit-learn's ``skip_parameter_validation`` (the engine's
    jobs: built from checked specs), nor of an object not keeping each as an attribute of its name."""
    from sklearn import get_config

    cls = type(est)
    given = {k: getattr(est, k) for k in init_params(cls) if hasattr(est, k)}
    if len(given) == len(init_params(cls)) and not get_config()["skip_parameter_validation"]:
        check_params(cls, given, where or cls.__name__)
