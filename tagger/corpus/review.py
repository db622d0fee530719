"""Reviewing tagged papers by hand, in a browser: the papers in the order to review them (file
order, or least certain first: :func:`review_order`), each with its tags' evidence, the
taxonomy they are judged against, and the judgments file (corpus.judgments), whose every change
is written before the page says it is saved; the page is served on this machine only
(corpus.review_server).

A review of tens of thousands of papers holds none of them: :class:`Papers` keeps each paper's
id, its distance from the threshold and where its line lies in a spool of the tagged input, and
reads a paper's record when it is asked for. The page is small (the taxonomy's areas and one
letter a paper: done, begun or not), and fetches the papers it shows in blocks of REVIEW_BLOCK.
"""

from __future__ import annotations

import functools
import math
import os
import re
import tempfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..config import REVIEW_BLOCK, REVIEW_ORDER, REVIEW_PORT, TaggerConfig
from ..errors import STDIN_NAME, InputError, TaggerError
from ..io.files import check_outputs, is_stdio
from ..io.tagged import parse_tagged_line, read_tagged_lines
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
MAX_BLOCK = 500  # the most papers one fetch returns
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
    return _ordered([uncertainty(record) for record in records], order)


def _ordered(closest: Sequence[float], order: str) -> list[int]:
    """:func:`review_order` of papers whose :func:`uncertainty` is ``closest``."""
    if order not in ORDERS:
        raise ValueError(
            f"The 'order' parameter of review_order must be one of {', '.join(ORDERS)}. "
            f"Got {order!r} instead."
        )
    if order == "file":
        return list(range(len(closest)))
    return sorted(range(len(closest)), key=lambda k: (closest[k], k))


class Papers(Mapping[str, TaggedPaper]):
    """The tagged papers of a review, in the order to review them, held as an index: each
    paper's id, its :func:`uncertainty`, and where its line lies in ``spool``, a temporary copy
    of the tagged lines (the input may be stdin, gzip, Parquet or a part directory, or be
    rewritten while the review runs). A paper's record is read from there when asked for, the
    last CACHED kept. A mapping by id (what the judgments store checks a save against), in
    order; :meth:`at` gives the paper at a position. :meth:`close` removes the spool."""

    CACHED = 256

    def __init__(
        self,
        spool: IO[bytes],
        ids: list[str],
        closest: array,
        offsets: array,
        lengths: array,
        *,
        source: str,
    ) -> None:
        self.ids = ids
        self.closest = closest
        self.source = source
        self._spool = spool
        self._offsets = offsets
        self._lengths = lengths
        self._position = {paper_id: k for k, paper_id in enumerate(ids)}
        self.at = functools.lru_cache(maxsize=self.CACHED)(self._read)

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __contains__(self, paper_id: object) -> bool:
        return paper_id in self._position

    def __getitem__(self, paper_id: str) -> TaggedPaper:
        return self.at(self._position[paper_id])

    def position(self, paper_id: str) -> int | None:
        """Where the paper ``paper_id`` comes in the order, None if it is not one of them."""
        return self._position.get(paper_id)

    def _read(self, k: int) -> TaggedPaper:
        """The record of the paper at position ``k`` (``at``): its line read from the spool."""
        raw = os.pread(self._spool.fileno(), self._lengths[k], self._offsets[k])
        return parse_tagged_line(raw, source=self.source)

    def close(self) -> None:
        self._spool.close()


