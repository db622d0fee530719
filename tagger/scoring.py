"""From rule hits to area tags: how central is each area to the paper?

Each hit is weighed by what fired (an alias counts more than a cue), where (the title and the
first sentence count more; a related-work clause counts less), whether it lies inside a top-ranked
keyphrase, and how often the same rule already fired (the second mention adds half, the third a
third). An area's evidence is its own hits and its descendants' (a parent is tagged when a child
is); overlapping hits are counted once. The score ``1 - exp(-sum / saturation)`` lies in [0, 1):
one passing mention scores low, several central hits approach 1. A parent counts its own hits, its
best sub-area's evidence, and half of each other sub-area's: a tag's score says how central that
area is, and a sub-area that carries all of its parent's evidence ties with it (and is listed
first, its crosswalk being the more precise).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator

from .config import TaggerConfig
from .matching import DisjointSpans, Hit, SpanIndex
from .records import AreaTag, Evidence
from .taxonomy import Taxonomy
from .text import Analysis

# Sentences that talk about other work or set up a contrast: evidence there counts for less.
_RELATED_WORK = re.compile(
    r"^(?:unlike|while|although|though|whereas|despite|existing|previous|prior|recent|traditional|"
    r"conventional|inspired)\b|\b(?:prior|previous|existing|related|recent) (?:work|works|studies|"
    r"methods|approaches)\b|\binspired by\b",
    re.IGNORECASE,
)


def score_hits(
    hits: list[Hit],
    analysis: Analysis,
    taxonomy: Taxonomy,
    *,
    n_keyphrases: int,
    config: TaggerConfig,
) -> list[AreaTag]:
    """Area tags of one paper, best first, at most ``max_tags``, none under ``min_score``."""
    if not hits:
        return []
    weights = _weigh(hits, analysis, n_keyphrases, config)
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

    tags: list[AreaTag] = []
    for area_id, indices in by_area.items():
        score = round(1.0 - math.exp(-total(area_id) / config.saturation), 4)
        if score < config.min_score:
            continue
        area = taxonomy.by_id[area_id]
        tags.append(
            AreaTag(
                id=area_id,
                name=area.name,
                path=taxonomy.path(area_id),
                score=score,
                evidence=_evidence(hits, weights, indices, analysis),
                crosswalk=taxonomy.crosswalk(area_id),
            )
        )
    # on a tie, the more specific area first: its crosswalk is the more precise
    tags.sort(key=lambda tag: (-tag.score, -len(tag.path), tag.id))
    return tags[: config.max_tags]


def _decayed(hits: list[Hit], weights: list[float], kept: list[int]) -> Iterator[tuple[int, float]]:
    """Each kept hit with its weight, the k-th hit of the same rule counting 1/k."""
    seen: dict[str, int] = defaultdict(int)
    for index in kept:
        seen[hits[index].rule] += 1
        yield index, weights[index] / seen[hits[index].rule]


def _evidence_sum(hits: list[Hit], weights: list[float], kept: list[int]) -> float:
    return sum(weight for _, weight in _decayed(hits, weights, kept))


def _evidence(
    hits: list[Hit], weights: list[float], indices: list[int], analysis: Analysis
) -> list[Evidence]:
    """An area's evidence, its sub-areas' included, overlapping hits shown once, in text order."""
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
    hits: list[Hit], analysis: Analysis, n_keyphrases: int, config: TaggerConfig
) -> list[float]:
    related = _related_work_sentences(analysis)
    weights = []
    for hit in hits:
        weight = config.kind_weight(hit.kind)
        if hit.field == "title":
            weight *= config.title_factor
        elif hit.sentence == 0:
            weight *= config.first_sentence_factor
        elif hit.sentence in related:
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


def _related_work_sentences(analysis: Analysis) -> set[int]:
    sentences: dict[int, list[str]] = defaultdict(list)
    for word in analysis.words:
        if word.field == "abstract":
            sentences[word.sentence].append(word.text)
    return {
        index
        for index, words in sentences.items()
        if index > 0 and _RELATED_WORK.search(" ".join(words))
    }
