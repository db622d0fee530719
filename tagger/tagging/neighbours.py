"""Candidate areas from a paper's nearest neighbours among shipped, tagged papers.

Rules propose an area only where the paper uses one of its words; a paper about spurious
correlations that never writes "domain generalisation" gets no candidate there. So the papers
a model was fitted with (for the packaged model, the ICLR, ICML and NeurIPS abstracts of
``data/`` that are in no judged set) are kept with their embeddings and the areas the rules and
the first-stage weigher gave them (a model directory's ``neighbours.npz``, made by ``tagger
fit``), and so are the judged papers with the areas their readers wrote down
(``neighbours-judged.npz``): a paper's nearest
neighbours of each kind, by the cosine of the stored paper vectors, propose the areas they are
tagged with, and tell the weigher how much of their similarity agrees on each candidate. A tag
they support names them (``AreaTag.neighbours``): a reader can look the papers up.

Cosines are computed from the int8 vectors tagged lines store (language.vectors), exactly: the
integer dot products are exact in float64 (|sum| < 2^53), so a paper's neighbours do not depend
on the batch, the thread count or the BLAS library, and `tagger retag` finds the ones `tagger
tag` found. A paper never counts itself, nor a near-copy of itself: an index paper whose abstract
has the same words (case, spacing and punctuation aside), or whose vector is all but the same
(cosine SAME or more), is left out.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..io.files import ByContent, read_npz
from ..language import vectors
from ..records import Neighbour
from ..taxonomy.model import Taxonomy

# The kinds of neighbour (a model directory's indexes, tagging.model): the papers a model was
# fitted with (the corpus), tagged by the first stage, and the judged papers, with the areas their
# readers wrote down.
KINDS = ("corpus", "judged")
PROPOSE = 0.7  # a neighbour's tag at least this sure proposes its area (and those above it)
AGREE = 0.7  # a neighbour whose tag in an area's subtree is this sure agrees with the area
# What the weigher reads of a candidate's neighbours of each kind (weigher.WEIGHER_FEATURES has
# them too).
NAMES = (
    "share",  # similarity-weighted mean of the neighbours' scores in the area or below it
    "exact",  # ... in the area itself
    "top",  # the nearest neighbour's score in the area or below it
    "count",  # the share of the neighbours that agree (score >= AGREE)
    "best",  # the cosine of the nearest agreeing neighbour
)
NEIGHBOUR_FEATURES = tuple(f"{kind}_{name}" for kind in KINDS for name in NAMES)
# The names models fitted before the kinds were named read them by (tagging.weigher migrates them).
FORMER_KINDS = {"nb": "corpus", "jn": "judged"}


SAME = 0.985  # a cosine at which an index paper is taken for a copy of the paper itself


def abstract_key(abstract: str) -> int:
    """What identifies a paper's text in the index: 8 bytes of the sha256 of its abstract's
    words, lower-cased (an edit of spacing, case or punctuation is the same paper)."""
    words = " ".join(_WORDS.findall(abstract.lower()))
    digest = hashlib.sha256(words.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


_WORDS = re.compile(r"\w+")


@dataclass(frozen=True, eq=False)
class NeighbourIndex:
    """Shipped papers: their int8 vectors, identities and first-stage tags."""

    codes: np.ndarray  # int8, one row a paper
    keys: np.ndarray  # int64 abstract_key of each
    ids: tuple[str, ...]
    titles: tuple[str, ...]  # "" for a paper without one
    areas: tuple[str, ...]  # the area ids tags refer to, by number
    tag_start: np.ndarray  # paper i's tags are tag_area[tag_start[i]:tag_start[i + 1]]
    tag_area: np.ndarray  # int32 index into areas
    tag_score: np.ndarray  # float32
    about: dict[str, Any]

    @classmethod
    def load(cls, path: str | Path) -> NeighbourIndex:
        """The index in the file at ``path`` (a model directory's: tagging.model)."""
        return _INDEXES.load(path)

    @classmethod
    def from_bytes(cls, data: bytes, digest: str, where: str | Path) -> NeighbourIndex:
        """What the file ``where`` holds, its bytes ``data`` (whose sha256 is ``digest``)."""
        return _INDEXES.of(data, digest, where)

    @classmethod
    def build(
        cls,
        papers: list[tuple[str, str | None, str, str]],
        tags: list[Mapping[str, float]],
        *,
        about: dict[str, Any],
    ) -> NeighbourIndex:
        """An index of ``papers`` (id, title, abstract, stored vector) with their ``tags``
        (area -> first-stage score)."""
        areas = tuple(sorted({area for found in tags for area in found}))
        number = {area: k for k, area in enumerate(areas)}
        start, area_of, score_of = [0], [], []
        for found in tags:
            for area, score in sorted(found.items()):
                area_of.append(number[area])
                score_of.append(score)
            start.append(len(area_of))
        return cls(
            codes=np.stack([vectors.decode(p[3]) for p in papers]),
            keys=np.array([abstract_key(p[2]) for p in papers], dtype=np.int64),
            ids=tuple(p[0] for p in papers),
            titles=tuple(p[1] or "" for p in papers),
            areas=areas,
            tag_start=np.array(start, dtype=np.int64),
            tag_area=np.array(area_of, dtype=np.int32),
            tag_score=np.array(score_of, dtype=np.float32),
            about=about,
        )

    def save(self, path: str | Path) -> None:
        """Write the index as one .npz file (no pickles), its record as JSON inside it."""
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            codes=self.codes,
            keys=self.keys,
            ids=np.array(self.ids),
            titles=np.array(self.titles),
            areas=np.array(self.areas),
            tag_start=self.tag_start,
            tag_area=self.tag_area,
            tag_score=self.tag_score,
            about=np.array(json.dumps(self.about, sort_keys=True)),
        )
        Path(path).write_bytes(buffer.getvalue())

    def serves(self, embedder_name: str) -> bool:
        """Whether papers embedded by ``embedder_name`` compare with this index's (see
        :func:`space_of`)."""
        return in_space(self.about, embedder_name)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def width(self) -> int:
        """The dimensions of its papers' vectors."""
        return int(self.codes.shape[1])

    def nearest(self, codes: list[np.ndarray], keys: list[int], k: int) -> list[list[tuple]]:
        """For each paper (its int8 vector and abstract_key): its ``k`` nearest index papers as
        (index, cosine), nearest first, the paper itself and its near-copies left out (by key,
        or a cosine of SAME or more); ties by index."""
        if not codes or not len(self) or k <= 0:
            return [[] for _ in codes]
        found = []
        for row, key in zip(self._cosines(codes), keys, strict=True):
            row = np.where((self.keys == key) | (row >= SAME), -np.inf, row)
            take = min(k, len(row))
            best = np.argpartition(-row, take - 1)[:take]
            best = sorted(best.tolist(), key=lambda j: (-row[j], j))
            found.append([(j, float(row[j])) for j in best if np.isfinite(row[j])])
        return found

    def nearest_among(
        self, code: np.ndarray, key: int, rows: np.ndarray, k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest of the index papers ``rows`` to one paper, as :meth:`nearest`
        finds them."""
        (cosines,) = self._cosines([code], rows)
        cosines = np.where((self.keys[rows] == key) | (cosines >= SAME), -np.inf, cosines)
        order = sorted(range(len(rows)), key=lambda j: (-cosines[j], rows[j]))[:k]
        return [(int(rows[j]), float(cosines[j])) for j in order if np.isfinite(cosines[j])]

    def _cosines(self, codes: list[np.ndarray], rows: np.ndarray | None = None) -> np.ndarray:
        """The cosine of each paper with the index papers (``rows`` of them, or all). The
        vectors are int8, so every partial sum of a dot product is an integer below 2**24,
        exact in float32 in any order: the same bits on every CPU and BLAS."""
        matrix, norms = self.codes, self._norms
        if rows is not None:
            matrix, norms = matrix[rows], norms[rows]
        queries = np.stack([code.astype(np.float32) for code in codes])
        dots = np.empty((len(queries), len(matrix)), dtype=np.float64)
        for start in range(0, len(matrix), _BLOCK):  # float32 a block at a time, not kept
            block = matrix[start : start + _BLOCK].astype(np.float32)
            dots[:, start : start + _BLOCK] = queries @ block.T
        own = (queries.astype(np.float64) ** 2).sum(axis=1)
        scale = np.sqrt(np.outer(own, norms))
        return np.divide(dots, scale, out=np.zeros_like(dots), where=scale > 0)

    def rows_in(self, area: str, taxonomy: Taxonomy) -> np.ndarray:
        """The index papers tagged, at AGREE or more, with ``area`` or an area below it."""
        below = frozenset(taxonomy.descendants(area) if area in taxonomy.by_id else {area})
        if below not in self._rows:
            wanted = [k for k, name in enumerate(self.areas) if name in below]
            starts = np.asarray(self.tag_start)
            paper_of = np.repeat(np.arange(len(starts) - 1), np.diff(starts))  # each tag's paper
            hit = np.isin(self.tag_area, wanted) & (np.asarray(self.tag_score) >= AGREE)
            self._rows[below] = np.unique(paper_of[hit]).astype(np.intp)
        return self._rows[below]

    @cached_property
    def _rows(self) -> dict[frozenset[str], np.ndarray]:  # rows_in's, by the areas asked for
        return {}

    @cached_property
    def _norms(self) -> np.ndarray:
        """The squared norm of each index paper's vector, exact: at most 384 * 128**2 < 2**31."""
        return np.einsum("ij,ij->i", self.codes, self.codes, dtype=np.int32).astype(np.float64)

    def tags_of(self, index: int) -> dict[str, float]:
        """The first-stage tags of index paper ``index``."""
        start, end = self.tag_start[index], self.tag_start[index + 1]
        return {
            self.areas[a]: float(s)
            for a, s in zip(self.tag_area[start:end], self.tag_score[start:end], strict=True)
        }

    def neighbour(self, index: int, similarity: float) -> Neighbour:
        return Neighbour(
            id=self.ids[index], title=self.titles[index] or None, similarity=round(similarity, 4)
        )


def space_of(embedder_name: str) -> str:
    """The space an embedder's vectors live in: its model's, for any of the model's transformer
    backends ('sentence-transformers/all-MiniLM-L6-v2 (onnx-int8)' and the torch one share
    one); the static table distilled from a model is a space of its own."""
    name, _, backend = embedder_name.partition(" (")
    return embedder_name if backend.rstrip(")") == "static" else name


def in_space(about: Mapping[str, Any], embedder_name: str) -> bool:
    """Whether what a record ``about`` describes (an index, an area model) was made in the
    space of ``embedder_name``'s vectors."""
    made = about.get("space") or about.get("model")
    return bool(made) and made == space_of(embedder_name)


_BLOCK = 2048  # index rows made float32 at a time: 3 MB, where the whole index would keep 14


def _parse(data: bytes) -> NeighbourIndex:
    """The index in a file's bytes; ValueError if they hold none, or one whose arrays disagree."""
    found = read_npz(data)
    try:
        for name in ("ids", "titles", "areas"):
            if found[name].dtype.kind != "U" or found[name].ndim != 1:
                raise ValueError(f"its {name} are not a list of strings")
        index = NeighbourIndex(
            codes=found["codes"].astype(np.int8),
            keys=found["keys"].astype(np.int64),
            ids=tuple(found["ids"].tolist()),
            titles=tuple(found["titles"].tolist()),
            areas=tuple(found["areas"].tolist()),
            tag_start=found["tag_start"].astype(np.int64),
            tag_area=found["tag_area"].astype(np.int32),
            tag_score=found["tag_score"].astype(np.float32),
            about=json.loads(str(found["about"])),
        )
    except KeyError as exc:
        raise ValueError(f"it has no {exc} array") from None
    problem = _disagreement(index)
    if problem:
        raise ValueError(problem)
    return index


def _disagreement(index: NeighbourIndex) -> str | None:
    """What in an index's arrays disagrees (one row a paper, its tags in order), or None."""
    if not isinstance(index.about, dict):
        return "its about is not a record (a JSON object)"
    if index.codes.ndim != 2:
        return f"its codes are not a matrix of one row a paper (shape {index.codes.shape})"
    papers = len(index.codes)
    for name in ("keys", "ids", "titles"):
        if len(getattr(index, name)) != papers or np.ndim(getattr(index, name)) != 1:
            return f"its {name} hold {len(getattr(index, name))} entries for its {papers} papers"
    start, tags = index.tag_start, len(index.tag_area)
    if (
        start.shape != (papers + 1,)
        or start[0] != 0
        or start[-1] != tags
        or np.any(np.diff(start) < 0)
    ):
        return f"its tag_start does not cut its {tags} tags into {papers} papers' in order"
    if index.tag_score.shape != index.tag_area.shape or index.tag_area.ndim != 1:
        return "its tag_area and tag_score differ in length"
    if tags and (index.tag_area.min() < 0 or index.tag_area.max() >= len(index.areas)):
        return f"its tag_area names areas beyond its {len(index.areas)}"
    return None


_INDEXES = ByContent(_parse, "the neighbour index")


@dataclass
class NeighbourVotes:
    """What one kind of neighbour says about each area: for each neighbour, its cosine and its
    score in the area (the best of the area and those below it)."""

    kind: str  # a key of KINDS
    neighbours: list[tuple[int, float]]  # (index paper, cosine), nearest first
    below: list[dict[str, float]]  # per neighbour: area -> best score in its subtree
    exact: list[dict[str, float]]  # per neighbour: its own tags, area -> score
    index: NeighbourIndex | None = None

    def proposed(self) -> set[str]:
        """The areas the neighbours propose: those a neighbour is confidently tagged with, and
        the areas above them (their subtree scores are at least as high)."""
        return {area for scores in self.below for area, s in scores.items() if s >= PROPOSE}

    def features(self, area: str) -> dict[str, float]:
        """This kind's NEIGHBOUR_FEATURES of one area."""
        names = [f"{self.kind}_{name}" for name in NAMES]
        if not self.neighbours:
            return dict.fromkeys(names, 0.0)
        total = sum(s for _, s in self.neighbours) or 1.0
        share = own = count = best = 0.0
        for rank, ((_, s), scores) in enumerate(zip(self.neighbours, self.below, strict=True)):
            v = scores.get(area, 0.0)
            share += s * v
            own += s * self.exact[rank].get(area, 0.0)
            if v >= AGREE:
                count += 1
                best = max(best, s)
        values = (
            share / total,
            own / total,
            self.below[0].get(area, 0.0),
            count / len(self.neighbours),
            best,
        )
        return dict(zip(names, values, strict=True))

    def supporting(self, area: str) -> list[Neighbour]:
        """The nearest neighbours that agree with ``area``."""
        if self.index is None:
            return []
        return [
            self.index.neighbour(j, s)
            for (j, s), scores in zip(self.neighbours, self.below, strict=True)
            if scores.get(area, 0.0) >= AGREE
        ]


def neighbour_votes(
    kind: str, index: NeighbourIndex, neighbours: list[tuple[int, float]], taxonomy: Taxonomy
) -> NeighbourVotes:
    """The votes of ``neighbours`` of ``index`` under ``taxonomy`` (areas it does not have are
    left out)."""
    below, exact = [], []
    for j, _ in neighbours:
        tags = {a: s for a, s in index.tags_of(j).items() if a in taxonomy.by_id}
        subtree: dict[str, float] = {}
        for area, score in tags.items():
            for ancestor in taxonomy.path(area):
                subtree[ancestor] = max(subtree.get(ancestor, 0.0), score)
        below.append(subtree)
        exact.append(tags)
    return NeighbourVotes(kind, neighbours, below, exact, index)
