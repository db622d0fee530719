"""The area model: where a paper belongs, learned from the judged papers.

Rules find an area where a paper uses its words, and neighbours where papers like it were placed;
a model learns from every judged paper at once what each area's papers look like. For each area
of the taxonomy with enough judged papers in it (the area or one below it), and each contribution
type, two logistic models give the probability that a reader would place the paper there: one
over the paper's embedding (its unit vector), one over its words and pairs of words (tf-idf,
:func:`terms`); the area's probability is the sigmoid of their mean logit (tagger.fitting.areas
fits them, one area against the rest; measured held out, the mean logit ranks areas better than
the mean probability on every fold: docs/learned-reader.md). A model fitted before 0.9.0 says
nothing of how it combines its blocks, and is read as it was fitted: the mean probability.
It is one more thing the weigher reads of a candidate, and an area it finds likely is a
candidate even where no rule fired and no neighbour voted; a tag it supports names the judged
papers nearest the paper that readers placed in the area, so the evidence can be checked.

Scores are computed from what a tagged line stores (the int8 vector, language.vectors; the title
and abstract), in integers: the weights are kept as int16 with a scale per area, a paper's tf-idf
values as fixed-point integers, the dot products are exact, and only the last division and the
sigmoid are floating point, so retag reads what tag read and every CPU gives the same bits.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..io.files import ByContent, read_npz
from ..records import Neighbour
from ..taxonomy.model import Taxonomy
from .neighbours import NeighbourIndex

PROPOSE = 0.35  # an area the model finds at least this likely is a candidate
# What the weigher reads of the area model's votes (weigher.WEIGHER_FEATURES has them too)
AREA_MODEL_FEATURES = (
    "learned",  # the probability the area model gives the area (its subtree: it or one below)
    "learned_gap",  # ... minus the highest it gives any area of the paper
    "learned_child",  # ... the highest it gives an area just below this one (0 for a leaf)
)
SHOWN = 3  # judged papers named by a tag the model supports
COMBINE = "logit"  # how a model fitted now combines its blocks (its about["combine"])
COMBINATIONS = (
    "logit",
    "probability",
)  # ... the mean logit, or (before 0.9.0) the mean probability


_TOKEN = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's token_pattern
FIXED = 2**15  # a tf-idf value of 1 as an integer


def terms(text: str, stop: frozenset[str]) -> list[str]:
    """The words of a text (lower-cased, two characters or more, ``stop`` words left out) and
    each pair of words next to each other once they are: what the text block reads."""
    words = [w for w in _TOKEN.findall(text.lower()) if w not in stop]
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


@dataclass(frozen=True, eq=False)
class TextBlock:
    """Logistic models over a paper's tf-idf vector (sublinear term frequency, L2-normalised),
    one per area: ``sigmoid(bias + scale * (tfidf . weights))``, weights as int16 columns."""

    vocabulary: tuple[str, ...]
    idf: np.ndarray  # float64, one a term
    stop: frozenset[str]
    weights: np.ndarray  # int16, terms x areas
    scales: np.ndarray  # float64, one an area
    biases: np.ndarray  # float64

    @cached_property
    def _index(self) -> dict[str, int]:
        return {term: k for k, term in enumerate(self.vocabulary)}

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.weights.shape[1]), dtype=np.float64)
        for row, text in enumerate(texts):
            counts: dict[int, int] = {}
            for term in terms(text, self.stop):
                k = self._index.get(term)
                if k is not None:
                    counts[k] = counts.get(k, 0) + 1
            if not counts:
                continue
            index = np.array(sorted(counts), dtype=np.intp)
            values = np.array([(1.0 + math.log(counts[k])) * self.idf[k] for k in index.tolist()])
            norm = math.sqrt(math.fsum(v * v for v in values.tolist()))
            fixed = np.rint(values / norm * FIXED).astype(np.int64)
            out[row] = (fixed @ self.weights[index].astype(np.int64)).astype(np.float64)
        return out * self.scales / FIXED + self.biases


@dataclass(frozen=True, eq=False)
class AreaModel:
    """Logistic models over unit paper vectors, one per area: ``sigmoid(bias + scale *
    (codes . weights) / |codes|)`` with ``weights`` as int16 rows; and, with a ``text`` block,
    the sigmoid of the two blocks' mean logit (or, for a model whose ``about["combine"]`` is
    "probability" or unsaid, the mean of their probabilities)."""

    areas: tuple[str, ...]
    weights: np.ndarray  # int16, one row an area
    scales: np.ndarray  # float64, one an area: a row's weights are weights * scale
    biases: np.ndarray  # float64
    about: dict[str, Any]
    text: TextBlock | None = None

    @classmethod
    def from_floats(
        cls,
        areas: Sequence[str],
        weights: np.ndarray,
        biases: np.ndarray,
        about: dict[str, Any],
        text: tuple[Sequence[str], np.ndarray, frozenset[str], np.ndarray, np.ndarray]
        | None = None,
    ) -> AreaModel:
        """The model of float ``weights`` (one row an area), stored as int16 rows; ``text``:
        the text block's vocabulary, idf, stop words, weights (terms x areas) and biases."""
        codes, scales = _int16(np.asarray(weights, dtype=np.float64))
        block = None
        if text is not None:
            vocabulary, idf, stop, text_weights, text_biases = text
            columns, column_scales = _int16(np.asarray(text_weights, dtype=np.float64).T)
            block = TextBlock(
                tuple(vocabulary),
                np.asarray(idf, dtype=np.float64),
                frozenset(stop),
                np.ascontiguousarray(columns.T),
                column_scales,
                np.asarray(text_biases, dtype=np.float64),
            )
        biases = np.asarray(biases, dtype=np.float64)
        return cls(tuple(areas), codes, scales, biases, about, block)

    @classmethod
    def load(cls, path: str | Path) -> AreaModel:
        """The area model in the file at ``path`` (a model directory's: tagging.model)."""
        return _AREA_MODELS.load(path)

    @classmethod
    def from_bytes(cls, data: bytes, digest: str, where: str | Path) -> AreaModel:
        """What the file ``where`` holds, its bytes ``data`` (whose sha256 is ``digest``)."""
        return _AREA_MODELS.of(data, digest, where)

    def save(self, path: str | Path) -> None:
        buffer = io.BytesIO()
        text = {}
        if self.text is not None:
            text = {
                "text_vocabulary": np.array(self.text.vocabulary),
                "text_idf": self.text.idf,
                "text_stop": np.array(sorted(self.text.stop)),
                "text_weights": self.text.weights,
                "text_scales": self.text.scales,
                "text_biases": self.text.biases,
            }
        np.savez_compressed(
            buffer,
            areas=np.array(self.areas),
            weights=self.weights,
            scales=self.scales,
            biases=self.biases,
            about=np.array(json.dumps(self.about, sort_keys=True)),
            **text,
        )
        Path(path).write_bytes(buffer.getvalue())

    @property
    def width(self) -> int:
        """The dimensions of the paper vectors it reads."""
        return int(self.weights.shape[1])

    @cached_property
    def _rows(self) -> np.ndarray:
        return self.weights.astype(np.int64)

    def probabilities(
        self, codes: Sequence[np.ndarray], texts: Sequence[str] | None = None
    ) -> list[dict[str, float]]:
        """For each paper (its int8 vector as stored, and its text: language.text.paper_text),
        the probability of every area."""
        if not codes:
            return []
        x = np.stack([c.astype(np.int64) for c in codes])
        dots = x @ self._rows.T  # exact
        norms = np.sqrt((x * x).sum(axis=1).astype(np.float64))
        z = dots.astype(np.float64) * self.scales / np.maximum(norms, 1.0)[:, None] + self.biases
        blocks = [z]
        if self.text is not None:
            if texts is None:
                raise ValueError("this area model reads the papers' texts too")
            blocks.append(self.text.logits(texts))
        if self.combine == "logit":
            mean = sum(blocks[1:], blocks[0]) / len(blocks)
            return [
                {area: _sigmoid(mean[row, k]) for k, area in enumerate(self.areas)}
                for row in range(len(codes))
            ]
        return [
            {
                area: math.fsum(_sigmoid(block[row, k]) for block in blocks) / len(blocks)
                for k, area in enumerate(self.areas)
            }
            for row in range(len(codes))
        ]

    @property
    def combine(self) -> str:
        """How the blocks are combined: "logit" (their mean logit) or "probability" (the mean
        of their probabilities, as every model fitted before 0.9.0 was)."""
        return str(self.about.get("combine", "probability"))


