"""Fitting the weigher in two stages, the neighbour indexes between them, and the area model.

The first stage reads rule evidence and similarities alone (weigher.RULE_FEATURES): its confident
areas of the index papers (papers.IndexPaper) make the corpus index (tagging.neighbours). The
judged papers make the judged index, with the areas their readers wrote down, and the area model
(:mod:`.areas`). The second stage reads the rule evidence, the votes of each paper's neighbours in
both indexes and the area model's (weigher.WEIGHER_FEATURES): it is the weigher that tags. Its
candidates are proposed as tagging proposes them (tagging.votes.votes_of,
tagging.proposing.propose_paper). A judged paper never counts itself among its neighbours
(tagging.neighbours), and a fit measured held out (:mod:`.folds`) is made without the held-out
papers at every step.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import WEIGHER_C, WEIGHER_LEARNER, TaggerConfig
from ..corpus.judged import verdicts
from ..records import AreaTag, Provenance, TaggedPaper
from ..tagging.areas import AreaModel
from ..tagging.listing import list_tags
from ..tagging.neighbours import NeighbourIndex
from ..tagging.proposing import AreaCandidate, Proposal, propose_paper
from ..tagging.votes import votes_of
from ..tagging.weigher import (
    ANY_FACET,
    RULE_FEATURES,
    WEIGHER_FEATURES,
    Model,
    Weighed,
    Weigher,
    fitted,
)
from ..taxonomy.model import Taxonomy
from .papers import IndexPaper, JudgedPaper

MIN_EXAMPLES = 5  # right and wrong candidates a facet value needs for a model of its own
FIRST_STAGE_AT = 0.5  # an index paper's first-stage candidates this likely are its index tags


@dataclass
class FittedParts:
    """What one fit makes: both stages of the weigher, the indexes and the area model."""

    first: Weigher
    index: NeighbourIndex | None
    judged_index: NeighbourIndex
    areas: AreaModel | None
    weigher: Weigher

    def parts(self) -> dict[str, Any]:
        """The parts as a model directory names them (tagging.model.FILES)."""
        found = {"rules": self.first, "judged": self.judged_index, "weigher": self.weigher}
        if self.index is not None:
            found["corpus"] = self.index
        if self.areas is not None:
            found["areas"] = self.areas
        return found


def fit_weigher(
    judged: Sequence[JudgedPaper],
    found: Sequence[list[AreaCandidate]],
    taxonomy: Taxonomy,
    *,
    c: float = WEIGHER_C,
    names: Sequence[str],
    about: dict[str, Any] | None = None,
    learner: str = WEIGHER_LEARNER,
) -> Weigher:
    """The weigher's models fitted to the candidates ``found`` of the ``judged`` papers, reading
    the features ``names``: ``right`` on every candidate judged right or wrong (acceptable ones
    left out), ``main`` on every topic candidate, a facet model per contribution type with at
    least MIN_EXAMPLES right and wrong candidates, and one for the other types."""
    right_rows, right_labels, main_rows, main_labels = [], [], [], []
    facet_rows: dict[str, list] = defaultdict(list)
    facet_labels: dict[str, list[int]] = defaultdict(list)
    for item, candidates in zip(judged, found, strict=True):
        topics = [c for c in candidates if taxonomy.facet(c.area) is None]
        for candidate in candidates:
            if taxonomy.facet(candidate.area) is not None and taxonomy.by_id[candidate.area].parent:
                for key in (candidate.area, ANY_FACET):
                    facet_rows[key].append(candidate.features)
                    facet_labels[key].append(int(candidate.area in item.judgment.facet_areas))
        said = verdicts([bare_tag(c.area, 0.0, taxonomy) for c in topics], item.judgment, taxonomy)
        for candidate, verdict in zip(topics, said, strict=True):
            if verdict != "neutral":
                right_rows.append(candidate.features)
                right_labels.append(int(verdict == "right"))
            main_rows.append(candidate.features)
            main_labels.append(int(candidate.area in item.judgment.main))
    facets = {
        area: fitted(facet_rows[area], labels, c=c, names=names)
        for area, labels in facet_labels.items()
        if min(sum(labels), len(labels) - sum(labels)) >= MIN_EXAMPLES
    }
    if ANY_FACET not in facets:  # no facet, or no types judged: no type is ever listed
        facets[ANY_FACET] = never(names)
    if learner == "trees":
        from ..language.trees import fitted_trees

        right = fitted_trees(right_rows, right_labels, names=names)
        main = fitted_trees(main_rows, main_labels, names=names)
    else:
        right = fitted(right_rows, right_labels, c=c, names=names)
        main = fitted(main_rows, main_labels, c=c, names=names)
    return Weigher(right=right, main=main, facets=facets, about=about or {})


def never(names: Sequence[str]) -> Model:
    """A model whose probability is about 0 whatever it reads."""
    zeros = tuple(0.0 for _ in names)
    return Model(tuple(names), zeros, -50.0, zeros, tuple(1.0 for _ in names))


def index_of(
    papers: Sequence[IndexPaper], first: Weigher, *, about: dict[str, Any]
) -> NeighbourIndex:
    """The neighbour index of ``papers``: their vectors, and as their tags every topic
    candidate the first stage scores FIRST_STAGE_AT or more."""
    tags = []
    for paper in papers:
        scores = first.right.scores([f for _, f in paper.topics])
        tags.append(
            {
                area: round(score, 4)
                for (area, _), score in zip(paper.topics, scores, strict=True)
                if score >= FIRST_STAGE_AT
            }
        )
    rows = [(p.id, p.title, p.abstract, p.vector) for p in papers]
    return NeighbourIndex.build(rows, tags, about=about)


def judged_index_of(judged: Sequence[JudgedPaper], *, about: dict[str, Any]) -> NeighbourIndex:
    """The index of judged papers: their vectors, and as their tags the areas their readers
    wrote down (1) and those they found acceptable (0.5)."""
    tags = [
        {a: 0.5 for a in item.judgment.acceptable} | {a: 1.0 for a in item.judgment.areas}
        for item in judged
    ]
    rows = [(i.paper.id, i.paper.title, i.paper.abstract, i.reading.vector) for i in judged]
    return NeighbourIndex.build(rows, tags, about=about)


def second_stage(
    judged: Sequence[JudgedPaper],
    indexes: Mapping[str, tuple[NeighbourIndex, int]],
    chances: Sequence[Mapping[str, float]] | None,
    taxonomy: Taxonomy,
    config: TaggerConfig,
) -> list[Proposal]:
    """Each judged paper's candidates with its neighbours in ``indexes`` (kind -> index and how
    many neighbours are read) voting, and the area model's probabilities (``chances``, one
    mapping a paper, from a model that never saw it: fitting.areas.out_of_fold); proposed as
    tagging proposes them."""
    readings = [item.reading for item in judged]
    codes = [reading.code for reading in readings]
    keys = [reading.key for reading in readings]
    return [
        propose_paper(reading, votes, taxonomy, config)
        for reading, votes in zip(
            readings, votes_of(codes, keys, indexes, chances, taxonomy), strict=True
        )
    ]


def tagged(
    proposal: Proposal, weigher: Weigher | Weighed, taxonomy: Taxonomy, config: TaggerConfig
) -> TaggedPaper:
    """The paper of a proposal, its candidates listed as tagging lists them
    (tagging.listing.list_tags); without keyphrases and provenance, which no measure reads."""
    tags, facets = list_tags(proposal, weigher, taxonomy, config)
    return TaggedPaper(
        paper=proposal.reading.paper, keyphrases=[], tags=tags, facets=facets, provenance=PROVENANCE
    )


def candidate_recall(
    judged: Sequence[JudgedPaper], found: Sequence[list[AreaCandidate]], taxonomy: Taxonomy
) -> tuple[float, float]:
    """The share of judged areas that are candidates at all (the area or one below it), and
    the same with an ancestor counting (lenient)."""
    areas = strict = lenient = 0
    for item, candidates in zip(judged, found, strict=True):
        proposed = {c.area for c in candidates}
        for area in item.judgment.areas:
            areas += 1
            below = taxonomy.descendants(area) & proposed
            strict += bool(below)
            lenient += bool(below) or any(a in proposed for a in taxonomy.path(area))
    return strict / max(areas, 1), lenient / max(areas, 1)


def bare_tag(area: str, score: float, taxonomy: Taxonomy) -> AreaTag:
    """A tag of ``area`` with no evidence: what the measures read of a listed tag."""
    return AreaTag(
        id=area,
        name=area,
        path=taxonomy.path(area),
        score=score,
        evidence=[],
        crosswalk=taxonomy.crosswalk(area),
    )


FIRST_NAMES = RULE_FEATURES
SECOND_NAMES = WEIGHER_FEATURES
PROVENANCE = Provenance(
    tagger_version="-",
    taxonomy_version="-",
    taxonomy_sha256="-",
    embedding_model="-",
    spacy_model="-",
)
