"""The paper vector a tagged line keeps, and the cosines the weigher reads, computed exactly.

A tagged line stores the paper's embedding (its opening, as :mod:`tagger.keyphrases` embeds it)
as one signed byte per dimension, base64: 512 characters for all-MiniLM-L6-v2's 384. That is
what lets `tagger retag` score the areas of another taxonomy without the model. For retag to
write the bytes `tagger tag` writes, a cosine must not depend on how papers were batched, on the
thread count or on the BLAS library, and a float matrix product guarantees none of that. So the
cosines are computed in integers: the paper vector as stored (int8) and each area's vector as
int16, dot products summed exactly in int64, and only the last division in floating point,
correctly rounded. Quantising moves a cosine by about 1e-3 at most; a cosine is scale-free, so
no scale is stored.
"""

from __future__ import annotations

import base64

import numpy as np

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
