"""A run's data and rankings in other tools' formats (``rankbench export``).

TREC (retrieval runs, ``trec_eval`` / ``pytrec_eval``)
    per setting and trial, ``trial<k>.qrels`` (``<concept> 0 <item id> <1|0>``: every judged test
    item of each concept the trial evaluated) and per method ``trial<k>.<method>.run`` (``<concept>
    Q0 <item id> <rank> <score> <method>``, every judged test item, best first). The scores are
    the ones the protocol kept (``keep_scores: true``). Unjudged items are in neither file, as
    rankbench leaves them out (``trec_eval -J``), so ``trec_eval -m map -m map_cut`` gives the
    trial's ``ap/<concept>`` and ``ap@D/<concept>``. trec_eval orders tied scores by item id,
    descending; rankbench counts a tie at its expected value over the tied items' orders
    (:mod:`rankbench.metrics`): the two agree only where no tie mixes relevant and other items.
    Names (methods, settings, concepts, feature sets) and item ids are written one to one
    (:func:`safe`: ``%XX`` for a character a file name or a TREC field cannot hold), so no two
    share a file or a docno; each setting's data must be the data its splits were drawn on
    (``rankbench.app`` checks it).

svmlight / RankLib (retrieval and relative-attribute runs; :func:`sklearn.datasets.dump_svmlight_file`)
    per setting, trial and feature set, ``trial<k>.train.svm`` and ``trial<k>.test.svm`` with one
    query (``qid``) per concept or attribute, 1-based feature indices: the training and test rows of
    the trial's split, so LightGBM, RankLib or xgboost learn from exactly rankbench's data. The
    label is the judgement (1 / 0; unjudged rows left out) for a concept, the category's strength
    level (0 = weakest, as LightGBM's lambdarank wants integers) for an attribute.
    ``trial<k>.<part>.ids`` names each line's item (``<qid> <item id>``), ``trial<k>.qids.txt`` each
    query (``<qid> <concept or attribute>``), both written as the TREC files write them (:func:`safe`);
    a relative-attribute run also gets ``trial<k>.pairs.csv``, the exact training pairs the
    protocol drew (``attribute, stronger, weaker, ordered``: ordered 0 for a pair of equal strength).
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Callable

import numpy as np

from ..datasets.base import Dataset
from ..errors import ConfigError, DataError
from ..protocols.base import Protocol
from ..runfolder import SettingSplits, TrialRecord, TrialSplit
from ..utils.fileio import atomic_write_bytes

SVMLIGHT = ("retrieval", "comparison")


_UNSAFE = re.compile(r"^\.|[^\w.@+-]")


def safe(name: str) -> str:
    """A file-name and TREC-field safe form, one to one: letters, digits and ``_-.@+`` stay, every
    other character (``%`` too, and a leading ``.``) becomes ``%XX`` of its UTF-8 bytes, so
    ``Log reg`` and ``Log_reg`` stay two names (``Log%20reg``, ``Log_reg``); the empty name is ``%``."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), str(name)) or "%"


class _Files:
    """The files of one export: each written atomically through no link below ``root`` (the
    folder the user named, or the run folder), and each once: two of the run's names meeting in
    one file is refused instead of one overwriting the other."""

    def __init__(self, root: Path):
        self.root, self.written, self._seen = root, [], set()

    def write(self, path: Path, data: str | bytes) -> None:
        if path in self._seen:
            raise ConfigError(f"export: {path}: two parts of the run would be written to this one file")
        atomic_write_bytes(path, data.encode() if isinstance(data, str) else data, root=self.root)
        self.written.append(path)
        self._seen.add(path)


def _folder(out: Path, label: str) -> Path:
    return out / safe(label) if label else out


def _docnos(ds: Dataset) -> np.ndarray:
    """The dataset's item ids as TREC docnos (:func:`safe`); a DataError when two items share one."""
    ids = ds.items["id"].astype(str).map(safe)
    repeated = ids[ids.duplicated()]
    if len(repeated):
        raise DataError(f"{ds.name}: item id {repeated.iloc[0]!r} names {int((ids == repeated.iloc[0]).sum())} items; "
                        "TREC needs one document per id (give every item its own id)")
    return ids.to_numpy()


def judged_rows(dataset: Dataset, split: TrialSplit, concept: str, part: str = "test") -> np.ndarray:
    """The rows of a retrieval trial's ``part`` judged for ``concept`` (in row order): for the test
    part, the rows the trial ranked."""
    rows = np.asarray(getattr(split, part), dtype=int)
    c = list(dataset.info["concepts"]).index(concept)
    return rows[np.asarray(dataset.arrays["relevance"])[rows, c] >= 0]


