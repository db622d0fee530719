"""From a paper's words to candidate areas, each with the features the weigher reads.

Rules propose. Every area one of whose rules fired, or one of its sub-areas' rules, is a
candidate, and its hits are its evidence. Each hit is weighed by what fired (an alias counts more
than a cue), where (the title and the first sentence count more; a related-work clause counts
less), whether it lies inside a top-ranked keyphrase, and how often the same rule already fired
(the second mention adds half, the third a third); overlapping hits count once. An area's evidence
is its own hits, plus its best sub-area's evidence and half of each other sub-area's.

Neighbours propose too (tagging.neighbours): the areas a paper's nearest shipped and judged
papers are tagged with are candidates even where no rule fired (their evidence is then nil), and
every candidate is told how much of its neighbours' similarity agrees with it. And every value
of a facet (the contribution types) is a candidate of every paper: every paper is of some kind.

The learned part weighs (tagging.weigher): it reads each candidate as a few features (how much
evidence, of what kind, where: title, first sentence, related work, lists of examples,
evaluation; how close the paper's embedding is to the area's description; what the neighbours
say; how the candidate compares with the others) and gives the probability that the tag is
right, its ``score``, and how much the paper is mainly about the area; tagging.listing says
which candidates are listed, and in what order.

Facets (a root marked ``facet``, such as the contribution type) are weighed apart from the
topics and by their own model: a paper's ``facets`` say what kind of paper it is (theory,
dataset, ...), its ``tags`` what it is about.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ..config import TaggerConfig
from ..language.context import Context
from ..language.spans import DisjointSpans, SpanIndex
from ..language.text import Analysis
from ..records import Evidence
from ..taxonomy.model import Taxonomy
from ..taxonomy.rules import Hit
from .reading import Reading
from .votes import NO_VOTES, Votes

# An area no rule can find (Taxonomy.described_only) is a candidate of the papers it is among
# the DESCRIBED nearest areas of, by description: a taxonomy of names and descriptions alone
# tags every paper (its likeliest listed), and the weigher reads how near each is.
DESCRIBED = 3


@dataclass
class AreaCandidate:
    """A candidate area of a paper, with its evidence and what the weigher reads."""

    area: str
    hits: list[int]  # the paper's hits that are evidence for it: its own and its sub-areas'
    own: float  # the evidence of its own rules
    total: float  # own evidence, the best sub-area's, and child_decay of each other's
    features: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Group:
    """A paper's candidates of one kind: its topics (``facet`` None) or one facet's values,
    with the hits they rest on and the weight of each."""

    facet: str | None
    hits: list[Hit]
    weights: list[float]
    candidates: list[AreaCandidate]


@dataclass(frozen=True, eq=False)
class Proposal:
    """A paper's candidate areas, topics and each facet's values apart, each with the features
    the weigher reads; what listing lists, and a fit fits the weigher to."""

    reading: Reading
    votes: Votes
    groups: tuple[Group, ...]

    @property
    def candidates(self) -> list[AreaCandidate]:
        """Every candidate, topics first, then each facet's values."""
        return [candidate for group in self.groups for candidate in group.candidates]


def propose_paper(
    reading: Reading, votes: Votes, taxonomy: Taxonomy, config: TaggerConfig
) -> Proposal:
    """Every candidate area of a read paper, with ``votes`` its neighbours' and the area
    model's: its hits grouped by what they are evidence of (:func:`groups`), each group
    proposed on its own (:func:`propose`); a facet's values are each a candidate, and read the
    area model's votes alone."""
    found = []
    for facet, hits in groups(reading.hits, taxonomy).items():
        candidates, weights = propose(
            hits,
            reading.analysis,
            taxonomy,
            n_keyphrases=len(reading.keyphrases),
            config=config,
            similarity=reading.similarity,
            votes=votes if facet is None else votes.learned(),
            always=taxonomy.children[facet] if facet is not None else (),
        )
        found.append(Group(facet, hits, weights, candidates))
    return Proposal(reading, votes, tuple(found))


def groups(hits: list[Hit], taxonomy: Taxonomy) -> dict[str | None, list[Hit]]:
    """A paper's hits by what they are evidence of (:func:`by_facet`), with a group, perhaps
    empty, for the topics and for every facet: a paper is about something and of some kind
    whether or not a rule fired."""
    found = by_facet(hits, taxonomy)
    facets = [root for root in taxonomy.roots if taxonomy.by_id[root].facet]
    return {key: found.get(key, []) for key in [None, *facets]}


