"""Which of a paper's candidate areas are listed as its tags, and in what order, once the weigher
has scored them (tagging.proposing proposes them)."""

from __future__ import annotations

from collections.abc import Mapping

from ..config import TaggerConfig
from ..language.text import Analysis
from ..records import AreaTag
from ..taxonomy.model import Taxonomy
from ..taxonomy.rules import Hit
from .proposing import Candidate, _evidence, by_facet, propose
from .weigher import Weigher


def score_hits(
    hits: list[Hit],
    analysis: Analysis,
    taxonomy: Taxonomy,
    *,
    n_keyphrases: int,
    config: TaggerConfig,
    weigher: Weigher,
    similarity: Mapping[str, float] | None = None,
) -> tuple[list[AreaTag], list[AreaTag]]:
    """A paper's topic tags and facet tags, each scored by the weigher, those at ``min_score``
    or more: topics with parents only when they have evidence of their own, mainly-about first;
    facets best first; at most ``max_tags`` of each."""
    tags: list[AreaTag] = []
    facets: list[AreaTag] = []
    for facet, group in by_facet(hits, taxonomy).items():
        found, weights = propose(
            group,
            analysis,
            taxonomy,
            n_keyphrases=n_keyphrases,
            config=config,
            similarity=similarity,
        )
        by_area = {c.area: c for c in found}
        chosen = (
            select(found, weigher, taxonomy, config)
            if facet is None
            else select_facet(found, weigher, taxonomy, config)
        )
        for area_id, right in chosen:
            candidate, area = by_area[area_id], taxonomy.by_id[area_id]
            (tags if facet is None else facets).append(
                AreaTag(
                    id=area_id,
                    name=area.name,
                    path=taxonomy.path(area_id),
                    score=round(right, 4),
                    evidence=_evidence(group, weights, candidate.hits, analysis),
                    crosswalk=taxonomy.crosswalk(area_id),
                )
            )
    facets.sort(key=lambda tag: (-tag.score, tag.id))
    return tags, facets[: config.max_tags]


def select(
    found: list[Candidate], weigher: Weigher, taxonomy: Taxonomy, config: TaggerConfig
) -> list[tuple[str, float]]:
    """The topic tags to list, (area, score) in order: the candidates the weigher scores at
    ``min_score`` or more, parents only with evidence of their own or no sub-area listed,
    mainly-about first, at most ``max_tags``."""
    scored = {c.area: (weigher.right(c.features), weigher.main(c.features), c) for c in found}
    kept = {area for area, (right, _, _) in scored.items() if right >= config.min_score}
    kept -= {area for area in kept if _stood_in_for(area, kept, taxonomy)}
    listed = [
        area
        for area in kept
        if scored[area][2].own > 0 or not (taxonomy.descendants(area) - {area}) & kept
    ]
    listed.sort(key=lambda a: (-scored[a][1], -len(taxonomy.path(a)), a))
    return [(area, scored[area][0]) for area in listed[: config.max_tags]]


def select_facet(
    found: list[Candidate], weigher: Weigher, taxonomy: Taxonomy, config: TaggerConfig
) -> list[tuple[str, float]]:
    """The facet tags to list, (area, score), best first: the facet's values (never its root)
    the weigher's facet model scores at ``min_score`` or more."""
    scored = [
        (c.area, weigher.facet(c.area, c.features)) for c in found if taxonomy.by_id[c.area].parent
    ]
    kept = [(area, score) for area, score in scored if score >= config.min_score]
    return sorted(kept, key=lambda pair: (-pair[1], pair[0]))[: config.max_tags]


def _stood_in_for(area: str, kept: set[str], taxonomy: Taxonomy) -> bool:
    """Whether ``area`` is a fallback sub-area and a sibling (or one below it) is kept."""
    parent = taxonomy.by_id[area].parent
    if not taxonomy.by_id[area].fallback or parent is None:
        return False
    return any(a != area and parent in taxonomy.path(a)[:-1] for a in kept)
