"""A small reader for Weka ARFF files, dense and sparse.

``scipy.io.arff`` cannot read sparse rows (``{index value, ...}``), which is how MULAN ships
Corel5k, so rankbench carries its own reader. Only what ranking data needs is supported: numeric
(``numeric``/``real``/``integer``) and nominal (``{a,b,...}``) attributes; nominal values are
returned as their 0-based position in the declaration (an omitted sparse entry - value 0 - is the
first nominal value, as the ARFF spec says), and :meth:`Arff.numbers` gives a nominal attribute
of numbers by its values (``{1,0}`` reads "1" as 1). Missing values (``?``) read as NaN. An
attribute declared twice is refused. Instance weights (``{w}``) are not supported.

Format reference: https://waikato.github.io/weka-wiki/formats_and_processing/arff_stable/
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError

_ATTR = re.compile(r"""@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+(.+)$""", re.I)
_NUMERIC = {"numeric", "real", "integer"}


@dataclass
class Arff:
    """A parsed ARFF file: attribute names, nominal values (None for numeric) and the data."""

    relation: str
    names: list[str]
    nominal: list[list[str] | None]
    data: np.ndarray  # (n_rows, n_attributes) float64

    def numbers(self, cols: np.ndarray) -> np.ndarray:
        """The columns ``cols`` as numbers: a nominal attribute whose values are all numbers
        (``{0,1}``, ``{1,0}``) as those values, not their positions; others as they are."""
        out = self.data[:, cols].copy()
        for j, c in enumerate(cols):
            values = self.nominal[c]
            try:
                as_number = None if values is None else np.array([float(v) for v in values] + [np.nan])
            except ValueError:
                continue
            if as_number is not None:   # a missing value (NaN) stays NaN
                codes = out[:, j]
                out[:, j] = as_number[np.where(np.isnan(codes), len(values), codes).astype(int)]
        return out

    def columns(self, names: list[str]) -> np.ndarray:
        """Indices of ``names`` among the attributes (DataError naming the first missing one)."""
        pos = {n: i for i, n in enumerate(self.names)}
        missing = [n for n in names if n not in pos]
        if missing:
            raise DataError(f"attribute {missing[0]!r} not in the ARFF header ({len(self.names)} attributes)")
        return np.array([pos[n] for n in names], dtype=int)


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1].replace("\\" + s[0], s[0])
    return s


def _split_values(s: str) -> list[str]:
    """Split a comma-separated list, respecting quotes (rare in ranking data, cheap to support)."""
    if "'" not in s and '"' not in s:
        return [v.strip() for v in s.split(",")]
    out, cur, quote = [], [], None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch == ",":
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return out


def read_arff(path: str | Path) -> Arff:
    """Read a dense or sparse ARFF file into a float matrix.

    Raises
    ------
    DataError
        Naming the file and line on a missing file, a malformed header, an unsupported attribute
        type, a row of the wrong length, an index out of range or a value that does not parse.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"ARFF file {path} not found")
    relation, names, nominal = "", [], []
    rows: list[np.ndarray] = []
    in_data = False
    n_attr = 0
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("%"):
                continue
            where = f"{path}:{lineno}"
            if not in_data:
                low = line.lower()
                if low.startswith("@relation"):
                    relation = _unquote(line[len("@relation"):])
                elif low.startswith("@attribute"):
                    m = _ATTR.match(line)
                    if not m:
                        raise DataError(f"{where}: malformed @attribute line (expected '@attribute NAME TYPE')")
                    names.append(_unquote(m.group(1)))
                    if names[-1] in names[:-1]:   # a column found by name: the later one would win
                        raise DataError(f"{where}: attribute {names[-1]!r} is declared twice")
                    typ = m.group(2).strip()
                    if typ.startswith("{"):
                        if not typ.endswith("}"):
                            raise DataError(f"{where}: nominal type must be '{{v1,v2,...}}', got {typ!r}")
                        nominal.append([_unquote(v) for v in _split_values(typ[1:-1])])
                    elif typ.lower() in _NUMERIC:
                        nominal.append(None)
                    else:
                        raise DataError(f"{where}: attribute {names[-1]!r} has unsupported type {typ!r} "
                                        "(rankbench reads numeric and nominal attributes)")
                elif low.startswith("@data"):
                    in_data = True
                    n_attr = len(names)
                    if n_attr == 0:
                        raise DataError(f"{where}: @data before any @attribute")
                    codes = [None if v is None else {s: float(i) for i, s in enumerate(v)} for v in nominal]
                else:
                    raise DataError(f"{where}: unexpected header line {line[:40]!r}")
                continue
            rows.append(_parse_row(line, n_attr, codes, where))
    if not in_data:
        raise DataError(f"ARFF file {path} has no @data section (truncated or not ARFF)")
    data = np.vstack(rows) if rows else np.zeros((0, n_attr))
    return Arff(relation, names, nominal, data)


def _value(tok: str, code: dict | None, where: str) -> float:
    tok = tok.strip()
    if tok == "?":
        return np.nan
    if code is not None:
        key = _unquote(tok)
        if key not in code:
            raise DataError(f"{where}: value {tok!r} is not one of the declared nominal values")
        return code[key]
    try:
        return float(tok)
    except ValueError:
        raise DataError(f"{where}: value {tok!r} is not numeric") from None


def _parse_row(line: str, n_attr: int, codes: list, where: str) -> np.ndarray:
    if line.startswith("{"):
        end = line.find("}")
        if end < 0:
            raise DataError(f"{where}: sparse row without closing '}}'")
        row = np.zeros(n_attr)
        body = line[1:end].strip()
        seen: set[int] = set()
        if body:
            for entry in _split_values(body):
                parts = entry.split(None, 1)
                if len(parts) != 2:
                    raise DataError(f"{where}: sparse entry {entry!r} is not 'index value'")
                try:
                    j = int(parts[0])
                except ValueError:
                    raise DataError(f"{where}: sparse index {parts[0]!r} is not an integer") from None
                if not 0 <= j < n_attr:
                    raise DataError(f"{where}: sparse index {j} out of range 0..{n_attr - 1}")
                if j in seen:   # the later value would win, with no word
                    raise DataError(f"{where}: sparse index {j} is given twice")
                seen.add(j)
                row[j] = _value(parts[1], codes[j], where)
        return row
    vals = _split_values(line)
    if len(vals) != n_attr:
        raise DataError(f"{where}: row has {len(vals)} values, the header declares {n_attr} attributes")
    if all(c is None for c in codes):
        try:
            return np.array([np.nan if v == "?" else float(v) for v in vals])
        except ValueError:
            pass  # fall through to per-value parsing for a precise message
    return np.array([_value(v, c, where) for v, c in zip(vals, codes)])
