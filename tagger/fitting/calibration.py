"""Scores that mean what they say: the weigher's probability that a tag is right, mapped so that
of the tags scored about 0.8, about 8 in 10 are right.

The weigher's ``right`` model is fitted on every candidate of the judged papers, most of them
plainly wrong; among the few it scores high, where tags are listed, its probabilities run high
(held out, tags scored 0.7-0.8 were right 66% of the time). A monotone map fixes that without
changing which candidate outranks which: centred isotonic regression (Oron and Flournoy, 2017)
of whether readers found a candidate right on its held-out score, the pool-adjacent-violators
fit (scikit-learn's IsotonicRegression) with each of its flat blocks (merged until each stands
on MIN_BLOCK verdicts) replaced by one point at the block's mean score and the share right,
joined by straight lines and to (0, 0) and (1, 1), so that the map rises everywhere: two scores
that differ stay in their order, and the ranking the listing reads is the weigher's.

The pairs come from the folds of a fit (fitting.folds): each judged paper's candidates scored
by a weigher that never saw it. The held-out figures of a fit are calibrated the same way, each
fold by a map of the other folds' pairs (:func:`cross_fitted`), so they never read a verdict of
the papers they measure; the model written is calibrated by the map of every fold's pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..corpus.judged import verdicts
from ..tagging.proposing import Proposal
from ..tagging.weigher import Calibrated, Weigher
from ..taxonomy.model import Taxonomy
from .papers import JudgedPaper

MIN_PAIRS = 50  # verdicts a map needs; with fewer, scores are left as they are
MIN_BLOCK = 300  # verdicts each point of the map stands on (noise in fewer makes steps)


def pairs_of(
    judged: Sequence[JudgedPaper],
    proposals: Sequence[Proposal],
    weigher: Weigher,
    taxonomy: Taxonomy,
) -> np.ndarray:
    """(score, 1 if right else 0) of every topic candidate of ``proposals`` (those of ``judged``,
    in order) its reader found right or wrong, scored by ``weigher``'s uncalibrated ``right``."""
    from .weighing import bare_tag

    model = _bare(weigher.right)
    rows = []
    for item, proposal in zip(judged, proposals, strict=True):
        topics = [c for c in proposal.candidates if taxonomy.facet(c.area) is None]
        said = verdicts([bare_tag(c.area, 0.0, taxonomy) for c in topics], item.judgment, taxonomy)
        kept = [(c, v) for c, v in zip(topics, said, strict=True) if v != "neutral"]
        scores = model.scores([c.features for c, _ in kept])
        rows += [(score, float(v == "right")) for score, (_, v) in zip(scores, kept, strict=True)]
    return np.array(rows, dtype=np.float64).reshape(-1, 2)


def fit_map(pairs: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """The centred isotonic map of ``pairs`` (score, right): its points, or None with fewer
    than MIN_PAIRS pairs."""
    from sklearn.isotonic import IsotonicRegression

    if len(pairs) < MIN_PAIRS:
        return None
    order = np.lexsort((pairs[:, 1], pairs[:, 0]))
    x, y = pairs[order, 0], pairs[order, 1]
    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit_transform(x, y)
    blocks: list[list[int]] = []  # each run of one fitted value: where it starts and ends
    start = 0
    for end in range(1, len(x) + 1):
        if end == len(x) or fitted[end] != fitted[start]:
            blocks.append([start, end])
            start = end
    while len(blocks) > 1:  # the smallest block merged with its smaller neighbour, until none
        k = min(range(len(blocks)), key=lambda b: (blocks[b][1] - blocks[b][0], b))
        if blocks[k][1] - blocks[k][0] >= MIN_BLOCK:
            break
        size = [b[1] - b[0] for b in blocks]
        j = k - 1 if k == len(blocks) - 1 or (k > 0 and size[k - 1] <= size[k + 1]) else k + 1
        low, high = min(j, k), max(j, k)
        blocks[low : high + 1] = [[blocks[low][0], blocks[high][1]]]
    xs = [float(np.mean(x[a:b])) for a, b in blocks]
    ys = [float(np.mean(y[a:b])) for a, b in blocks]
    # the ends joined to (0, 0) and (1, 1): no two scores become one anywhere, however few
    # the blocks (a fit of a few papers has one or two)
    if ys[0] > 0.0:
        xs, ys = [0.0, *xs], [0.0, *ys]
    else:  # a lowest block all wrong starts the map at 0
        xs[0] = 0.0
    if ys[-1] < 1.0:
        xs, ys = [*xs, 1.0], [*ys, 1.0]
    else:
        xs[-1] = 1.0
    return tuple(xs), tuple(ys)


def calibrate(weigher: Weigher, points: tuple[tuple[float, ...], tuple[float, ...]] | None):
    """``weigher`` with its ``right`` model mapped through ``points`` (as it is without)."""
    if points is None:
        return weigher
    return replace(weigher, right=Calibrated(_bare(weigher.right), *points))


def cross_fitted(pairs: Sequence[np.ndarray]) -> list:
    """For each fold, the map of the other folds' pairs (``pairs``: each fold's)."""
    return [
        fit_map(np.concatenate([p for j, p in enumerate(pairs) if j != k] or [np.empty((0, 2))]))
        for k in range(len(pairs))
    ]


def _bare(model):
    return model.model if isinstance(model, Calibrated) else model
