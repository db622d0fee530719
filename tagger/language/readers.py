"""The readers' ranking of keyphrases: what a reader accepts, weighed with what authors list.

Fitted by ``python -m tagger.fitting.keyphrase_ranking`` to the judged keyphrase set of issue 46
(judged/keyphrases3: every candidate coded as READING.md's readers code a keyphrase) and to the
keywords authors chose for 3,279 papers of data/ (judged/keyphrases3/README.md measures it).
Three models score each candidate:

- **old**: the acceptance model of judged/keyphrases.jsonl (language.keyphrases);
- **readers**: the probability that a reader codes the phrase ACCEPT (not a broad field, a
  fragment or noise): trees over the phrase's features, a logistic regression over its
  **context** (the transformer's last hidden states over its first occurrence in the paper's
  opening, which KeyBERT's pass over the opening already makes, and the phrase's own embedding:
  how the paper uses it, "we propose X" against "X have shown"), and how the judges coded the same
  phrase (Porter-stemmed) in other papers;
- **authors**: the probability that the authors list it as a keyword: the same kinds of trees
  and regression fitted to authors' keywords, with how often authors list the phrase where it is
  a candidate (KEA's keyphraseness).

A candidate ranks by ``old ** t * readers ** (1 - t) * (1 + w * authors)``, times ``single``
for a one-word phrase; its ``score`` is the readers' probability. Every number is computed the
same way on every CPU: the hidden states are (judged/keyphrases3/hidden_cpu.py), the context is
their mean added token by token in float64, and the regression's sum runs in a fixed order
(language.vectors).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .trees import Trees, sigmoid
from .vectors import pooled, row_sums, unit_rows

# The columns the readers' and the authors' trees read beside the phrase's features.
READER_COLUMNS = ("reading", "coded", "coded_generic", "coded_accept")
AUTHOR_COLUMNS = ("listing", "listed", "listed_share")
# The priors' smoothing: a phrase never seen counts as seen this often at these shares.
CODED_WEIGHT, GENERIC_SHARE, ACCEPT_SHARE = 2.0, 0.70, 0.20
LISTED_WEIGHT, LISTED_SHARE = 5.0, 0.02


@dataclass(frozen=True)
class Linear:
    """A logistic regression: ``sigmoid(weights . row + bias)``, its sum over the row added
    pairwise in a fixed order (vectors.row_sums), so the same on every CPU."""

    weights: tuple[float, ...]
    bias: float

    @cached_property
    def _weights(self) -> np.ndarray:
        return np.array(self.weights, dtype=np.float64)

    def probability(self, rows: np.ndarray) -> list[float]:
        if not len(rows):
            return []
        z = row_sums(np.multiply(rows, self._weights, dtype=np.float64)) + self.bias
        return [sigmoid(value) for value in z.tolist()]

    @classmethod
    def fitted(cls, rows: np.ndarray, labels: Sequence[int]) -> Linear:
        """scikit-learn's LogisticRegression (L2, C = 1) fitted to ``rows``."""
        from sklearn.linear_model import LogisticRegression

        fit = LogisticRegression(max_iter=3000).fit(rows, np.asarray(labels))
        return cls(tuple(fit.coef_[0].tolist()), float(fit.intercept_[0]))


def opening_contexts(
    hidden: np.ndarray,
    offsets: Sequence[tuple[int, int]],
    opening: str,
    written: Sequence[Sequence[str]],
) -> np.ndarray:
    """Each phrase's context in the paper's opening: the mean hidden state of the tokens of its
    first occurrence there (unit length) and a 1, or zeros if it does not occur in the opening.
    ``written``: per phrase, the forms to look for (as shown, normalised), first found first."""
    out = np.zeros((len(written), hidden.shape[1] + 1), dtype=np.float32)
    lower = opening.lower()
    tokens = [(i, start, end) for i, (start, end) in enumerate(offsets) if end > start]
    starts, ends = [start for _, start, _ in tokens], [end for _, _, end in tokens]
    rows, means = [], []
    for row, forms in enumerate(written):
        found = next(filter(None, (_whole(lower, form.lower()) for form in forms)), None)
        if found:
            # the tokens that overlap it: from the first to end after its start, up to the
            # first to start at or after its end
            first, last = bisect_right(ends, found[0]), bisect_left(starts, found[1])
            if first < last:
                rows.append(row)
                means.append(pooled(hidden[None, [i for i, _, _ in tokens[first:last]]])[0])
    if rows:
        out[rows, :-1], out[rows, -1] = unit_rows(np.stack(means)), 1.0
    return out


