"""Measuring a fit on papers it never saw: the judged papers split into folds by group (a venue
and year, or a paper list: papers.group_of), each fold held out in turn from every step of the
fit (the first stage, the indexes, the area model, the second stage), its papers tagged by what
the others made, their scores calibrated by the other folds' verdicts (fitting.calibration).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..config import AREA_C, AREA_TEXT_C, FOLDS, WEIGHER_C, WEIGHER_LEARNER, TaggerConfig
from ..records import TaggedPaper
from ..tagging.listing import weighed
from ..tagging.neighbours import NeighbourIndex, abstract_key
from ..tagging.proposing import Proposal
from ..tagging.weigher import Weighed
from ..tagging.workers import process_map
from ..taxonomy.model import Taxonomy
from . import areas as area_fit
from . import calibration
from .papers import IndexPaper, JudgedPaper
from .weighing import (
    FIRST_NAMES,
    SECOND_NAMES,
    FittedParts,
    fit_weigher,
    index_of,
    judged_index_of,
    second_stage,
    tagged,
)

INNER = 4  # folds the area model's probabilities for the weigher are made with


@dataclass
class Fold:
    """One fold held out: its groups, the papers measured, their candidates and every part
    fitted without them (what a model directory of that fit would hold)."""

    groups: tuple[str, ...]
    test: list[int]
    proposals: list[Proposal]  # of the test papers, with the votes of what was fitted
    fitted: FittedParts
    pairs: np.ndarray | None = None  # (score, right) of its candidates, when calibrated
    weighed: Weighed | None = None  # its weigher's scores of them, once asked for (held_out)


def held_together(judged: Sequence[JudgedPaper]) -> list[str]:
    """The unit each judged paper is held out with: its group (papers.group_of), joined with
    every group that holds a copy of one of its papers (the same abstract, by abstract_key), so
    that no copy of a held-out paper is fitted on (two judged files of one conference, a paper
    judged twice under two sources); a unit is named by the first of its groups by name."""
    parent: dict[str, str] = {}

    def root(group: str) -> str:
        while parent.setdefault(group, group) != group:
            group = parent[group]
        return group

    first: dict[int, str] = {}  # the group an abstract was first seen in
    for item in judged:
        key = abstract_key(item.paper.abstract)
        one, other = sorted((root(item.group), root(first.setdefault(key, item.group))))
        parent[other] = one
    return [root(item.group) for item in judged]


def split(judged: Sequence[JudgedPaper], folds: int) -> list[list[int]]:
    """The indices of ``judged`` in ``folds`` folds of whole units (:func:`held_together`: a
    group and the groups holding copies of its papers), as even in size as can be: the largest
    unit first into the smallest fold, ties by name (the same split every time)."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, unit in enumerate(held_together(judged)):
        members[unit].append(i)
    out: list[list[int]] = [[] for _ in range(min(folds, len(members)))]
    for group in sorted(members, key=lambda g: (-len(members[g]), g)):
        smallest = min(range(len(out)), key=lambda k: (len(out[k]), k))
        out[smallest].extend(members[group])
    return [sorted(fold) for fold in out]


@dataclass
class Settings:
    """What a fit is made with, besides the settings its papers are read and its features made
    with (config.TaggerConfig): the defaults are what the shipped model was made with."""

    c: float = WEIGHER_C  # the weigher's inverse L2 strength
    area_c: float = AREA_C
    text_c: float | None = AREA_TEXT_C  # None: no text block
    learned: bool = True  # fit an area model
    learner: str = WEIGHER_LEARNER  # the second stage's right and main models: or "trees"
    calibrate: bool = True  # map the weigher's scores on held-out verdicts (fitting.calibration)


def inner_folds(train: Sequence[JudgedPaper]) -> list[list[int]]:
    """The folds the area model's probabilities for the weigher are made in: INNER folds of
    whole units, as the outer folds; of papers, dealt in turn, when ``train`` is one unit (an
    outer fold's rest, when the judged papers are of two sources), which no fold of units could
    hold out."""
    inner = split(train, INNER)
    if len(inner) > 1:
        return inner
    return [list(range(k, len(train), INNER)) for k in range(min(INNER, len(train)))]


def indexes_of(
    index: NeighbourIndex | None, judged_index: NeighbourIndex, config: TaggerConfig
) -> dict[str, tuple[NeighbourIndex, int]]:
    """The indexes a tagger with ``config`` reads, each with how many neighbours
    (tagging.model.Learned.neighbour_indexes: a kind read 0 times is left out)."""
    wanted = {
        "corpus": (index, config.neighbours),
        "judged": (judged_index, config.judged_neighbours),
    }
    return {kind: (found, k) for kind, (found, k) in wanted.items() if found is not None and k}