def _sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, float(value)))))


def _int16(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of float weights as int16 rows and a scale each."""
    peaks = np.abs(weights).max(axis=1) if weights.size else np.zeros(len(weights))
    scales = np.where(peaks > 0, peaks / 32767.0, 1.0)
    return np.rint(weights / scales[:, None]).astype(np.int16), scales


def _parse(data: bytes) -> AreaModel:
    """The area model in a file's bytes; ValueError if they hold none, or one whose arrays
    disagree."""
    found = read_npz(data)
    try:
        text = None
        if "text_vocabulary" in found:
            text = TextBlock(
                tuple(found["text_vocabulary"].tolist()),
                found["text_idf"].astype(np.float64),
                frozenset(found["text_stop"].tolist()),
                found["text_weights"].astype(np.int16),
                found["text_scales"].astype(np.float64),
                found["text_biases"].astype(np.float64),
            )
        if found["areas"].dtype.kind != "U" or found["areas"].ndim != 1:
            raise ValueError("its areas are not a list of strings")
        model = AreaModel(
            areas=tuple(found["areas"].tolist()),
            weights=found["weights"].astype(np.int16),
            scales=found["scales"].astype(np.float64),
            biases=found["biases"].astype(np.float64),
            about=json.loads(str(found["about"])),
            text=text,
        )
    except KeyError as exc:
        raise ValueError(f"it has no {exc} array") from None
    problem = _disagreement(model)
    if problem:
        raise ValueError(problem)
    if model.combine not in COMBINATIONS:
        raise ValueError(
            f"it combines its blocks by {model.combine!r}, which this version does not know"
        )
    return model


def _disagreement(model: AreaModel) -> str | None:
    """What in an area model's arrays disagrees (one row, scale and bias an area; a text
    block's a term and a column an area), or None."""
    areas = len(model.areas)
    if not isinstance(model.about, dict):
        return "its about is not a record (a JSON object)"
    if model.weights.ndim != 2 or model.weights.shape[0] != areas:
        return (
            f"its weights (shape {model.weights.shape}) are not a row for each of its {areas} areas"
        )
    for name in ("scales", "biases"):
        if getattr(model, name).shape != (areas,):
            return f"its {name} hold {getattr(model, name).size} values for its {areas} areas"
    text = model.text
    if text is None:
        return None
    terms = len(text.vocabulary)
    if text.idf.shape != (terms,):
        return f"its text_idf holds {text.idf.size} values for its {terms} terms"
    if text.weights.shape != (terms, areas):
        return (
            f"its text_weights (shape {text.weights.shape}) are not {terms} terms x {areas} areas"
        )
    for name in ("scales", "biases"):
        if getattr(text, name).shape != (areas,):
            return f"its text_{name} hold {getattr(text, name).size} values for its {areas} areas"
    return None


_AREA_MODELS = ByContent(_parse, "the area model")


@dataclass
class AreaVotes:
    """What the area model says of one paper: each area's probability, and, to name the judged
    papers behind a tag, the paper's vector and the judged index."""

    probability: dict[str, float]
    taxonomy: Taxonomy
    code: np.ndarray | None = None
    judged: NeighbourIndex | None = None
    key: int = 0  # the paper's abstract_key: it never names itself

    def proposed(self) -> set[str]:
        """The topic areas the model finds likely (a facet's values are every paper's
        candidates anyway)."""
        return {
            area
            for area, p in self.probability.items()
            if p >= PROPOSE and area in self.taxonomy.by_id and self.taxonomy.facet(area) is None
        }

    def features(self, area: str) -> dict[str, float]:
        p = self.probability.get(area, 0.0)
        best = max(self.probability.values(), default=0.0)
        children = self.taxonomy.children.get(area, [])
        child = max((self.probability.get(c, 0.0) for c in children), default=0.0)
        return dict(zip(AREA_MODEL_FEATURES, (p, p - best, child), strict=True))

    def supporting(self, area: str) -> list[Neighbour]:
        """The judged papers nearest this one that readers placed in ``area`` or below it, if
        the model finds the area likely."""
        if self.judged is None or self.code is None or self.probability.get(area, 0.0) < PROPOSE:
            return []
        rows = self.judged.rows_in(area, self.taxonomy)
        if not len(rows):
            return []
        nearest = self.judged.nearest_among(self.code, self.key, rows, SHOWN)
        return [self.judged.neighbour(j, s) for j, s in nearest]
