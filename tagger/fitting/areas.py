"""Fitting the area model (tagging.areas): for every area, one logistic model over the judged
papers' unit vectors and one over their tf-idf vectors (words and pairs of words), all areas at
once.

An area's examples are every judged paper: positive when a reader placed it in the area or below
it, left out when the area (or one below it) is only acceptable, negative otherwise; a
contribution type's (type.theory) positive when the reader named the type. An area with fewer
than MIN_PAPERS positive papers gets no model. The models of a block are fitted together, as one
L2-regularised cross-entropy over a weight matrix, by L-BFGS (scipy), which takes seconds where a
model at a time takes minutes. Measured held out on the judged set (mean average precision over
the areas): the embedding block 0.62, the text block 0.66, their mean 0.67; for the types 0.60,
0.74 (docs/calibration.md).

The weigher reads the area model's probability of each candidate; for the weigher to learn how
far to trust it, the probabilities it is fitted on must be those of models that never saw the
paper. :func:`out_of_fold` gives each paper the probabilities of a model fitted without its group
of papers (papers.group_of), as a paper the tagger has never seen gets them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..language import vectors
from ..language.text import paper_text
from ..tagging.areas import AreaModel, terms
from ..taxonomy.model import Taxonomy
from .papers import JudgedPaper

MIN_PAPERS = 5  # positive papers an area needs for a model of its own
C = 4.0  # the embedding block's inverse L2 strength, per paper (chosen held out)
TEXT_C = 16.0  # the text block's
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


def fit_area_model(
    judged: Sequence[JudgedPaper],
    taxonomy: Taxonomy,
    *,
    c: float = C,
    text_c: float | None = TEXT_C,
    about: dict[str, Any] | None = None,
) -> AreaModel | None:
    """The area model of ``judged`` (without a text block if ``text_c`` is None); None if no
    area has MIN_PAPERS positive papers."""
    x = unit_vectors(judged)
    areas, y, mask = labels(judged, taxonomy)
    keep = (y * mask).sum(axis=0) >= MIN_PAPERS
    if not keep.any():
        return None
    y, mask = y[:, keep], mask[:, keep]
    weights, biases = _fit(x, y, mask, c)
    kept = [a for a, k in zip(areas, keep, strict=True) if k]
    record = {"papers": len(judged), "areas": len(kept), "c": c, "min_papers": MIN_PAPERS}
    text = None
    if text_c is not None:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

        stop = frozenset(ENGLISH_STOP_WORDS)
        vectorizer = TfidfVectorizer(
            analyzer=lambda text: terms(text, stop),
            sublinear_tf=True,
            min_df=2,
            max_features=TERMS,
        )
        tfidf = vectorizer.fit_transform(
            [paper_text(j.paper.title, j.paper.abstract) for j in judged]
        )
        text_weights, text_biases = _fit(tfidf, y, mask, text_c)
        vocabulary = vectorizer.get_feature_names_out().tolist()
        text = (vocabulary, vectorizer.idf_, stop, text_weights.T, text_biases)
        record |= {"text_c": text_c, "terms": len(vocabulary)}
    return AreaModel.from_floats(kept, weights, biases, record | dict(about or {}), text)


def _fit(x: np.ndarray, y: np.ndarray, mask: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Weights (areas x dimensions) and biases minimising the masked cross-entropy plus
    ||W||^2 / (2 c n)."""
    from scipy.optimize import minimize

    n, d = x.shape
    k = y.shape[1]
    prior = np.clip((y * mask).sum(axis=0) / np.maximum(mask.sum(axis=0), 1), 1e-4, 1 - 1e-4)
    start = np.concatenate([np.zeros(d * k), np.log(prior / (1 - prior))])
    strength = 1.0 / (c * n)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[: d * k].reshape(d, k), theta[d * k :]
        z = x @ w + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))
        # log(1 + e^z) - y z, stably
        value = (mask * (np.logaddexp(0.0, z) - y * z)).sum() / n + 0.5 * strength * (w * w).sum()
        g = mask * (p - y) / n
        grad_w = x.T @ g + strength * w
        return value, np.concatenate([grad_w.ravel(), g.sum(axis=0)])

    done = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    w, b = done.x[: d * k].reshape(d, k), done.x[d * k :]
    return w.T, b


def texts_of(judged: Sequence[JudgedPaper]) -> list[str]:
    """The judged papers' texts, as the area model reads them (language.text.paper_text)."""
    return [paper_text(item.paper.title, item.paper.abstract) for item in judged]


def out_of_fold(
    judged: Sequence[JudgedPaper],
    taxonomy: Taxonomy,
    folds: Sequence[Sequence[int]],
    *,
    c: float = C,
    text_c: float | None = TEXT_C,
) -> list[dict[str, float]]:
    """Each judged paper's area probabilities from the model fitted without its fold (``folds``:
    the indices of ``judged`` in each)."""
    from ..language import vectors as vec

    found: list[dict[str, float]] = [{} for _ in judged]
    for test in folds:
        held = set(test)
        rest = [j for i, j in enumerate(judged) if i not in held]
        model = fit_area_model(rest, taxonomy, c=c, text_c=text_c)
        if model is None:
            continue
        codes = [vec.decode(judged[i].reading.vector) for i in test]
        for i, chances in zip(
            test, model.probabilities(codes, texts_of([judged[i] for i in test])), strict=True
        ):
            found[i] = chances
    return found
