"""Fitting the area model (tagging.areas): for every area, one logistic model over the judged
papers' unit vectors and one over their tf-idf vectors (words and pairs of words), all areas at
once.

An area's examples are every judged paper: positive when a reader placed it in the area or below
it, left out when the area (or one below it) is only acceptable, negative otherwise; a
contribution type's (type.theory) positive when the reader named the type. An area with fewer
than MIN_PAPERS positive papers gets no model. The models of a block are fitted together, as one
L2-regularised cross-entropy over a weight matrix, by L-BFGS (scipy), which takes seconds where a
model at a time takes minutes. Measured held out on the judged set of 3,050 papers (mean
average precision over the 214 areas with five papers or more, the mean of five folds by source
group): the embedding block 0.718, the text block 0.755, their mean probability 0.763, their
mean logit 0.785 (docs/learned-reader.md; benchmarks/learned_reader.py).

The weigher reads the area model's probability of each candidate; for the weigher to learn how
far to trust it, the probabilities it is fitted on must be those of models that never saw the
paper. :func:`out_of_fold` gives each paper the probabilities of a model fitted without its group
of papers (papers.group_of), as a paper the tagger has never seen gets them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import AREA_C, AREA_TEXT_C
from ..language import vectors
from ..language.text import paper_text
from ..tagging.areas import COMBINE, AreaModel, terms
from ..tagging.workers import process_map
from ..taxonomy.model import Taxonomy
from .papers import JudgedPaper

MIN_PAPERS = 5  # positive papers an area needs for a model of its own
TERMS = 20_000  # the text block's vocabulary: the commonest terms in two papers or more


def unit_vectors(judged: Sequence[JudgedPaper]) -> np.ndarray:
    """The judged papers' stored vectors, scaled to unit length, one row each."""
    codes = np.stack([vectors.decode(item.reading.vector).astype(np.float64) for item in judged])
    norms = np.sqrt((codes * codes).sum(axis=1))
    return codes / np.maximum(norms, 1.0)[:, None]


