"""Reviewing tagged papers by hand, in a browser: the papers in the order to review them (file
order, or least certain first: :func:`review_order`), each with its tags' evidence, the
taxonomy they are judged against, and the judgments file (corpus.judgments), whose every change
is written before the page says it is saved; the page is served on this machine only
(corpus.review_server).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import REVIEW_ORDER, REVIEW_PORT, TaggerConfig
from ..errors import STDIN_NAME, InputError, TaggerError
from ..io.files import check_outputs, is_stdio
from ..io.tagged import read_tagged_lines
from ..records import Evidence, TaggedPaper
from ..taxonomy.loading import load_taxonomy
from ..taxonomy.model import Taxonomy
from ..taxonomy.store import tagged_with
from .judged import TYPE_FACET
from .judgments import TYPES, JudgmentStore, review_tags
from .report import render_html
from .review_server import ReviewServer

ORDERS = ("uncertain", "file")
TEMPLATE = "review.html"
FACETS = {f"{TYPE_FACET}.{name}": name for name in TYPES}  # type.theory: theory
_SUFFIXES = re.compile(r"(\.(jsonl|json|parquet|gz))+$")  # a file's name without them: its source


def threshold_of(record: TaggedPaper) -> float:
    """The ``--min-score`` of the run that tagged ``record``, as its provenance says; ValueError
    if it says something that is not a number."""
    given = record.provenance.settings.get("min_score", TaggerConfig().min_score)
    if isinstance(given, bool) or not isinstance(given, int | float) or not math.isfinite(given):
        raise ValueError(f"its provenance's min_score is {given!r}, not a number")
    return float(given)


def uncertainty(record: TaggedPaper) -> float:
    """How far the score nearest the run's threshold is from it, over the paper's tags and
    contribution types: 0 is a tag the tagger could as well have left out. A paper with none
    is 0."""
    threshold = threshold_of(record)
    return min((abs(t.score - threshold) for t in record.tags + record.facets), default=0.0)


def review_order(records: Sequence[TaggedPaper], order: str = REVIEW_ORDER) -> list[int]:
    """The indexes of ``records`` in the order to review them: ``file`` as given, ``uncertain``
    least certain first (:func:`uncertainty`), ties in file order."""
    if order not in ORDERS:
        raise ValueError(
            f"The 'order' parameter of review_order must be one of {', '.join(ORDERS)}. "
            f"Got {order!r} instead."
        )
    if order == "file":
        return list(range(len(records)))
    return sorted(range(len(records)), key=lambda k: (uncertainty(records[k]), k))


@dataclass
class Review:
    """A review: the tagged papers in the order to review them, the taxonomy they are judged
    against, and the judgments file's store. :meth:`open` makes one from files, :meth:`serve`
    serves its page."""

    records: list[TaggedPaper]
    taxonomy: Taxonomy
    store: JudgmentStore
    order: str = REVIEW_ORDER
    source: str = ""

    @classmethod
    def open(
        cls,
        tagged: str | Path,
        judgments: str | Path,
        *,
        taxonomy: str | Path | Taxonomy | None = None,
        order: str = REVIEW_ORDER,
        warn: Callable[[str], None] | None = None,
    ) -> Review:
        """Read ``tagged`` (tagged output, "-" for stdin) and the ``judgments`` file (missing:
        a new review; else resumed). ``taxonomy`` defaults to the one the lines were tagged
        with. ``warn`` is told of tags left out because the taxonomy lacks their area."""
        check_outputs({"--judgments": judgments}, [tagged])
        name = STDIN_NAME if is_stdio(tagged) else str(tagged)
        records, first = [], {}
        for line in read_tagged_lines(tagged):
            paper_id = line.record.paper.id
            if paper_id in first:
                raise InputError(
                    f"paper id {paper_id!r} comes again (first on line {first[paper_id]}): "
                    "judgments are kept by paper id, so each paper must come once; remove the "
                    "repeat",
                    **line.where(),
                )
            first[paper_id] = line.number
            try:
                threshold_of(line.record)
            except ValueError as exc:
                raise InputError(
                    f"{exc}: this is not a line `tagger tag` wrote; tag the papers again",
                    **line.where(),
                ) from None
            records.append(line.record)
        if not records:
            raise InputError("holds no tagged paper: nothing to review", source=name)
        loaded = (
            taxonomy if isinstance(taxonomy, Taxonomy) else _taxonomy_of(records, taxonomy, name)
        )
        left_out = sum(len(r.tags) - len(review_tags(r, loaded)) for r in records)
        if left_out and warn is not None:
            warn(
                f"{left_out:,} tags of {name} are of areas {loaded.label} does not have (it was "
                "tagged with another taxonomy): they are not shown"
            )
        records = [records[k] for k in review_order(records, order)]
        source = "stdin" if is_stdio(tagged) else _SUFFIXES.sub("", Path(tagged).name)
        store = JudgmentStore.open(judgments, records, loaded, source=source)
        return cls(records, loaded, store, order=order, source=source)

    def data(self, token: str = "") -> dict[str, Any]:
        """What the page shows: the papers in order, the taxonomy's areas, the judgments so far,
        and the ``token`` its changes must carry. The judgments file is read again first if it
        changed (an edit by hand is shown)."""
        self.store.refresh()
        areas = [
            [area.id, area.name, area.parent, depth]
            for depth, area in self.taxonomy.walk()
            if not self.taxonomy.facet(area.id)
        ]
        return {
            "source": self.source,
            "judgments": str(self.store.path),
            "order": self.order,
            "taxonomy": self.taxonomy.label,
            "token": token,
            "types": TYPES,
            "areas": areas,
            "papers": [self._paper(record) for record in self.records],
            "views": self.store.views(),
        }

    def page(self, token: str = "") -> str:
        """The review page, one self-contained HTML file (tagger/data/review.html)."""
        title = f"Review: {self.source}" if self.source else "Review"
        return render_html(self.data(token), title=title, template=TEMPLATE)

    def serve(self, port: int = REVIEW_PORT) -> ReviewServer:
        """The page served on 127.0.0.1 (``port``, or a free one), started: see ReviewServer."""
        return ReviewServer(self, port=port).start()

    def _paper(self, record: TaggedPaper) -> dict[str, Any]:
        paper = record.paper
        texts = {"title": paper.title or "", "abstract": paper.abstract}
        tags = [
            {
                "id": tag.id,
                "path": tag.path,
                "score": tag.score,
                "evidence": [
                    [*_utf16(texts[e.field], e), e.area, e.kind, e.rule] for e in tag.evidence
                ],
                "neighbours": [[n.id, n.title or "", n.similarity] for n in tag.neighbours],
            }
            for tag in review_tags(record, self.taxonomy)
        ]
        return {
            **paper.model_dump(include={"id", "title", "abstract", "venue", "year"}),
            "threshold": threshold_of(record),
            "closest": round(uncertainty(record), 4),
            "tags": tags,
            "types": {FACETS[t.id]: t.score for t in record.facets if t.id in FACETS},
        }


def _utf16(text: str, span: Evidence) -> tuple[str, int, int]:
    """Where evidence lies, its offsets (Python's, in characters) in UTF-16 units, as the page's
    JavaScript counts them."""
    if text.isascii():
        return span.field, span.start, span.end
    units = [len(text[:at].encode("utf-16-le")) // 2 for at in (span.start, span.end)]
    return span.field, units[0], units[1]


def _taxonomy_of(records: Sequence[TaggedPaper], path: str | Path | None, name: str) -> Taxonomy:
    """The taxonomy at ``path``, or else the one the lines were tagged with, if known here."""
    if path is not None:
        return load_taxonomy(path)
    used = {r.provenance.taxonomy_sha256: r.provenance.taxonomy_version for r in records}
    if len(used) > 1:
        raise TaggerError(
            f"{name}: its papers were tagged with {len(used)} taxonomies (versions "
            f"{', '.join(sorted(set(used.values())))}): pass the one to judge them against with "
            "--taxonomy"
        )
    ((sha256, version),) = used.items()
    found = tagged_with(sha256)
    if found is None:
        raise TaggerError(
            f"{name}: its papers were tagged with taxonomy version {version} (sha256 "
            f"{sha256[:12]}), which is not the packaged taxonomy nor one tagger has used here: "
            "pass that taxonomy with --taxonomy"
        )
    return found
