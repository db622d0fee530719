"""The fixed-order arithmetic of language.vectors that makes a vector the same on every CPU."""

from __future__ import annotations

import numpy as np
import pytest

from tagger.language.vectors import row_sums


def _padded_pairwise(rows: np.ndarray) -> np.ndarray:
    """row_sums as its docstring says it: the columns padded with zeros to a power of two, then
    the second half added to the first until one column is left."""
    width = 1 << max(rows.shape[1] - 1, 0).bit_length()
    total = np.zeros((rows.shape[0], width), dtype=np.float64)
    total[:, : rows.shape[1]] = rows
    while width > 1:
        width //= 2
        total = total[:, :width] + total[:, width:]
    return total[:, 0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_are_the_padded_pairwise_sums_to_the_bit(dtype):
    generator = np.random.default_rng(0)
    for columns in [*range(0, 40), 127, 128, 129, 383, 384, 385, 769, 1024]:
        rows = generator.normal(size=(6, columns)) * generator.choice(
            [1e-30, 1.0, 1e30], (6, columns)
        )
        rows[generator.random(rows.shape) < 0.3] = 0.0
        rows[generator.random(rows.shape) < 0.2] = -0.0  # -0.0 + 0.0 is 0.0: the padding shows
        rows[0] = -0.0
        rows = rows.astype(dtype)
        ours, reference = row_sums(rows), _padded_pairwise(rows)
        assert ours.dtype == np.float64 and ours.shape == (6,)
        assert ours.tobytes() == reference.tobytes(), columns


def test_a_rows_sum_does_not_depend_on_the_rows_beside_it():
    rows = np.random.default_rng(1).normal(size=(50, 769))
    alone = [row_sums(rows[i : i + 1])[0] for i in range(len(rows))]
    assert row_sums(rows).tolist() == alone
    assert row_sums(rows) == pytest.approx([float(np.sum(row)) for row in rows], rel=1e-12)