@dataclass
class Review:
    """A review: the tagged papers in the order to review them (:class:`Papers`), the taxonomy
    they are judged against, and the judgments file's store. :meth:`open` makes one from files,
    :meth:`serve` serves its page, :meth:`close` lets go of both."""

    papers: Papers
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
        with. ``warn`` is told of tags left out because the taxonomy lacks their area. The
        lines are read once, as they stream, into a spool (a temporary file)."""
        check_outputs({"--judgments": judgments}, [tagged])
        _ordered([], order)  # a wrong order refused before anything is read
        name = STDIN_NAME if is_stdio(tagged) else str(tagged)
        spool = tempfile.TemporaryFile(prefix="tagger-review-")  # noqa: SIM115 - Papers owns it
        try:
            ids, closest, offsets, lengths = [], array("d"), array("q"), array("q")
            first: dict[str, int] = {}
            used: dict[str, str] = {}  # the taxonomies the lines were tagged with
            tags: Counter[str] = Counter()  # the papers' tags, by area
            for line in read_tagged_lines(tagged):
                record = line.record
                paper_id = record.paper.id
                if paper_id in first:
                    raise InputError(
                        f"paper id {paper_id!r} comes again (first on line {first[paper_id]}): "
                        "judgments are kept by paper id, so each paper must come once; remove "
                        "the repeat",
                        **line.where(),
                    )
                first[paper_id] = line.number
                try:
                    closest.append(uncertainty(record))
                except ValueError as exc:
                    raise InputError(
                        f"{exc}: this is not a line `tagger tag` wrote; tag the papers again",
                        **line.where(),
                    ) from None
                ids.append(paper_id)
                offsets.append(spool.tell())
                lengths.append(len(line.raw))
                spool.write(line.raw)
                used[record.provenance.taxonomy_sha256] = record.provenance.taxonomy_version
                tags.update(tag.id for tag in record.tags)
            spool.flush()
            del first
            if not ids:
                raise InputError("holds no tagged paper: nothing to review", source=name)
            loaded = (
                taxonomy if isinstance(taxonomy, Taxonomy) else _taxonomy_of(used, taxonomy, name)
            )
            left_out = sum(
                count
                for area, count in tags.items()
                if area not in loaded.by_id or loaded.facet(area)
            )
            if left_out and warn is not None:
                warn(
                    f"{left_out:,} tags of {name} are of areas {loaded.label} does not have (it "
                    "was tagged with another taxonomy): they are not shown"
                )
            ranked = _ordered(closest, order)
            papers = Papers(
                spool,
                [ids[k] for k in ranked],
                array("d", (closest[k] for k in ranked)),
                array("q", (offsets[k] for k in ranked)),
                array("q", (lengths[k] for k in ranked)),
                source=name,
            )
            source = "stdin" if is_stdio(tagged) else _SUFFIXES.sub("", Path(tagged).name)
            store = JudgmentStore.open(judgments, papers, loaded, source=source)
        except BaseException:
            spool.close()
            raise
        return cls(papers, loaded, store, order=order, source=source)

    def close(self) -> None:
        """Let a save under way finish, release the judgments file, and remove the spool."""
        self.store.close()
        self.papers.close()

    def data(self, token: str = "") -> dict[str, Any]:
        """What the page is made with: the taxonomy's areas, the number of papers and the state
        of each (:meth:`JudgmentStore.states`), and the ``token`` its requests must carry; the
        papers it shows it fetches (:meth:`papers_from`). The judgments file is read again
        first if it changed (an edit by hand is shown)."""
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
            "count": len(self.papers),
            "block": REVIEW_BLOCK,
            "states": self.store.states(self.papers.ids),
        }

    def page(self, token: str = "") -> str:
        """The review page, one self-contained HTML file (tagger/data/review.html)."""
        title = f"Review: {self.source}" if self.source else "Review"
        return render_html(self.data(token), title=title, template=TEMPLATE)

    def papers_from(self, start: int, count: int = REVIEW_BLOCK) -> dict[str, Any]:
        """Up to ``count`` papers from position ``start`` in the order (``start`` brought
        within it, ``count`` within 1 and MAX_BLOCK), as the page shows them, with what the
        judgments file holds of them (their views), the state of every paper and the number
        done. The judgments file is read again first if it changed."""
        self.store.refresh()
        start = max(0, min(start, len(self.papers) - 1))
        end = min(len(self.papers), start + max(1, min(count, MAX_BLOCK)))
        shown = [self._paper(self.papers.at(k)) for k in range(start, end)]
        views = {p["id"]: view for p in shown if (view := self.store.view(p["id"])) is not None}
        return {
            "start": start,
            "papers": shown,
            "views": views,
            "states": self.store.states(self.papers.ids),
            "done": len(self.store.done),
        }

    def block_of(self, paper_id: str, count: int = REVIEW_BLOCK) -> dict[str, Any]:
        """The block of ``count`` papers (as :meth:`papers_from`) that holds ``paper_id``, and
        its ``index`` in the order; ``{"index": -1}`` if it is not one of the papers."""
        k = self.papers.position(paper_id)
        if k is None:
            return {"index": -1}
        count = max(1, min(count, MAX_BLOCK))
        return {**self.papers_from(k - k % count, count), "index": k}

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


def _taxonomy_of(used: Mapping[str, str], path: str | Path | None, name: str) -> Taxonomy:
    """The taxonomy at ``path``, or else the one the lines were tagged with (``used``: their
    taxonomies' versions by sha256), if known here."""
    if path is not None:
        return load_taxonomy(path)
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
