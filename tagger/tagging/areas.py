"""The area model: where a paper belongs, learned from the judged papers' embeddings.

Rules find an area where a paper uses its words, and neighbours where papers like it were placed;
a model over the paper's embedding learns from every judged paper at once which part of the
space each area covers. For each area of the taxonomy with enough judged papers in it (the area
or one below it), a logistic model over the paper's unit vector gives the probability that a
reader would place the paper there (tagger.fitting.areas fits them, one against the rest). Its
probability is one more thing the weigher reads of a candidate, and an area it finds likely is a
candidate even where no rule fired and no neighbour voted; a tag it supports names the judged
papers nearest the paper that readers placed in the area, so the evidence can be checked.

Scores are computed from the paper's vector as a tagged line stores it (int8, language.vectors),
in integers: the weights are kept as int16 with a scale per area, the dot products are exact, and
only the last division and the sigmoid are floating point, so retag reads what tag read and every
CPU gives the same bits.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TaggerError
from ..records import Neighbour
from ..taxonomy.model import Taxonomy
from .neighbours import LEARNED as FEATURES
from .neighbours import NeighbourIndex

PROPOSE = 0.35  # an area the model finds at least this likely is a candidate
SHOWN = 3  # judged papers named by a tag the model supports


@dataclass(frozen=True, eq=False)
class AreaModel:
    """Logistic models over unit paper vectors, one per area: ``sigmoid(bias + scale *
    (codes . weights) / |codes|)`` with ``weights`` as int16 rows."""

    areas: tuple[str, ...]
    weights: np.ndarray  # int16, one row an area
    scales: np.ndarray  # float64, one an area: a row's weights are weights * scale
    biases: np.ndarray  # float64
    about: dict[str, Any]

    @classmethod
    def from_floats(
        cls, areas: Sequence[str], weights: np.ndarray, biases: np.ndarray, about: dict[str, Any]
    ) -> AreaModel:
        """The model of float ``weights`` (one row an area), stored as int16 rows."""
        weights = np.asarray(weights, dtype=np.float64)
        peaks = np.abs(weights).max(axis=1)
        scales = np.where(peaks > 0, peaks / 32767.0, 1.0)
        codes = np.rint(weights / scales[:, None]).astype(np.int16)
        return cls(tuple(areas), codes, scales, np.asarray(biases, dtype=np.float64), about)

    @classmethod
    def load(cls, path: str | Path) -> AreaModel:
        return _load(str(path))

    def save(self, path: str | Path) -> None:
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            areas=np.array(self.areas),
            weights=self.weights,
            scales=self.scales,
            biases=self.biases,
            about=np.array(json.dumps(self.about, sort_keys=True)),
        )
        Path(path).write_bytes(buffer.getvalue())

    @cached_property
    def _rows(self) -> np.ndarray:
        return self.weights.astype(np.int64)

    def probabilities(self, codes: Sequence[np.ndarray]) -> list[dict[str, float]]:
        """For each paper (its int8 vector as stored), the probability of every area."""
        if not codes:
            return []
        x = np.stack([c.astype(np.int64) for c in codes])
        dots = x @ self._rows.T  # exact
        norms = np.sqrt((x * x).sum(axis=1).astype(np.float64))
        z = dots.astype(np.float64) * self.scales / np.maximum(norms, 1.0)[:, None] + self.biases
        return [
            {
                area: 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, value))))
                for area, value in zip(self.areas, row.tolist(), strict=True)
            }
            for row in z
        ]


@cache
def _load(path: str) -> AreaModel:
    try:
        with np.load(Path(path), allow_pickle=False) as data:
            model = AreaModel(
                areas=tuple(data["areas"].tolist()),
                weights=data["weights"].astype(np.int16),
                scales=data["scales"].astype(np.float64),
                biases=data["biases"].astype(np.float64),
                about=json.loads(str(data["about"])),
            )
    except (OSError, ValueError, KeyError) as exc:
        raise TaggerError(f"cannot read the area model {path}: {exc}") from None
    if model.weights.shape[0] != len(model.areas):
        raise TaggerError(f"cannot read the area model {path}: its rows and areas differ")
    return model


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
        return {area for area, p in self.probability.items() if p >= PROPOSE}

    def features(self, area: str) -> dict[str, float]:
        p = self.probability.get(area, 0.0)
        best = max(self.probability.values(), default=0.0)
        children = self.taxonomy.children.get(area, [])
        child = max((self.probability.get(c, 0.0) for c in children), default=0.0)
        return dict(zip(FEATURES, (p, p - best, child), strict=True))

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