def labels(
    judged: Sequence[JudgedPaper], taxonomy: Taxonomy
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The topic areas and a facet's values, and for each judged paper and area: 1 if the paper
    was placed in the area or below it (for a facet's value: its type was named), else 0; and a
    mask, 0 where the area (or one below) is only acceptable."""
    areas = [a.id for a in taxonomy.areas if taxonomy.by_id[a.id].parent or not a.facet]
    column = {area: k for k, area in enumerate(areas)}
    y = np.zeros((len(judged), len(areas)))
    mask = np.ones((len(judged), len(areas)))
    for row, item in enumerate(judged):
        for area in item.judgment.facet_areas:
            if area in column:
                y[row, column[area]] = 1.0
        for area in item.judgment.acceptable:
            for ancestor in taxonomy.path(area) if area in taxonomy.by_id else ():
                if ancestor in column:
                    mask[row, column[ancestor]] = 0.0
        for area in item.judgment.areas:
            for ancestor in taxonomy.path(area) if area in taxonomy.by_id else ():
                if ancestor in column:
                    y[row, column[ancestor]] = 1.0
                    mask[row, column[ancestor]] = 1.0
    return areas, y, mask


@dataclass
class AreaBlocks:
    """The area model's blocks as floats: what a fit makes, and where a fit of fewer papers
    starts from (the same areas, and the same vocabulary and idf, which are read off texts
    alone: no label reaches them)."""

    areas: list[str]
    weights: np.ndarray  # dimensions x areas
    biases: np.ndarray
    c: float
    text: tuple[list[str], np.ndarray, frozenset[str], np.ndarray, np.ndarray, float] | None
    # the text block: vocabulary, idf, stop words, weights (terms x areas), biases, its C

    def model(self, papers: int, about: dict[str, Any] | None = None) -> AreaModel:
        record = {"papers": papers, "areas": len(self.areas), "c": self.c}
        record |= {"min_papers": MIN_PAPERS, "combine": COMBINE}
        text = None
        if self.text is not None:
            vocabulary, idf, stop, weights, biases, text_c = self.text
            text = (vocabulary, idf, stop, weights, biases)
            record |= {"text_c": text_c, "terms": len(vocabulary)}
        return AreaModel.from_floats(
            self.areas, self.weights.T, self.biases, record | dict(about or {}), text
        )


def fit_area_model(
    judged: Sequence[JudgedPaper],
    taxonomy: Taxonomy,
    *,
    c: float = AREA_C,
    text_c: float | None = AREA_TEXT_C,
    about: dict[str, Any] | None = None,
) -> AreaModel | None:
    """The area model of ``judged`` (without a text block if ``text_c`` is None); None if no
    area has MIN_PAPERS positive papers."""
    fitted = fit_blocks(judged, taxonomy, c=c, text_c=text_c)
    return None if fitted is None else fitted.model(len(judged), about)


def fit_blocks(
    judged: Sequence[JudgedPaper],
    taxonomy: Taxonomy,
    *,
    c: float = AREA_C,
    text_c: float | None = AREA_TEXT_C,
    start: AreaBlocks | None = None,
) -> AreaBlocks | None:
    """The area model's blocks fitted to ``judged``; with ``start``, for its areas, from its
    weights and with its vocabulary (a fit of some of the papers ``start`` was fitted on)."""
    x = unit_vectors(judged)
    areas, y, mask = labels(judged, taxonomy)
    if start is None:
        keep = (y * mask).sum(axis=0) >= MIN_PAPERS
    else:
        keep = np.isin(np.array(areas), start.areas)
    if not keep.any():
        return None
    y, mask = y[:, keep], mask[:, keep]
    kept = [a for a, k in zip(areas, keep, strict=True) if k]
    begin = (start.weights, start.biases) if start is not None else None
    weights, biases = _fit(x, y, mask, c, begin)
    text = None
    if text_c is not None:
        texts = texts_of(judged)
        if start is not None and start.text is not None:
            vocabulary, idf, stop = start.text[:3]
            tfidf = tfidf_of(texts, vocabulary, idf, stop)
            begin = (start.text[3], start.text[4])
        else:
            vocabulary, idf, stop, tfidf = vocabulary_of(texts)
            begin = None
        text_weights, text_biases = _fit(tfidf, y, mask, text_c, begin)
        text = (vocabulary, idf, stop, text_weights, text_biases, text_c)
    return AreaBlocks(kept, weights, biases, c, text)


def vocabulary_of(texts: Sequence[str]):
    """The text block's vocabulary, idf and stop words, read off ``texts``, and their tf-idf
    matrix (scikit-learn's TfidfVectorizer over tagging.areas.terms)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

    stop = frozenset(ENGLISH_STOP_WORDS)
    vectorizer = TfidfVectorizer(
        analyzer=lambda text: terms(text, stop), sublinear_tf=True, min_df=2, max_features=TERMS
    )
    tfidf = vectorizer.fit_transform(texts)
    return vectorizer.get_feature_names_out().tolist(), vectorizer.idf_, stop, tfidf


def tfidf_of(texts: Sequence[str], vocabulary: list[str], idf: np.ndarray, stop: frozenset[str]):
    """The tf-idf matrix of ``texts`` over a vocabulary read before (vocabulary_of)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(
        analyzer=lambda text: terms(text, stop), sublinear_tf=True, vocabulary=vocabulary
    )
    vectorizer.fit(texts[:1])  # to set the vocabulary up; the idf is the one read before
    vectorizer.idf_ = idf
    return vectorizer.transform(texts)


def _fit(
    x: Any,
    y: np.ndarray,
    mask: np.ndarray,
    c: float,
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weights (dimensions x areas) and biases minimising the masked cross-entropy plus
    ||W||^2 / (2 c n); from ``start`` if given (weights and biases of the same shapes)."""
    from scipy.optimize import minimize

    n, d = x.shape
    k = y.shape[1]
    if start is not None:
        begin = np.concatenate([np.asarray(start[0]).ravel(), np.asarray(start[1])])
    else:
        prior = np.clip((y * mask).sum(axis=0) / np.maximum(mask.sum(axis=0), 1), 1e-4, 1 - 1e-4)
        begin = np.concatenate([np.zeros(d * k), np.log(prior / (1 - prior))])
    strength = 1.0 / (c * n)
    xt = x.T.tocsr() if hasattr(x, "tocsr") else x.T

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[: d * k].reshape(d, k), theta[d * k :]
        z = x @ w + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))
        # log(1 + e^z) - y z, stably
        value = (mask * (np.logaddexp(0.0, z) - y * z)).sum() / n + 0.5 * strength * (w * w).sum()
        g = mask * (p - y) / n
        grad_w = xt @ g + strength * w
        return value, np.concatenate([np.asarray(grad_w).ravel(), g.sum(axis=0)])

    done = minimize(loss, begin, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return done.x[: d * k].reshape(d, k), done.x[d * k :]


def texts_of(judged: Sequence[JudgedPaper]) -> list[str]:
    """The judged papers' texts, as the area model reads them (language.text.paper_text)."""
    return [paper_text(item.paper.title, item.paper.abstract) for item in judged]


def out_of_fold(
    judged: Sequence[JudgedPaper],
    taxonomy: Taxonomy,
    folds: Sequence[Sequence[int]],
    *,
    start: AreaBlocks,
    workers: int,
) -> list[dict[str, float]]:
    """Each judged paper's area probabilities from a model fitted without its fold (``folds``:
    the indices of ``judged`` in each), started from ``start`` (fitted on all of ``judged``:
    the same areas, vocabulary and settings; from its weights, the fits converge in fewer
    steps to the same optimum, the loss being convex). With ``workers`` > 1, that many folds
    at a time, each in a spawned process with one thread: the same probabilities."""
    found: list[dict[str, float]] = [{} for _ in judged]
    done = process_map(_fold_chances, folds, shared=(judged, taxonomy, start), workers=workers)
    for test, chances in zip(folds, done, strict=True):
        for i, paper_chances in zip(test, chances, strict=True):
            found[i] = paper_chances
    return found


def _fold_chances(
    shared: tuple[Sequence[JudgedPaper], Taxonomy, AreaBlocks], test: Sequence[int]
) -> list[dict[str, float]]:
    """The probabilities of the papers ``test`` from a model fitted on the others (empty ones
    if no area has enough of them)."""
    judged, taxonomy, start = shared
    text_c = start.text[5] if start.text is not None else None
    held = set(test)
    rest = [j for i, j in enumerate(judged) if i not in held]
    fitted = fit_blocks(rest, taxonomy, c=start.c, text_c=text_c, start=start)
    if fitted is None:
        return [{} for _ in test]
    model = fitted.model(len(rest))
    probe = [judged[i] for i in test]
    codes = [vectors.decode(item.reading.vector) for item in probe]
    return model.probabilities(codes, texts_of(probe))
