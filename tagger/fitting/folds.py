"""Measuring a fit on papers it never saw: the judged papers split into folds by group (a venue
and year, or a paper list: papers.group_of), each fold held out in turn from every step of the
fit (the first stage, the indexes, the area model, the second stage), its papers tagged by what
the others made.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..config import AREA_C, AREA_TEXT_C, FOLDS, WEIGHER_C, WEIGHER_LEARNER, TaggerConfig
from ..records import TaggedPaper
from ..tagging.proposing import Candidate
from ..tagging.weigher import Weigher
from ..taxonomy.model import Taxonomy
from . import areas as area_fit
from .papers import IndexPaper, JudgedPaper
from .weighing import (
    FIRST_NAMES,
    SECOND_NAMES,
    fit_weigher,
    index_of,
    judged_index_of,
    second_stage,
    tagged,
)

INNER = 4  # folds the area model's probabilities for the weigher are made with


@dataclass
class Fold:
    """One fold held out: its groups, the papers measured, their candidates and the weigher
    fitted without them."""

    groups: tuple[str, ...]
    test: list[int]
    found: list[list[Candidate]]  # of the test papers, second stage
    weigher: Weigher


def split(judged: Sequence[JudgedPaper], folds: int) -> list[list[int]]:
    """The indices of ``judged`` in ``folds`` folds of whole groups, as even in size as can be:
    the largest group first into the smallest fold, ties by name (the same split every time)."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(judged):
        members[item.group].append(i)
    out: list[list[int]] = [[] for _ in range(min(folds, len(members)))]
    for group in sorted(members, key=lambda g: (-len(members[g]), g)):
        smallest = min(range(len(out)), key=lambda k: (len(out[k]), k))
        out[smallest].extend(members[group])
    return [sorted(fold) for fold in out]


@dataclass
class Settings:
    """What a fit is made with (the defaults are what the shipped model was made with)."""

    c: float = WEIGHER_C  # the weigher's inverse L2 strength
    area_c: float = AREA_C
    text_c: float | None = AREA_TEXT_C  # None: no text block
    neighbours: int = TaggerConfig().neighbours
    judged_neighbours: int = TaggerConfig().judged_neighbours
    learned: bool = True  # fit an area model
    learner: str = WEIGHER_LEARNER  # the second stage's right and main models: or "trees"


def fit_stages(
    train: Sequence[JudgedPaper],
    index_papers: Sequence[IndexPaper],
    taxonomy: Taxonomy,
    settings: Settings,
    about: Mapping[str, object],
):
    """Every part fitted on ``train``: a weighing.Fitted, and the second-stage candidates of
    ``train`` it was fitted on."""
    from .weighing import Fitted

    first = fit_weigher(
        train,
        [j.rules for j in train],
        taxonomy,
        c=settings.c,
        names=FIRST_NAMES,
        about=dict(about),
    )
    index = index_of(index_papers, first, about=dict(about)) if index_papers else None
    judged_index = judged_index_of(train, about=dict(about))
    indexes = {"jn": (judged_index, settings.judged_neighbours)}
    if index is not None:
        indexes["nb"] = (index, settings.neighbours)
    model = chances = None
    if settings.learned:
        blocks = area_fit.fit_blocks(train, taxonomy, c=settings.area_c, text_c=settings.text_c)
        if blocks is not None:
            chances = area_fit.out_of_fold(train, taxonomy, split(train, INNER), start=blocks)
            model = blocks.model(len(train), dict(about))
    found = second_stage(train, indexes, chances, taxonomy)
    weigher = fit_weigher(
        train,
        found,
        taxonomy,
        c=settings.c,
        names=SECOND_NAMES,
        about=dict(about),
        learner=settings.learner,
    )
    return Fitted(first, index, judged_index, model, weigher), indexes


def cross_validate(
    judged: Sequence[JudgedPaper],
    index_papers: Sequence[IndexPaper],
    taxonomy: Taxonomy,
    settings: Settings,
    *,
    about: Mapping[str, object],
    folds: int = FOLDS,
    log: Callable[[str], None] = print,
) -> list[Fold]:
    """Every part fitted without each fold in turn, and the fold's papers proposed and weighed
    by what the others made."""
    done = []
    for test in split(judged, folds):
        held = set(test)
        train = [item for i, item in enumerate(judged) if i not in held]
        groups = tuple(sorted({judged[i].group for i in test}))
        log(f"  {len(test)} papers of {len(groups)} groups held out")
        fitted, indexes = fit_stages(train, index_papers, taxonomy, settings, about)
        probe = [judged[i] for i in test]
        chances = None
        if fitted.areas is not None:
            from ..language import vectors

            codes = [vectors.decode(item.reading.vector) for item in probe]
            chances = fitted.areas.probabilities(codes, area_fit.texts_of(probe))
        found = second_stage(probe, indexes, chances, taxonomy)
        done.append(Fold(groups, test, found, fitted.weigher))
    return done


def held_out(
    folds: Sequence[Fold],
    judged: Sequence[JudgedPaper],
    taxonomy: Taxonomy,
    config: TaggerConfig,
    **settings: object,
) -> list[TaggedPaper]:
    """Every judged paper as its fold's weigher lists it, with ``settings`` changed."""
    config = replace(config, **settings)
    return [
        tagged(judged[i], found, fold.weigher, taxonomy, config)
        for fold in folds
        for i, found in zip(fold.test, fold.found, strict=True)
    ]
