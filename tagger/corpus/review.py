"""Reviewing tagged papers by hand, in a browser: a page served on this machine only, one paper at
a time with each tag's evidence highlighted, whose every change the server writes to the
judgments file before the page says it is saved.

The file is in the judged set's format (judged/README.md), one line per paper begun, rewritten
whole and atomically on each change (a kill at any moment leaves the old file or the new one).
A paper marked done is a line with ``judged`` (``areas``, ``main``, ``acceptable``, ``type``,
``notes``), what eval and the fit read (:meth:`tagger.corpus.judged.Judgment.of_paper`): rejected
tags are not in ``areas``, accepted and added areas are, and marking it done accepts the tags
neither accepted nor rejected (the tagger listed them and the reviewer let them stand) and makes
the first accepted area, in the tagger's order, the main one if none was marked. A paper begun
and not done is a line with ``draft`` instead (the same keys, and ``rejected``): kept, and read
back when the review resumes, but no judgment, so eval and the fit skip it. Papers come in file
order or least certain first (:func:`review_order`).
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from ..config import REVIEW_ORDER, REVIEW_PORT, TaggerConfig
from ..errors import STDIN_NAME, InputError, TaggerError
from ..io.files import check_outputs, is_stdio, lock_beside, read_lines, write_atomic
from ..io.jsonl import dumps, parse_json
from ..io.tagged import read_tagged_lines
from ..records import AreaTag, Evidence, Paper, TaggedPaper, source_of
from ..taxonomy.loading import load_taxonomy
from ..taxonomy.model import Taxonomy
from ..taxonomy.store import tagged_with
from .judged import TYPE_FACET, Judgment
from .report import render_html

TYPES = ("method", "theory", "dataset", "analysis", "survey", "system")  # judged/JUDGING.md
ORDERS = ("uncertain", "file")
HOST = "127.0.0.1"  # loopback only: the page is served to this machine and no other
TEMPLATE = "review.html"
MAX_MAIN = 2  # "the one area (two only when the paper is equally about both)"
MAX_NOTES = 10_000  # characters of a paper's notes
MAX_BODY = 1 << 20  # bytes of one change sent by the page
CSP = (  # the page loads nothing and talks only to its server
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'"
)
LISTS = ("areas", "acceptable", "rejected", "main", "type")
FACETS = {f"{TYPE_FACET}.{name}": name for name in TYPES}  # type.theory: theory
_SUFFIXES = re.compile(r"(\.(jsonl|json|parquet|gz))+$")  # a file's name without them: its source


def threshold_of(record: TaggedPaper) -> float:
    """The ``--min-score`` of the run that tagged ``record``, as its provenance says."""
    return float(record.provenance.settings.get("min_score", TaggerConfig().min_score))


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


def review_tags(record: TaggedPaper, taxonomy: Taxonomy) -> list[AreaTag]:
    """The topic tags of ``record`` a reviewer judges: those of areas ``taxonomy`` has."""
    return [t for t in record.tags if t.id in taxonomy.by_id and not taxonomy.facet(t.id)]


class JudgmentStore:
    """The judgments file of a review (see the module's docstring for its lines): read when
    opened, and rewritten whole, atomically, by each :meth:`save`, which returns only once the
    file holds the change. Holds the file's lock (io.files.lock_beside) until closed, so that
    two reviews cannot write one file."""

    def __init__(
        self,
        path: str | Path,
        records: Sequence[TaggedPaper],
        taxonomy: Taxonomy,
        *,
        source: str = "",
    ) -> None:
        self.path = Path(path)
        self.records = {record.paper.id: record for record in records}
        self.taxonomy = taxonomy
        self.source = source  # the judged lines' 'source' where a paper names none
        self._lines: dict[str, dict[str, Any]] = {}
        self._writing = threading.Lock()
        self._lock: IO[bytes] | None = None

    @classmethod
    def open(
        cls, path: str | Path, records: Sequence[TaggedPaper], taxonomy: Taxonomy, **kwargs: Any
    ) -> JudgmentStore:
        """The store of ``path`` for ``records``, its lines read (a missing file is an empty
        store). InputError, naming the line, if the file is not one `tagger review` writes for
        these papers (another paper's line, another version of a paper, a malformed judgment)."""
        store = cls(path, records, taxonomy, **kwargs)
        store._lock = lock_beside(store.path, held_by="another `tagger review`")
        try:
            store._read()
        except BaseException:
            store.close()
            raise
        return store

    def close(self) -> None:
        """Let a write under way finish, then release the file's lock."""
        with self._writing:
            if self._lock is not None:
                self._lock.close()
                self._lock = None

    @property
    def done(self) -> set[str]:
        """The ids of the papers marked done."""
        return {paper_id for paper_id, line in self._lines.items() if "judged" in line}

    def view(self, paper_id: str) -> dict[str, Any] | None:
        """A paper's judgment as the page holds it, None if not begun: ``done``, the lists
        ``areas`` (accepted and added), ``acceptable``, ``rejected``, ``main`` and ``type``, and
        ``notes``. A done paper's rejected tags are those of its tags not judged."""
        line = self._lines.get(paper_id)
        return None if line is None else self._view_of(line)

    def _view_of(self, line: dict[str, Any]) -> dict[str, Any]:
        given = line.get("judged", line.get("draft"))
        if not isinstance(given, dict):
            raise TaggerError("neither 'judged' nor 'draft' holds a judgment")
        view = {name: list(given.get(name) or []) for name in LISTS}
        view["notes"] = given.get("notes") or ""
        view["done"] = "judged" in line
        if view["done"]:
            judged = {*view["areas"], *view["acceptable"]}
            tags = review_tags(self.records[line["id"]], self.taxonomy)
            view["rejected"] = [t.id for t in tags if t.id not in judged]
        return view

    def views(self) -> dict[str, dict[str, Any]]:
        """Every begun paper's :meth:`view`, by id."""
        return {paper_id: view for paper_id in self._lines if (view := self.view(paper_id))}

    def save(
        self,
        paper_id: str,
        *,
        areas: Sequence[str] = (),
        acceptable: Sequence[str] = (),
        rejected: Sequence[str] = (),
        main: Sequence[str] = (),
        type: Sequence[str] = (),
        notes: str = "",
        done: bool = False,
    ) -> dict[str, Any]:
        """Write a paper's judgment (``done``) or draft, and return its :meth:`view` as written.
        TaggerError if it is no judgment of this paper (an area the taxonomy lacks, a main area
        not among its areas, done with no area ...); OSError if the file cannot be written. Either
        way nothing changes, in the file or here."""
        lists = {"areas": areas, "acceptable": acceptable, "rejected": rejected, "main": main}
        line = self._line(paper_id, **lists, type=type, notes=notes, done=done)
        with self._writing:
            if self._lock is None:
                raise TaggerError(f"{self.path}: the review is closed; open it again to save")
            lines = {**self._lines, paper_id: line}
            write_atomic(self.path, b"".join(dumps(one) for one in lines.values()))
            self._lines = lines
        return self._view_of(line)

    def _line(self, paper_id: str, *, notes: str, done: bool, **lists: Any) -> dict[str, Any]:
        """The file's line for a judgment, checked (see :meth:`save`)."""
        record = self.records.get(paper_id)
        if record is None:
            raise TaggerError(f"paper {paper_id!r} is not one of the papers under review")
        said = f"paper {paper_id!r}"
        given = {name: _names(said, name, lists[name]) for name in LISTS}
        if not isinstance(notes, str) or len(notes) > MAX_NOTES:
            raise TaggerError(f"{said}: 'notes' must be text of up to {MAX_NOTES:,} characters")
        if not isinstance(done, bool):
            raise TaggerError(f"{said}: 'done' must be true or false. Got {done!r} instead.")
        listed = [t.id for t in review_tags(record, self.taxonomy)]
        self._check_areas(said, given, listed)
        areas, acceptable, main, types = (given[n] for n in ("areas", "acceptable", "main", "type"))
        if done:
            decided = {*areas, *acceptable, *given["rejected"]}
            areas = areas + [area for area in listed if area not in decided]
            if not areas:
                raise TaggerError(
                    f"{said} cannot be done with no area: accept a tag, or add the area it is about"
                )
            if not types:
                raise TaggerError(
                    f"{said} cannot be done with no contribution type: mark one of "
                    f"{', '.join(TYPES)}"
                )
            main = main or [next((a for a in listed if a in areas), areas[0])]
        judgment = {"areas": areas, "main": main, "acceptable": acceptable, "type": types}
        if not done:
            judgment["rejected"] = given["rejected"]
        paper = record.paper
        named = source_of(paper)
        return {
            "id": paper.id,
            "source": self.source if named == "?" else named,
            "venue": paper.venue,
            "year": paper.year,
            "title": paper.title,
            "abstract": paper.abstract,
            "judged" if done else "draft": {**judgment, "notes": notes},
        }

    def _check_areas(self, said: str, given: dict[str, list[str]], listed: list[str]) -> None:
        by_id = self.taxonomy.by_id
        seen: dict[str, str] = {}
        for name in ("areas", "acceptable", "rejected"):
            for area in given[name]:
                if area not in by_id:
                    raise TaggerError(f"{said}: area {area!r} is not in {self.taxonomy.label}")
                if self.taxonomy.facet(area):
                    raise TaggerError(f"{said}: {area!r} is a contribution type: see 'type'")
                if area in seen:
                    raise TaggerError(
                        f"{said}: area {area!r} is both in {seen[area]!r} and {name!r}"
                    )
                seen[area] = name
        stray = [area for area in given["rejected"] if area not in listed]
        if stray:
            raise TaggerError(f"{said}: only a tag can be rejected; {stray[0]!r} is not one")
        if not set(given["main"]) <= set(given["areas"]) or len(given["main"]) > MAX_MAIN:
            raise TaggerError(
                f"{said}: 'main' must be one or two of its areas. Got {given['main']} instead."
            )
        unknown = [name for name in given["type"] if name not in TYPES]
        if unknown:
            raise TaggerError(
                f"{said}: {unknown[0]!r} is no contribution type; they are {', '.join(TYPES)}"
            )

    def _read(self) -> None:
        if not self.path.exists():
            return
        name = str(self.path)
        others: list[tuple[int, str]] = []
        for number, raw in enumerate(read_lines(self.path), start=1):
            if not raw.strip():
                continue
            value = _judged_line(raw, name, number)
            paper_id = value["id"]
            record = self.records.get(paper_id)
            if record is None:
                others.append((number, paper_id))
                continue
            if paper_id in self._lines:
                raise InputError(
                    f"paper {paper_id!r} comes again: `tagger review` writes one line a paper; "
                    "keep the one to go on with",
                    source=name,
                    line=number,
                )
            if value.get("abstract") != record.paper.abstract:
                raise InputError(
                    f"paper {paper_id!r}: its abstract is not the one in "
                    f"{self.source or 'the tagged file'}: these are judgments of another version "
                    "of the paper; give --judgments a new file",
                    source=name,
                    line=number,
                )
            self._lines[paper_id] = self._reread(value, name, number)
        if others:
            number, paper_id = others[0]
            count = f"{len(others):,} of its lines judge" if len(others) > 1 else "a line judges"
            raise InputError(
                f"{count} papers that {self.source or 'the tagged file'} does not hold (the first "
                f"on line {number}: {paper_id!r}): it holds judgments of other papers; give "
                "--judgments a new file, or review the tagged file they were judged from",
                source=name,
            )

    def _reread(self, value: dict[str, Any], name: str, number: int) -> dict[str, Any]:
        """A line of the file as :meth:`save` would write it, checked the same way."""
        try:
            if "judged" in value:  # read as eval and the fit read it
                judgment = Judgment.of_paper(Paper.model_validate(value), source=name)
                if judgment is None:
                    raise TaggerError("its 'judged' is null")
            view = self._view_of(value)
            return self._line(value["id"], **view)
        except InputError as exc:  # Judgment's own, which names the format
            raise InputError(exc.reason, source=name, line=number) from None
        except (TaggerError, ValueError) as exc:
            raise InputError(
                f"{exc} (judged/README.md gives the format)", source=name, line=number
            ) from None


def _judged_line(raw: bytes, name: str, number: int) -> dict[str, Any]:
    try:
        value = parse_json(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not a line of JSON ({exc})", source=name, line=number) from None
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise InputError(
            "not a judged paper: a line is an object with an 'id' (judged/README.md gives the "
            "format)",
            source=name,
            line=number,
        )
    return value


def _names(said: str, name: str, value: Any) -> list[str]:
    """A list of names, each once, in order; TaggerError if ``value`` is not one."""
    if isinstance(value, str | bytes) or not all(isinstance(v, str) for v in value):
        raise TaggerError(f"{said}: {name!r} must be a list of names. Got {value!r} instead.")
    return list(dict.fromkeys(value))


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
        and the ``token`` its changes must carry."""
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


class ReviewServer:
    """A review's page and its judgments over HTTP, on 127.0.0.1 only, until :meth:`close`
    (a context manager closes it too). ``GET /`` is the page, made afresh (so a reload shows
    what the file holds); ``POST /judgment`` saves one paper's judgment (a JSON object: ``id``
    and JudgmentStore.save's keywords) and answers, once the file holds it, with its view and
    the number of papers done. A change must carry the page's token and a Host header of this
    machine: no other web page, and no name that resolves here, can change the file."""

    def __init__(self, review: Review, *, port: int = REVIEW_PORT) -> None:
        self.review = review
        self.port = port
        self.token = ""
        self._server: ThreadingHTTPServer | None = None
        self._serving = False

    def start(self) -> ReviewServer:
        """Listen on ``port`` (0: a free one); TaggerError if it cannot."""
        if self._server is None:
            self.token = secrets.token_urlsafe(24)
            try:
                self._server = ThreadingHTTPServer((HOST, self.port), _handler(self))
            except OSError as exc:
                raise TaggerError(
                    f"cannot serve on {HOST} port {self.port}: {exc.strerror or exc}; pass "
                    "another --port, or none for a free one"
                ) from None
            self.port = self._server.server_address[1]
        return self

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def serve_forever(self) -> None:
        """Answer requests until :meth:`close` (from another thread) or Ctrl-C."""
        assert self._server is not None, "start() first"
        self._serving = True
        self._server.serve_forever(poll_interval=0.2)

    def close(self) -> None:
        """Stop answering, let a write under way finish, and release the judgments file."""
        if self._server is not None:
            if self._serving:
                self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.review.store.close()

    def __enter__(self) -> ReviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler(server: ReviewServer) -> type[BaseHTTPRequestHandler]:
    review = server.review

    class Handler(BaseHTTPRequestHandler):
        server_version = "tagger-review"
        timeout = 30  # a connection that says nothing is closed, not waited on for ever

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the terminal shows the URL and how the review ended, not each request

        def do_GET(self) -> None:
            if self._refused("/", "/index.html"):
                return
            self._send(HTTPStatus.OK, review.page(server.token).encode(), "text/html")

        def do_POST(self) -> None:
            if self._refused("/judgment"):
                return
            try:
                length = int(self.headers.get("Content-Length") or -1)
                if not 0 <= length <= MAX_BODY:
                    raise ValueError(f"a change is a JSON object of up to {MAX_BODY:,} bytes")
                change = parse_json(self.rfile.read(length).decode("utf-8"))
                if not isinstance(change, dict) or not isinstance(change.get("id"), str):
                    raise ValueError("a change is a JSON object with the paper's 'id'")
                saved = review.store.save(change.pop("id"), **change)
            except (TaggerError, ValueError, TypeError) as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": f"not saved: {exc}"})
            except OSError as exc:
                where, why = review.store.path, exc.strerror or exc
                failed = {"error": f"not saved: cannot write {where}: {why}"}
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, failed)
            else:
                self._send(HTTPStatus.OK, {"saved": saved, "done": len(review.store.done)})

        def _refused(self, *paths: str) -> bool:
            """Refuse (and say so) a request that does not name this machine (a page elsewhere
            cannot, even through a name that resolves here), a change without the page's
            token, and a path not among ``paths``."""
            hosts = {f"{HOST}:{server.port}", f"localhost:{server.port}"}
            token = self.command == "GET" or self.headers.get("X-Review-Token") == server.token
            if self.headers.get("Host") not in hosts or not token:
                self._send(HTTPStatus.FORBIDDEN, {"error": "changes come from the page only"})
            elif urlsplit(self.path).path not in paths:
                self._send(HTTPStatus.NOT_FOUND, {"error": "no such page"})
            else:
                return False
            return True

        def _send(self, status: HTTPStatus, body: Any, kind: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else dumps(body)
            self.send_response(status)
            for name, value in (
                ("Content-Type", f"{kind}; charset=utf-8"),
                ("Content-Length", str(len(data))),
                ("Cache-Control", "no-store"),
                ("X-Content-Type-Options", "nosniff"),
                ("Content-Security-Policy", CSP),
            ):
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