def write_trec(records: list[TrialRecord], settings: list[SettingSplits], dataset_of: Callable[[str], Dataset],
               out: Path, root: Path | None = None) -> list[Path]:
    """TREC qrels and run files of a retrieval run (module docstring); the written paths. ``root``:
    the folder below which no link is followed (default ``out``). Nothing is written unless every
    record kept its scores."""
    for rec in records:
        if not rec.extra.get("scores"):
            raise ConfigError(f"export --format trec: {rec.method} trial {rec.trial}: the run kept no scores; "
                              "run it with --set protocol.keep_scores=true")
    files = _Files(out if root is None else root)
    for st in settings:
        ds = dataset_of(st.label)
        R = np.asarray(ds.arrays["relevance"])
        ids = _docnos(ds)
        names = list(ds.info["concepts"])
        folder = _folder(out, st.label)
        for split in st.trials:
            k = split.trial
            lines = []
            for concept in split.concepts:
                rows = judged_rows(ds, split, concept)
                rel = R[rows, names.index(concept)]
                lines += [f"{safe(concept)} 0 {i} {int(r)}" for i, r in zip(ids[rows], rel)]
            files.write(folder / f"trial{k}.qrels", "\n".join(lines) + "\n")
            for rec in records:
                if rec.setting != st.label or rec.trial != k:
                    continue
                scores = rec.extra["scores"]
                tag = safe(rec.method)
                lines = []
                for concept in split.concepts:
                    rows = judged_rows(ds, split, concept)
                    s = np.asarray(scores[concept], dtype=float)
                    order = np.lexsort((-rows, -s))   # best first; a tie: the later row first, as rankbench
                    lines += [f"{safe(concept)} Q0 {ids[rows[j]]} {n} {float(s[j])!r} {tag}"
                              for n, j in enumerate(order, start=1)]
                files.write(folder / f"trial{k}.{tag}.run", "\n".join(lines) + "\n")
    return files.written


def _svmlight(X: np.ndarray, y: np.ndarray, qid: np.ndarray, comment: str) -> bytes:
    from sklearn.datasets import dump_svmlight_file

    buf = io.BytesIO()
    dump_svmlight_file(X, y, buf, zero_based=False, query_id=qid, comment=comment)
    return buf.getvalue()


def _queries(protocol_name: str, protocol: Protocol, ds: Dataset, split: TrialSplit):
    """(query name, rows, labels) per concept (judged rows) or attribute (strength levels), for
    the ``train`` and ``test`` parts of a split."""
    out: dict[str, list[tuple[str, np.ndarray, np.ndarray]]] = {"train": [], "test": []}
    if protocol_name == "retrieval":
        R = np.asarray(ds.arrays["relevance"])
        names = list(ds.info["concepts"])
        for concept in split.concepts:
            for part in out:
                rows = judged_rows(ds, split, concept, part)
                out[part].append((concept, rows, R[rows, names.index(concept)].astype(int)))
        return out
    for attr, strength in protocol.strengths(ds).items():
        level = np.unique(strength, return_inverse=True)[1].ravel()
        for part in out:
            rows = np.asarray(getattr(split, part), dtype=int)
            out[part].append((attr, rows, level[rows]))
    return out


def write_svmlight(protocol_name: str, protocol_of: Callable[[str], Protocol], settings: list[SettingSplits],
                   dataset_of: Callable[[str], Dataset], features_of: Callable[[str], dict[str, np.ndarray]],
                   out: Path, root: Path | None = None) -> list[Path]:
    """svmlight / RankLib files of a retrieval or relative-attribute run (module docstring); the
    written paths. ``root``: as :func:`write_trec`'s."""
    if protocol_name not in SVMLIGHT:
        raise ConfigError(f"export --format svmlight: expected a run of protocol {' or '.join(SVMLIGHT)}, got "
                          f"{protocol_name!r}" + (" (its rankers learn from base-model outputs; --format trec "
                                                  "exports its rankings)" if protocol_name == "stacked_retrieval"
                                                  else ""))
    files = _Files(out if root is None else root)
    for st in settings:
        ds, protocol = dataset_of(st.label), protocol_of(st.label)
        ids = ds.items["id"].astype(str).to_numpy()
        folder = _folder(out, st.label)
        for split in st.trials:
            k = split.trial
            queries = _queries(protocol_name, protocol, ds, split)
            names = [q for q, _, _ in queries["train"]]
            files.write(folder / f"trial{k}.qids.txt", "".join(f"{j + 1} {safe(q)}\n" for j, q in enumerate(names)))
            for part, qs in queries.items():
                rows = np.concatenate([r for _, r, _ in qs])
                y = np.concatenate([lab for _, _, lab in qs])
                qid = np.repeat(np.arange(1, len(qs) + 1), [len(r) for _, r, _ in qs])
                files.write(folder / f"trial{k}.{part}.ids",
                            "".join(f"{q} {safe(i)}\n" for q, i in zip(qid, ids[rows])))
                for name, X in features_of(st.label).items():
                    what = f"rankbench {protocol_name} {part} rows of trial {k}, feature set {name}"
                    files.write(folder / safe(name) / f"trial{k}.{part}.svm",
                                _svmlight(np.asarray(X, dtype=float).reshape(len(X), -1)[rows], y, qid, what))
            if protocol_name == "comparison":
                import pandas as pd

                train = np.asarray(split.train, dtype=int)
                frames = [pd.DataFrame({"attribute": attr, "stronger": ids[train[pairs[:, 0]]],
                                        "weaker": ids[train[pairs[:, 1]]], "ordered": sign})
                          for attr, _, pairs, sign in protocol.pairs(ds, split)]
                files.write(folder / f"trial{k}.pairs.csv", pd.concat(frames).to_csv(index=False))
    return sorted(files.written)
