"""Which of a paper's candidate areas are listed as its tags, and in what order, once the weigher
has scored them (tagging.proposing proposes them): :func:`list_tags`, the one path from a paper's
candidates to its tags."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..config import TaggerConfig
from ..records import AreaTag
from ..taxonomy.model import Taxonomy
from .proposing import AreaCandidate, Proposal, evidence
from .weigher import Weighed, Weigher, Weighing


def weighed(proposals: Sequence[Proposal], weigher: Weigher | Weighing | Weighed) -> Weighed:
    """The weigher's scores of every topic candidate of ``proposals``, made at once: list each
    proposal's tags with it (:func:`list_tags`), for the same tags faster."""
    if isinstance(weigher, Weighed):
        weigher = weigher.weigher
    topics = [
        candidate
        for proposal in proposals
        for group in proposal.groups
        if group.facet is None
        for candidate in group.candidates
    ]
    return Weighed(weigher, topics)


def list_tags(
    proposal: Proposal,
    weigher: Weigher | Weighing | Weighed,
    taxonomy: Taxonomy,
    config: TaggerConfig,
) -> tuple[list[AreaTag], list[AreaTag]]:
    """A paper's topic tags and facet tags: its candidates scored by the weigher and listed by
    :func:`select` and :func:`select_facet`, the facets the ``max_tags`` likeliest of every
    facet's together; a topic tag the paper's neighbours support names them. What tagging,
    retagging and a fit's held-out figures list, alike."""
    tags: list[AreaTag] = []
    facets: list[AreaTag] = []
    for group in proposal.groups:
        topics = group.facet is None
        chosen = (
            select(group.candidates, weigher, taxonomy, config)
            if topics
            else select_facet(group.candidates, weigher, taxonomy, config)
        )
        by_area = {c.area: c for c in group.candidates}
        for area_id, right in chosen:
            area = taxonomy.by_id[area_id]
            (tags if topics else facets).append(
                AreaTag(
                    id=area_id,
                    name=area.name,
                    path=taxonomy.path(area_id),
                    score=round(right, 4),
                    evidence=evidence(group, by_area[area_id].hits, proposal.reading.analysis),
                    crosswalk=taxonomy.crosswalk(area_id),
                    neighbours=proposal.votes.supporting(area_id) if topics else [],
                )
            )
    facets.sort(key=lambda tag: (-tag.score, tag.id))
    return tags, facets[: config.max_tags]


def select(
    found: list[AreaCandidate],
    weigher: Weigher | Weighing | Weighed,
    taxonomy: Taxonomy,
    config: TaggerConfig,
) -> list[tuple[str, float]]:
    """The topic tags to list, (area, score), the paper's main area first.

    Each candidate's score (the weigher's probability that the tag is right) does not depend on
    the threshold, nor does which candidates may be listed: a parent or a catch-all area is not
    when an area below it (or, for a catch-all, beside it) scores ``specific_at`` or more, since
    that area says it better. Of the others, those scoring ``min_score`` or more are listed, the
    ``max_tags`` best at most, and the ``min_tags`` likeliest at least. A root steps aside for
    the likeliest area below it (:func:`_stepping_aside`). So a lower ``min_score`` lists
    the same tags with the same scores, and more. They come in the order of the weigher's
    ``main`` model (what the paper is mainly about first), an area before the areas above it."""
    areas = [c.area for c in found]
    rights, mains = weigher.weigh(found)
    right = dict(zip(areas, rights, strict=True))
    main = dict(zip(areas, mains, strict=True))
    listable = [a for a in right if not _stood_in_for(a, right, taxonomy, config.specific_at)]
    best = sorted(listable, key=lambda a: (-right[a], a))
    kept = [a for a in best if right[a] >= config.min_score][: config.max_tags]
    kept = best[: max(len(kept), min(config.min_tags, config.max_tags, len(best)))]

    def in_main_order(area: str) -> tuple:  # what the paper is mainly about first
        return (-main[area], -len(taxonomy.path(area)), area)

    mainly = min(listable, key=in_main_order) if listable else None
    below = _stepping_aside(kept, listable, right, mainly, taxonomy, config.step_aside_at)
    if below is not None:  # in the place of the least likely tag if max_tags are listed
        kept = (
            [*kept[: config.max_tags - 1], below]
            if len(kept) >= config.max_tags
            else [*kept, below]
        )

    ordered = sorted(kept, key=in_main_order)
    listed: list[str] = []

    def emit(area: str) -> None:  # an area's listed sub-areas (in main order) just before it
        for below in ordered:
            if below != area and below not in listed and area in taxonomy.path(below):
                emit(below)
        if area not in listed:
            listed.append(area)

    for area in ordered:  # main first
        emit(area)
    return [(area, right[area]) for area in listed]


def select_facet(
    found: list[AreaCandidate],
    weigher: Weigher | Weighing | Weighed,
    taxonomy: Taxonomy,
    config: TaggerConfig,
) -> list[tuple[str, float]]:
    """The facet tags to list, (area, score), best first: the facet's values (never its root)
    the weigher's facet model scores at ``min_score`` or more, at most ``max_tags``. Unlike
    topics, no value is listed below ``min_score``: a paper's kind is said only when it is
    likely (measured: a forced likeliest type cost more precision than it gave recall)."""
    scored = [
        (c.area, weigher.facet(c.area, c.features)) for c in found if taxonomy.by_id[c.area].parent
    ]
    best = sorted(scored, key=lambda pair: (-pair[1], pair[0]))
    return [pair for pair in best if pair[1] >= config.min_score][: config.max_tags]


def _stepping_aside(
    kept: list[str],
    listable: list[str],
    right: Mapping[str, float],
    mainly: str | None,
    taxonomy: Taxonomy,
    at: float,
) -> str | None:
    """The area to list before the root of what the paper is mainly about, or None. ``mainly``
    is what the paper is mainly about (the listable area the ``main`` model puts first); when
    that area's root (``llm``, ``rl``) is listed, and the likeliest listable area below the root
    scores ``at`` or more, that area is listed too, and leads (the specific area a reader names;
    the root stays listed, since what it says is still right). Measured held out (3,900 judged
    papers, docs/learned-reader.md), asking also that the text name the area put the root first
    more often (0.032 of papers against 0.025) for no precision. Neither choice depends on
    ``min_score``, so a lower threshold still lists a superset. ``at`` 1 turns it off, even for
    an area that scores exactly 1."""
    if mainly is None or at >= 1:
        return None
    root = taxonomy.path(mainly)[0]
    if root not in kept:
        return None
    below = [a for a in listable if a != root and taxonomy.path(a)[0] == root]
    if not below:
        return None
    likeliest = max(below, key=lambda a: (right[a], a))
    if likeliest in kept or right[likeliest] < at:
        return None
    return likeliest


def _stood_in_for(
    area: str, right: Mapping[str, float], taxonomy: Taxonomy, specific_at: float
) -> bool:
    """Whether a more specific area says what ``area`` would: one below it, or, for a catch-all
    (fallback) area, one beside it or below a sibling, scores ``specific_at`` or more."""
    below = taxonomy.descendants(area) - {area}
    if any(b in right and right[b] >= specific_at for b in below):
        return True
    parent = taxonomy.by_id[area].parent
    if not taxonomy.by_id[area].fallback or parent is None:
        return False
    beside = taxonomy.descendants(parent) - taxonomy.descendants(area) - {parent}
    return any(b in right and right[b] >= specific_at for b in beside)
