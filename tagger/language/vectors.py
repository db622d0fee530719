"""The paper vector a tagged line keeps, and every cosine tagger reads, computed so that the same
texts give the same bits on any CPU.

A tagged line stores the paper's embedding (its opening, as :mod:`tagger.keyphrases` embeds it)
as one signed byte per dimension, base64: 512 characters for all-MiniLM-L6-v2's 384. That is
what lets `tagger retag` score the areas of another taxonomy without the model. For retag to
write the bytes `tagger tag` writes, a cosine must not depend on how papers were batched, on the
thread count or on the BLAS library, and a float matrix product guarantees none of that. So the
cosines are computed in integers: the paper vector as stored (int8) and each area's vector as
int16, dot products summed exactly in int64, and only the last division in floating point,
correctly rounded. Quantising moves a cosine by about 1e-3 at most; a cosine is scale-free, so
no scale is stored.

The embedders' vectors are made the same way: a float sum whose order depends on the CPU's vector
width (a BLAS dot product, numpy's SIMD reductions) can differ in its last bit from one CPU to
another, and a last bit is enough to change a rounded score. So a text's token vectors are
summed one token after another in float64 (:func:`pooled`), a vector's squares are summed in a
fixed order of elementwise additions (:func:`unit_rows`), and the cosines between phrases and
papers are integer dot products of fixed-point vectors (:func:`similarities`).
"""

from __future__ import annotations

import base64

import numpy as np

FIXED = 2.0**26  # a unit vector's components as integers: 384 products of 2**52 fit in int64

MAX_DIMENSIONS = 4096  # all-MiniLM-L6-v2 has 384


def encode(vector: np.ndarray) -> str:
    """A vector as a tagged line stores it: scaled so its largest component is 127, rounded
    to int8, base64."""
    vector = np.asarray(vector, dtype=np.float32)
    peak = float(np.abs(vector).max())
    codes = np.round(vector * (127.0 / peak)) if peak > 0 else np.zeros_like(vector)
    return base64.b64encode(codes.astype(np.int8).tobytes()).decode("ascii")


def decode(text: str) -> np.ndarray:
    """The int8 vector of :func:`encode`; ValueError if ``text`` is not one."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise ValueError("the vector is not base64") from None
    if not 0 < len(raw) <= MAX_DIMENSIONS:
        raise ValueError(
            f"the vector has {len(raw):,} values; a model's have 1 to {MAX_DIMENSIONS:,}"
        )
    return np.frombuffer(raw, dtype=np.int8)


def area_codes(vectors: np.ndarray) -> np.ndarray:
    """Area vectors (one row each) as int16 rows, each scaled so its largest component is
    32767."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peaks = np.abs(vectors).max(axis=1, keepdims=True)
    scaled = vectors * (32767.0 / np.where(peaks > 0, peaks, 1.0))
    return np.round(scaled).astype(np.int16)


def cosines(papers: list[str], areas: np.ndarray) -> np.ndarray:
    """The cosine of each stored paper vector and each area's int16 row: float64, one row a
    paper, the same bits whatever else is in the batch."""
    codes = np.stack([decode(text) for text in papers]).astype(np.int64)
    rows = areas.astype(np.int64)
    dots = codes @ rows.T  # integers: exact, in any order
    norms = np.outer((codes * codes).sum(axis=1), (rows * rows).sum(axis=1)).astype(np.float64)
    return np.divide(dots, np.sqrt(norms), out=np.zeros(dots.shape), where=norms > 0)


def pooled(hidden: np.ndarray) -> np.ndarray:
    """The mean over tokens of ``hidden`` (texts x tokens x dimensions), added one token after
    another in float64: each addition is one IEEE operation per component, the same on every
    CPU."""
    total = np.zeros((hidden.shape[0], hidden.shape[2]), dtype=np.float64)
    for token in range(hidden.shape[1]):
        total += hidden[:, token]
    return total / max(hidden.shape[1], 1)


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """``rows`` scaled to unit length, float32; each length's sum of squares added in a fixed
    order (:func:`row_sums`), so it does not depend on the order a CPU adds in. A zero row stays
    zero."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.sqrt(row_sums(rows * rows))
    return (rows / np.maximum(norms, 1e-12)[:, None]).astype(np.float32)


def row_sums(rows: np.ndarray) -> np.ndarray:
    """The sum of each row, added pairwise in a fixed order: the columns padded with zeros to a
    power of two, then the second half added to the first until one column is left. Every step
    is an elementwise addition, one IEEE operation per value, whatever the CPU."""
    columns = rows.shape[1]
    width = 1 << max(columns - 1, 0).bit_length()
    if width == 1:
        total = np.zeros((rows.shape[0], 1), dtype=np.float64)
        total[:, :columns] = rows
        return total[:, 0]
    # the first step without the padding written out: a column with no partner adds a zero
    width //= 2
    paired = columns - width
    total = np.empty((rows.shape[0], width), dtype=np.float64)
    np.add(rows[:, :paired], rows[:, width:], out=total[:, :paired], dtype=np.float64)
    np.add(rows[:, paired:width], 0.0, out=total[:, paired:], dtype=np.float64)
    while width > 1:
        width //= 2
        total = total[:, :width] + total[:, width:]
    return total[:, 0]


def fixed(rows: np.ndarray) -> np.ndarray:
    """Unit vectors as int64 fixed-point rows (FIXED per unit)."""
    return np.rint(np.asarray(rows, dtype=np.float64) * FIXED).astype(np.int64)


def similarities(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The cosine of every row of ``a`` with every row of ``b`` (unit vectors, float32 or as
    :func:`fixed` made them): integer dot products, exact in any order, then one division.
    Within 1e-7 of the float cosine; float64, one row per row of ``a``."""
    a = a if a.dtype == np.int64 else fixed(a)
    b = b if b.dtype == np.int64 else fixed(b)
    return (a @ b.T) / (FIXED * FIXED)