def propose(
    hits: list[Hit],
    analysis: Analysis,
    taxonomy: Taxonomy,
    *,
    n_keyphrases: int,
    config: TaggerConfig,
    similarity: Mapping[str, float] | None = None,
    votes: Votes = NO_VOTES,
    always: Iterable[str] = (),
) -> tuple[list[AreaCandidate], list[float]]:
    """Every candidate area of one paper with its features, and the weight of each hit: the
    areas rules fired on and those above them, the areas the paper's neighbours propose
    (``votes``), the DESCRIBED areas no rule can find (Taxonomy.described_only) whose
    descriptions are nearest the paper, and the areas in ``always`` (a facet's values: every
    paper is of some kind)."""
    context = Context(analysis)
    weights = _weigh(hits, analysis, n_keyphrases, config, context)
    by_area: dict[str, list[int]] = defaultdict(list)  # own and descendants' hits
    for index, hit in enumerate(hits):
        for ancestor in taxonomy.path(hit.area):
            by_area[ancestor].append(index)

    own_raw: dict[str, float] = {}
    for area_id, indices in by_area.items():
        below: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i in indices:
            if hits[i].area != area_id:
                below[hits[i].field].append((hits[i].start, hits[i].end))
        taken = {field: SpanIndex(spans) for field, spans in below.items()}
        # an area's own hit on words a sub-area's rule also matched is the sub-area's evidence
        own = [
            i
            for i in indices
            if hits[i].area == area_id
            and not (
                hits[i].field in taken and taken[hits[i].field].overlaps(hits[i].start, hits[i].end)
            )
        ]
        own_raw[area_id] = _evidence_sum(hits, weights, _count_once(hits, weights, own))

    raw: dict[str, float] = {}

    def total(area_id: str) -> float:
        """Own evidence, plus the best sub-area's, plus ``child_decay`` times each other's."""
        if area_id not in raw:
            children = sorted(
                (total(c) for c in taxonomy.children[area_id] if c in by_area), reverse=True
            )
            raw[area_id] = own_raw[area_id] + sum(
                value * (1.0 if rank == 0 else config.child_decay)
                for rank, value in enumerate(children)
            )
        return raw[area_id]

    found = [AreaCandidate(a, indices, own_raw[a], total(a)) for a, indices in by_area.items()]
    # a facet's candidates are its values (``always``): the topics the votes find likely are
    # the topic group's candidates, never a facet's (they were listed as types once)
    proposed = votes.proposed() & set(always) if always else votes.proposed()
    if not always and similarity:  # areas no rule can find: the nearest by description
        proposed |= set(
            sorted(taxonomy.described_only, key=lambda a: (-similarity[a], a))[:DESCRIBED]
        )
    more = [*sorted(proposed - set(by_area)), *(a for a in always if a not in by_area)]
    found += [AreaCandidate(a, [], 0.0, 0.0) for a in dict.fromkeys(more)]
    totals = {c.area: c.total for c in found}
    roots = {c.area: c.total for c in found if taxonomy.by_id[c.area].parent is None}
    similarity = similarity or {}
    best_similarity = max((similarity.get(c.area, 0.0) for c in found), default=0.0)
    for candidate in found:
        features = _features(candidate, hits, weights, context, taxonomy, n_keyphrases, totals)
        features["similarity"] = similarity.get(candidate.area, 0.0)
        features["similarity_gap"] = features["similarity"] - best_similarity
        root = taxonomy.path(candidate.area)[0]
        features["root_share"] = roots.get(root, 0.0) / (sum(roots.values()) or 1.0)
        features.update(votes.features(candidate.area))
        features.update(_facet_features(candidate, found, taxonomy))
        candidate.features = features
    return found, weights


def _facet_features(
    candidate: AreaCandidate, found: list[AreaCandidate], taxonomy: Taxonomy
) -> dict[str, float]:
    """For a facet's value (type.theory): its share of the evidence for the facet's values, and
    the most any other value has; what tells a theory paper from a method paper that also says
    "we propose". Zero for a topic."""
    if taxonomy.facet(candidate.area) is None or taxonomy.by_id[candidate.area].parent is None:
        return {"facet_share": 0.0, "facet_other": 0.0}
    root = taxonomy.path(candidate.area)[0]
    values = [c for c in found if c.area != root and taxonomy.path(c.area)[0] == root]
    total = sum(c.total for c in values)
    other = max((c.total for c in values if c.area != candidate.area), default=0.0)
    return {
        "facet_share": candidate.total / total if total else 0.0,
        "facet_other": math.log1p(other),
    }


def by_facet(hits: list[Hit], taxonomy: Taxonomy) -> dict[str | None, list[Hit]]:
    """A paper's hits grouped by what they are evidence of: topics (None), or each facet (its
    root's id). Each group is weighed on its own: a contribution type never competes with a
    topic."""
    groups: dict[str | None, list[Hit]] = defaultdict(list)
    for hit in hits:
        groups[taxonomy.facet(hit.area)].append(hit)
    return groups


