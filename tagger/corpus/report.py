"""One self-contained HTML page about a tagged corpus: papers per area and contribution type (the
tree), how often top-level areas meet, the top keyphrases of each area, and a searchable list of
the papers with their evidence highlighted. The page needs no network: its data, styles and script
are inline."""

from __future__ import annotations

import html
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import Any

from ..records import AreaTag, TaggedPaper
from ..taxonomy.model import Taxonomy
from .stats import corpus_stats

TEMPLATE = "report.html"
DATA_MARKER = "__TAGGER_REPORT_DATA__"
TITLE_MARKER = "__TAGGER_REPORT_TITLE__"
FIELDS = {"title": 0, "abstract": 1}


def build_report(
    records: Iterable[TaggedPaper], taxonomy: Taxonomy, *, source: str = "", top_keyphrases: int = 8
) -> dict[str, Any]:
    """The page's data from tagged records, in one pass."""
    papers: list[dict[str, Any]] = []
    phrase_df: Counter[str] = Counter()  # papers with the (normalised) keyphrase
    phrase_in_area: dict[str, Counter[str]] = defaultdict(Counter)
    surface: dict[str, Counter[str]] = defaultdict(Counter)  # how each phrase is written
    versions: Counter[tuple[str, str]] = Counter()

    def compact(stream: Iterable[TaggedPaper]) -> Iterator[TaggedPaper]:
        for record in stream:
            yield record
            paper, tags = record.paper, record.tags
            areas = _area_scores(tags + record.facets, taxonomy)
            phrases = {kp.normalized or kp.text: kp.text for kp in record.keyphrases if kp.text}
            for normalized, text in phrases.items():
                phrase_df[normalized] += 1
                surface[normalized][text] += 1
                for area in areas:
                    phrase_in_area[area][normalized] += 1
            versions[(record.provenance.tagger_version, record.provenance.taxonomy_version)] += 1
            papers.append(
                {
                    "id": paper.id,
                    "title": paper.title or "",
                    "abstract": paper.abstract,
                    "venue": paper.venue or "",
                    "year": paper.year,
                    "tags": [[tag.id, tag.score] for tag in tags if tag.id in taxonomy.by_id],
                    "types": [
                        [tag.id, tag.score] for tag in record.facets if tag.id in taxonomy.by_id
                    ],
                    "areas": areas,
                    "keyphrases": list(phrases.values())[:10],
                    "evidence": _evidence(tags, taxonomy),
                }
            )

    stats = corpus_stats(compact(records), taxonomy)
    total = stats.papers
    shown = [(depth, area) for depth, area in taxonomy.walk() if stats.areas[area.id]]
    roots = [area.id for depth, area in shown if depth == 0 and not area.facet]
    matrix = [
        [stats.areas[a] if a == b else stats.pairs[tuple(sorted((a, b)))] for b in roots]
        for a in roots
    ]
    keyphrases = {}
    for _, area in shown:
        counts = phrase_in_area.get(area.id, Counter())
        ranked = sorted(
            ((n * math.log(1 + total / phrase_df[p]), p, n) for p, n in counts.items() if n >= 2),
            key=lambda t: (-t[0], t[1]),
        )
        if ranked:
            keyphrases[area.id] = [
                [surface[p].most_common(1)[0][0], n] for _, p, n in ranked[:top_keyphrases]
            ]
    (tagger_version, taxonomy_version), _ = (
        versions.most_common(1)[0] if versions else (("?", "?"), 0)
    )
    return {
        "source": source,
        "papers_total": total,
        "untagged": stats.untagged,
        "venues": dict(sorted(stats.venue_papers.items())),
        "tagger_version": tagger_version,
        "taxonomy_version": taxonomy_version,
        "areas": [
            {
                "id": area.id,
                "name": area.name,
                "parent": area.parent,
                "depth": depth,
                "papers": stats.areas[area.id],
            }
            for depth, area in shown
        ],
        "pairs": {"areas": roots, "matrix": matrix},
        "keyphrases": keyphrases,
        "papers": papers,
    }


def render_html(report: dict[str, Any], *, title: str = "Tagged papers") -> str:
    """The page itself: the template with the data inlined as JSON that no text can break out of."""
    import orjson

    template = resources.files("tagger").joinpath("data", TEMPLATE).read_text(encoding="utf-8")
    # '<' as \u003c: an abstract containing "</script>" or "<!--" stays data.
    data = orjson.dumps(report).decode().replace("<", "\\u003c")
    return template.replace(TITLE_MARKER, html.escape(title)).replace(DATA_MARKER, data)


def _area_scores(tags: list[AreaTag], taxonomy: Taxonomy) -> dict[str, float]:
    """Each area a paper belongs to (tags and their ancestors), with the best score that puts
    it there."""
    scores: dict[str, float] = {}
    for tag in tags:
        for area in tag.path:
            if area in taxonomy.by_id:
                scores[area] = max(scores.get(area, 0.0), tag.score)
    return scores


def _evidence(tags: list[AreaTag], taxonomy: Taxonomy) -> list[list[Any]]:
    """The distinct evidence spans of a paper's tags: [field, start, end, area, kind, rule]."""
    seen: dict[tuple, list[Any]] = {}
    for tag in tags:
        for hit in tag.evidence:
            key = (hit.field, hit.start, hit.end, hit.area)
            if key[3] in taxonomy.by_id and key not in seen:
                seen[key] = [FIELDS[hit.field], hit.start, hit.end, hit.area, hit.kind, hit.rule]
    return sorted(seen.values(), key=lambda e: (e[0], e[1], e[2]))
