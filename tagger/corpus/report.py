"""One self-contained HTML page about a tagged corpus: papers per area and contribution type (the
tree), how often top-level areas meet, the keyphrases characteristic of each area, and a
searchable list of the papers with their evidence highlighted, its score filter starting at the
run's ``min_score``. The page needs no network: its data, styles and script are inline.

An area's keyphrases are the ones that set its papers apart, not the corpus's commonest ("large
language models" is frequent among reinforcement-learning papers because it is frequent
everywhere). A phrase is listed for an area when it is in at least :data:`MIN_PAPERS` of the
area's papers, when most of the papers with it are in the area (rare elsewhere), and when it is at
least :data:`LIFT` times as common among the area's papers (as a share of them) as among the
others, one more paper counted among those, so that a phrase of 3 of 39 papers is not taken for
characteristic because the 11 others happen not to have it. Of those, the most frequent come
first. Ranking by the ratio alone would put phrases of two papers first; the ratio alone would let
a small area (RLHF papers under LLM alignment) list a phrase of a large one ("reinforcement
learning") that is merely more common there."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import Any

from ..config import TaggerConfig
from ..records import AreaTag, TaggedPaper
from ..taxonomy.model import Taxonomy
from .stats import corpus_stats

TEMPLATE = "report.html"
DATA_MARKER = "__TAGGER_REPORT_DATA__"
TITLE_MARKER = "__TAGGER_REPORT_TITLE__"
FIELDS = {"title": 0, "abstract": 1}
MIN_PAPERS = 2  # an area's keyphrase is in at least this many of its papers
LIFT = 2  # ... and at least this many times as common among them as among the others


def build_report(
    records: Iterable[TaggedPaper], taxonomy: Taxonomy, *, source: str = "", top_keyphrases: int = 8
) -> dict[str, Any]:
    """The page's data from tagged records, in one pass."""
    papers: list[dict[str, Any]] = []
    phrase_df: Counter[str] = Counter()  # papers with the (normalised) keyphrase
    phrase_in_area: dict[str, Counter[str]] = defaultdict(Counter)
    surface: dict[str, Counter[str]] = defaultdict(Counter)  # how each phrase is written
    versions: Counter[tuple[str, str]] = Counter()
    min_scores: set[float] = set()  # each run's --min-score, as its lines' provenance says
    default_min_score = TaggerConfig().min_score

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
            min_scores.add(record.provenance.settings.get("min_score", default_min_score))
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
        if area.facet:  # the facet's root ("Contribution type") holds nearly every paper
            continue
        inside = stats.areas[area.id]
        ranked = sorted(
            (-n, p, n, phrase_df[p] - n)
            for p, n in phrase_in_area.get(area.id, Counter()).items()
            if _characteristic(n, inside, phrase_df[p] - n, total - inside)
        )
        if ranked:
            keyphrases[area.id] = _chips(
                [(surface[p].most_common(1)[0][0], p, n, e) for _, p, n, e in ranked],
                top_keyphrases,
            )
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
        # the lowest of the runs' thresholds: the list starts by showing every tag a run kept
        "min_score": min(min_scores, default=default_min_score),
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


def render_html(
    report: dict[str, Any], *, title: str = "Tagged papers", template: str = TEMPLATE
) -> str:
    """The page itself: the template (a file of tagger/data/: this report's, or another page's
    such as corpus.review's) with the data inlined as JSON that no text can break out of."""
    import orjson

    page = resources.files("tagger").joinpath("data", template).read_text(encoding="utf-8")
    # '<' as \u003c: an abstract containing "</script>" or "<!--" stays data.
    data = orjson.dumps(report).decode().replace("<", "\\u003c")
    return page.replace(TITLE_MARKER, html.escape(title)).replace(DATA_MARKER, data)


def _chips(ranked: list[tuple[str, str, int, int]], top: int) -> list[list[Any]]:
    """An area's first ``top`` keyphrases as the page shows them: ``[text, papers in the area,
    papers elsewhere]``, and the phrase's meaning when two are written alike: "GRPO" where a paper
    spells it out ("group relative policy optimization") and "GRPO" where none does are two
    phrases, and the first gets its meaning so that no chip looks listed twice."""
    chips = [[text, n, elsewhere] for text, _, n, elsewhere in ranked[:top]]
    written = Counter(text.casefold() for text, *_ in chips)
    for chip, (text, normalized, _, _) in zip(chips, ranked, strict=False):
        if written[text.casefold()] > 1 and normalized != text.casefold():
            chip.append(normalized)
    return chips


def _characteristic(inside: int, area_papers: int, elsewhere: int, other_papers: int) -> bool:
    """Whether a phrase in ``inside`` of an area's papers and ``elsewhere`` of the other papers
    sets the area apart (see the module's docstring). With no other papers, none does."""
    return (
        inside >= MIN_PAPERS
        and inside > elsewhere
        and inside * (other_papers + 1) >= LIFT * (elsewhere + 1) * area_papers
    )


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
