"""LazyColumns: values equal the matrix's, and n_evals is the number of distinct entries computed."""

import numpy as np
import pytest

from rankbench.rankers.base import LazyColumns, as_columns


def test_counts_equal_a_direct_count_of_distinct_entries():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(50, 7))
    calls = []
    cols = LazyColumns(lambda j, rows: (calls.append(len(rows)), A[rows, j])[1], A.shape)
    seen = set()
    for i in range(40):
        j = int(rng.integers(7))
        rows = rng.choice(50, size=int(rng.integers(1, 30)), replace=True)
        rows = np.unique(rows) if i % 2 else rows             # increasing rows are not de-duplicated again
        assert np.array_equal(cols.column(j, rows), A[rows, j])
        seen |= {(int(r), j) for r in rows}
        assert cols.n_evals == len(seen) == sum(calls)
    assert np.array_equal(np.asarray(cols), A) and cols.n_evals == A.size


def test_plain_arrays_and_errors():
    A = np.arange(12.0).reshape(4, 3)
    c = as_columns(A)
    assert as_columns(c) is c and c.columns([2, 0], [1, 3]).tolist() == [[5.0, 3.0], [11.0, 9.0]]
    assert c.n_evals == 4 and len(c) == 4
    with pytest.raises(IndexError):
        c.column(3)
    bad = LazyColumns(lambda j, rows: np.zeros(1), (4, 1))
    with pytest.raises(ValueError, match="returned 1 values for 4 rows"):
        bad.column(0)