def _features(
    candidate: AreaCandidate,
    hits: list[Hit],
    weights: list[float],
    context: Context,
    taxonomy: Taxonomy,
    n_keyphrases: int,
    totals: Mapping[str, float],
) -> dict[str, float]:
    """What the weigher reads about one candidate's evidence (weigher.RULE_FEATURES says what each
    is); the similarities, the root's share and the neighbours' votes are added by the
    caller. A candidate no rule fired on has no evidence: zeros."""
    kept = _count_once(hits, weights, candidate.hits)
    mass = sum(weights[i] for i in kept) or 1.0

    def share(where: Callable[[Hit], bool]) -> float:
        return sum(weights[i] for i in kept if where(hits[i])) / mass

    ranks = [hits[i].keyphrase_rank for i in kept if hits[i].keyphrase_rank is not None]
    in_abstract = [hits[i] for i in kept if hits[i].field == "abstract"]
    parent = taxonomy.by_id[candidate.area].parent
    siblings = [a for a in totals if taxonomy.by_id[a].parent == parent and a != candidate.area]
    return {
        "evidence": math.log1p(candidate.total),
        "own": math.log1p(candidate.own),
        "from_below": 1.0 - min(candidate.own / candidate.total, 1.0) if candidate.total else 0.0,
        "hits": math.log1p(len(kept)),
        "rules": math.log1p(len({(hits[i].area, hits[i].rule) for i in kept})),
        "title": float(any(hits[i].field == "title" for i in kept)),
        "first_sentence": float(any(hit.sentence == 0 for hit in in_abstract)),
        "strong": float(any(hits[i].kind in ("alias", "acronym", "pattern") for i in kept)),
        "strong_title": float(
            any(hits[i].field == "title" and hits[i].kind != "cue" for i in kept)
        ),
        "keyphrase": 1.0 - min(ranks) / n_keyphrases if ranks and n_keyphrases else 0.0,
        "related_work": share(context.in_related_work),
        "examples": share(context.in_examples),
        "evaluation": share(context.in_evaluation),
        "spread": len({hit.sentence for hit in in_abstract}) / context.sentences,
        "earliest": 1.0
        - min((hit.start for hit in in_abstract), default=context.length) / context.length,
        "relative": candidate.total / (max(totals.values(), default=0.0) or 1.0),
        "sibling_rank": 1.0 / (1 + sum(totals[a] > candidate.total for a in siblings)),
        "depth": float(len(taxonomy.path(candidate.area)) - 1),
        "leaf": float(not taxonomy.children[candidate.area]),
    }


def _decayed(hits: list[Hit], weights: list[float], kept: list[int]) -> Iterator[tuple[int, float]]:
    """Each kept hit with its weight, the k-th hit of the same rule counting 1/k."""
    seen: dict[str, int] = defaultdict(int)
    for index in kept:
        seen[hits[index].rule] += 1
        yield index, weights[index] / seen[hits[index].rule]


def _evidence_sum(hits: list[Hit], weights: list[float], kept: list[int]) -> float:
    return sum(weight for _, weight in _decayed(hits, weights, kept))


def evidence(group: Group, indices: list[int], analysis: Analysis) -> list[Evidence]:
    """The evidence of a candidate of ``group`` (its hits, ``indices``), its sub-areas'
    included, overlapping hits shown once, in text order."""
    hits, weights = group.hits, group.weights
    return [
        Evidence(
            area=hits[i].area,
            kind=hits[i].kind,
            rule=hits[i].rule,
            text=analysis.text(hits[i]),
            field=hits[i].field,
            start=hits[i].start,
            end=hits[i].end,
            weight=round(weight, 3),
            keyphrase=hits[i].keyphrase,
        )
        for i, weight in _decayed(hits, weights, _count_once(hits, weights, indices))
    ]


def _weigh(
    hits: list[Hit], analysis: Analysis, n_keyphrases: int, config: TaggerConfig, context: Context
) -> list[float]:
    weights = []
    for hit in hits:
        weight = config.kind_weight(hit.kind)
        if hit.field == "title":
            weight *= config.title_factor
        elif hit.sentence == 0:
            weight *= config.first_sentence_factor
        elif context.in_related_work(hit):
            weight *= config.related_work_factor
        if hit.keyphrase_rank is not None and n_keyphrases:
            weight *= 1.0 + config.keyphrase_bonus * (1.0 - hit.keyphrase_rank / n_keyphrases)
        weights.append(weight)
    return weights


def _count_once(hits: list[Hit], weights: list[float], indices: list[int]) -> list[int]:
    """Of hits that overlap, keep the heaviest (then the longest); in text order."""
    kept: list[int] = []
    spans: dict[str, DisjointSpans] = defaultdict(DisjointSpans)
    order = sorted(indices, key=lambda i: (-weights[i], -(hits[i].end - hits[i].start), i))
    for index in order:
        hit = hits[index]
        if not spans[hit.field].overlaps(hit.start, hit.end):
            spans[hit.field].add(hit.start, hit.end)
            kept.append(index)
    kept.sort(key=lambda i: (hits[i].field != "title", hits[i].start, i))
    return kept
