"""How a tagged corpus splits across research areas: counts per area (and per venue), the most
frequent pairs of areas, and the papers with no tag."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations

from ..config import STATS_PAIRS
from ..io.display import printable
from ..records import TaggedPaper
from ..taxonomy.model import Taxonomy


@dataclass
class CorpusStats:
    papers: int = 0
    untagged: int = 0
    areas: Counter[str] = field(default_factory=Counter)  # papers tagged with the area or below
    by_venue: dict[str, Counter[str]] = field(default_factory=dict)
    venue_papers: Counter[str] = field(default_factory=Counter)
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)  # top-level areas together

    def as_dict(self, taxonomy: Taxonomy, *, top_pairs: int = STATS_PAIRS) -> dict:
        return {
            "papers": self.papers,
            "untagged": self.untagged,
            "areas": [
                {
                    "id": area.id,
                    "name": area.name,
                    "depth": depth,
                    "papers": self.areas[area.id],
                    "share": round(self.areas[area.id] / self.papers, 4) if self.papers else 0.0,
                    "by_venue": {v: c[area.id] for v, c in sorted(self.by_venue.items())},
                }
                for depth, area in taxonomy.walk()
                if self.areas[area.id]
            ],
            "venues": dict(sorted(self.venue_papers.items())),
            "pairs": [
                {"areas": list(pair), "papers": n} for pair, n in self.pairs.most_common(top_pairs)
            ],
        }


def corpus_stats(records: Iterable[TaggedPaper], taxonomy: Taxonomy) -> CorpusStats:
    """Count tagged records by area (contribution types too), venue and pair of top-level topic
    areas. Areas the taxonomy does not have (the file was tagged with another) are not
    counted; a paper with no topic tag is untagged, whatever its type."""
    stats = CorpusStats()
    for record in records:
        stats.papers += 1
        paper = record.paper
        venue = " ".join(str(part) for part in (paper.venue, paper.year) if part)
        venue = venue or "(no venue)"
        stats.venue_papers[venue] += 1
        areas = {area for tag in record.tags for area in tag.path if area in taxonomy.by_id}
        types = {area for tag in record.facets for area in tag.path if area in taxonomy.by_id}
        stats.areas.update(types)
        stats.by_venue.setdefault(venue, Counter()).update(types)
        if not areas:
            stats.untagged += 1
            continue
        stats.areas.update(areas)
        stats.by_venue[venue].update(areas)
        roots = sorted(area for area in areas if taxonomy.by_id[area].parent is None)
        stats.pairs.update(combinations(roots, 2))
    return stats


def render(stats: CorpusStats, taxonomy: Taxonomy, *, top_pairs: int = STATS_PAIRS) -> str:
    """The area tree with counts and shares, per venue when there are several; then pairs."""
    venues = sorted(stats.venue_papers) if len(stats.venue_papers) > 1 else []
    width = max((len("  " * d + a.id) for d, a in taxonomy.walk() if stats.areas[a.id]), default=4)
    header = f"{'area':<{width}}  {'papers':>7}  {'share':>6}" + "".join(
        f"  {printable(v)[:14]:>14}" for v in venues
    )
    lines = [f"{stats.papers:,} papers, {stats.untagged:,} with no tag", "", header]
    for depth, area in taxonomy.walk():
        count = stats.areas[area.id]
        if not count:
            continue
        share = count / stats.papers if stats.papers else 0.0
        row = f"{'  ' * depth + area.id:<{width}}  {count:>7,}  {share:>6.1%}"
        for venue in venues:
            per = stats.by_venue.get(venue, Counter())[area.id]
            row += f"  {per:>6,} {per / stats.venue_papers[venue]:>6.1%}"
        lines.append(row)
    if stats.pairs:
        lines += ["", "Most frequent pairs of top-level areas:"]
        lines += [f"  {a} + {b}: {n:,}" for (a, b), n in stats.pairs.most_common(top_pairs)]
    return "\n".join(lines) + "\n"