def _whole(text: str, form: str) -> tuple[int, int] | None:
    """Where ``form`` first occurs in ``text`` between word boundaries, as ``re.search(r"\b" +
    re.escape(form) + r"\b", text)`` finds it (without compiling a pattern per phrase)."""
    start = text.find(form)
    while start != -1:
        end = start + len(form)
        if _boundary(text, start) and _boundary(text, end):
            return start, end
        start = text.find(form, start + 1)
    return None


def _boundary(text: str, at: int) -> bool:
    """Whether ``\b`` holds at ``at``: a word character on one side only."""
    before = at > 0 and _word(text[at - 1])
    after = at < len(text) and _word(text[at])
    return before != after


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


@dataclass(frozen=True)
class Priors:
    """What a phrase (Porter-stemmed) carries from other papers: how many times the judges
    coded it and how many of those GEN and ACCEPT; in how many listed papers it was a candidate
    and in how many the authors listed it."""

    coded: Mapping[str, tuple[int, int, int]]
    listed: Mapping[str, tuple[int, int]]

    def readers(self, stem: str) -> dict[str, float]:
        seen, generic, accept = self.coded.get(stem, (0, 0, 0))
        return {
            "coded": math.log1p(seen),
            "coded_generic": (generic + CODED_WEIGHT * GENERIC_SHARE) / (seen + CODED_WEIGHT),
            "coded_accept": (accept + CODED_WEIGHT * ACCEPT_SHARE) / (seen + CODED_WEIGHT),
        }

    def authors(self, stem: str) -> dict[str, float]:
        seen, listed = self.listed.get(stem, (0, 0))
        return {
            "listed": math.log1p(seen),
            "listed_share": (listed + LISTED_WEIGHT * LISTED_SHARE) / (seen + LISTED_WEIGHT),
        }


@dataclass(frozen=True)
class ReadersRanking:
    """The readers' and the authors' models and how they are weighed with the old one (the
    module's docstring)."""

    readers: Trees
    authors: Trees
    reading: Linear
    listing: Linear
    priors: Priors
    t: float  # the old model's weight, as an exponent
    w: float  # the authors' weight
    single: float  # a one-word phrase's rank is multiplied by this

    def rank(
        self,
        rows: Sequence[Mapping[str, float]],
        old: Sequence[float],
        embedded: np.ndarray,
        stems: Sequence[str],
    ) -> tuple[list[float], list[float]]:
        """Each candidate's place in the ranking (higher first) and its readers' probability.
        ``rows``: its features; ``old``: the old model's probability; ``embedded``: its context
        (:func:`opening_contexts`) beside its own embedding, one row each."""
        reading = self.reading.probability(embedded)
        listing = self.listing.probability(embedded)
        readers = self.readers.scores(
            [
                {**row, "reading": r, **self.priors.readers(stem)}
                for row, r, stem in zip(rows, reading, stems, strict=True)
            ]
        )
        authors = self.authors.scores(
            [
                {**row, "listing": a, **self.priors.authors(stem)}
                for row, a, stem in zip(rows, listing, stems, strict=True)
            ]
        )
        ranks = [
            o**self.t * r ** (1 - self.t) * (1 + self.w * a) * (self.single if row["single"] else 1)
            for o, r, a, row in zip(old, readers, authors, rows, strict=True)
        ]
        return ranks, readers

    def as_dict(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "w": self.w,
            "single": self.single,
            "readers": self.readers.as_dict(),
            "authors": self.authors.as_dict(),
            "reading": {"weights": list(self.reading.weights), "bias": self.reading.bias},
            "listing": {"weights": list(self.listing.weights), "bias": self.listing.bias},
            "coded": {stem: list(c) for stem, c in sorted(self.priors.coded.items())},
            "listed": {stem: list(c) for stem, c in sorted(self.priors.listed.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], features: Sequence[str]) -> ReadersRanking:
        return cls(
            readers=Trees.from_dict(data["readers"], (*features, *READER_COLUMNS)),
            authors=Trees.from_dict(data["authors"], (*features, *AUTHOR_COLUMNS)),
            reading=Linear(tuple(data["reading"]["weights"]), float(data["reading"]["bias"])),
            listing=Linear(tuple(data["listing"]["weights"]), float(data["listing"]["bias"])),
            priors=Priors(
                {stem: tuple(c) for stem, c in data["coded"].items()},
                {stem: tuple(c) for stem, c in data["listed"].items()},
            ),
            t=float(data["t"]),
            w=float(data["w"]),
            single=float(data["single"]),
        )