def fit_stages(
    train: Sequence[JudgedPaper],
    index_papers: Sequence[IndexPaper],
    taxonomy: Taxonomy,
    settings: Settings,
    config: TaggerConfig,
    about: Mapping[str, object],
    *,
    workers: int,
) -> FittedParts:
    """Every part fitted on ``train``, its papers read and its features made with ``config``;
    the area model's inner folds ``workers`` at a time (areas.out_of_fold)."""
    first = fit_weigher(
        train,
        [j.rules.candidates for j in train],
        taxonomy,
        c=settings.c,
        names=FIRST_NAMES,
        about=dict(about),
    )
    index = index_of(index_papers, first, about=dict(about)) if index_papers else None
    judged_index = judged_index_of(train, about=dict(about))
    model = chances = None
    if settings.learned:
        blocks = area_fit.fit_blocks(train, taxonomy, c=settings.area_c, text_c=settings.text_c)
        if blocks is not None:
            chances = area_fit.out_of_fold(
                train, taxonomy, inner_folds(train), start=blocks, workers=workers
            )
            model = blocks.model(len(train), dict(about))
    found = second_stage(train, indexes_of(index, judged_index, config), chances, taxonomy, config)
    weigher = fit_weigher(
        train,
        [proposal.candidates for proposal in found],
        taxonomy,
        c=settings.c,
        names=SECOND_NAMES,
        about=dict(about),
        learner=settings.learner,
    )
    return FittedParts(first, index, judged_index, model, weigher)


def cross_validate(
    judged: Sequence[JudgedPaper],
    index_papers: Sequence[IndexPaper],
    taxonomy: Taxonomy,
    settings: Settings,
    config: TaggerConfig,
    *,
    about: Mapping[str, object],
    folds: int = FOLDS,
    log: Callable[[str], None] = print,
    workers: int,
) -> list[Fold]:
    """Every part fitted without each fold in turn, and the fold's papers proposed and weighed
    by what the others made, as a tagger with those parts would (tagging.model.Learned.votes).
    With ``workers`` > 1, that many folds at a time, each in a process of its own with one
    thread (the area model's optimiser runs on one core): the same folds, faster."""
    tests = split(judged, folds)
    shared = (judged, index_papers, taxonomy, settings, config, dict(about))
    done = []
    for fold in process_map(_held_out, tests, shared=shared, workers=workers):
        log(f"  {len(fold.test)} papers of {len(fold.groups)} groups held out: done")
        done.append(fold)
    if settings.calibrate:  # each fold's pairs: its candidates scored by its own weigher
        for fold in done:
            probe = [judged[i] for i in fold.test]
            fold.pairs = calibration.pairs_of(probe, fold.proposals, fold.fitted.weigher, taxonomy)
        maps = calibration.cross_fitted([fold.pairs for fold in done])
        for fold, points in zip(done, maps, strict=True):
            fold.fitted.weigher = calibration.calibrate(fold.fitted.weigher, points)
    return done


def _held_out(shared: tuple, test: list[int]) -> Fold:
    """One fold: every part fitted without the papers ``test``, and those papers proposed with
    its votes (``shared``: what cross_validate fits them from)."""
    judged, index_papers, taxonomy, settings, config, about = shared
    held = set(test)
    train = [item for i, item in enumerate(judged) if i not in held]
    groups = tuple(sorted({judged[i].group for i in test}))
    fitted = fit_stages(train, index_papers, taxonomy, settings, config, about, workers=1)
    probe = [judged[i] for i in test]
    chances = None
    if fitted.areas is not None:
        codes = [item.reading.code for item in probe]
        chances = fitted.areas.probabilities(codes, [item.reading.text for item in probe])
    indexes = indexes_of(fitted.index, fitted.judged_index, config)
    return Fold(groups, test, second_stage(probe, indexes, chances, taxonomy, config), fitted)


def calibration_map(folds: Sequence[Fold]):
    """The map the model fitted on every judged paper is calibrated by: every fold's pairs
    (those cross_validate kept)."""
    pairs = [fold.pairs for fold in folds if fold.pairs is not None]
    return calibration.fit_map(np.concatenate([*pairs, np.empty((0, 2))]))


def held_out(
    folds: Sequence[Fold],
    taxonomy: Taxonomy,
    config: TaggerConfig,
    **settings: object,
) -> list[TaggedPaper]:
    """Every judged paper as its fold's weigher lists it, with ``settings`` changed."""
    config = replace(config, **settings)
    return [
        tagged(proposal, scores, taxonomy, config)
        for fold in folds
        for scores in [_weighed(fold)]
        for proposal in fold.proposals
    ]


def _weighed(fold: Fold) -> Weighed:
    """The fold's weigher's scores of its held-out candidates, made once and kept: a fit lists
    them at every --min-score of its curve."""
    if fold.weighed is None or fold.weighed.weigher is not fold.fitted.weigher:
        fold.weighed = weighed(fold.proposals, fold.fitted.weigher)
    return fold.weighed
