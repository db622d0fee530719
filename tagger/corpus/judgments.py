"""The judgments file of a review (`tagger review`): one line per paper begun, in the judged set's
format (judged/README.md), rewritten whole and atomically on each change (a kill at any moment
leaves the old file or the new one).

A paper marked done is a line with ``judged`` (``areas``, ``main``, ``acceptable``, ``type``,
``notes``), what eval and the fit read (:meth:`tagger.corpus.judged.Judgment.of_paper`): rejected
tags are not in ``areas``, accepted and added areas are, and marking it done accepts the tags
neither accepted nor rejected (the tagger listed them and the reviewer let them stand) and makes
the first accepted area, in the tagger's order, the main one if none was marked. A paper begun
and not done is a line with ``draft`` instead (the same keys, and ``rejected``): kept, and read
back when the review resumes, but no judgment, so eval and the fit skip it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import InputError, TaggerError
from ..io.files import kind_of, lines_of, lock_beside, temporary_beside, write_atomic
from ..io.jsonl import dumps, parse_json
from ..records import AreaTag, Paper, TaggedPaper, source_of
from ..taxonomy.model import Taxonomy
from .judged import Judgment

TYPES = ("method", "theory", "dataset", "analysis", "survey", "system")  # judged/JUDGING.md
MAX_MAIN = 2  # "the one area (two only when the paper is equally about both)"
MAX_NOTES = 10_000  # characters of a paper's notes
LISTS = ("areas", "acceptable", "rejected", "main", "type")


class StaleJudgment(TaggerError):
    """A save made on a revision of a paper's judgment that is no longer the file's: another
    page of the review saved the paper since (or the file was edited). ``current`` is the
    paper's view now (None: not begun)."""

    def __init__(self, paper_id: str, current: dict[str, Any] | None) -> None:
        self.current = current
        super().__init__(
            f"paper {paper_id!r} was changed in another page since this one read it: not saved"
        )


def review_tags(record: TaggedPaper, taxonomy: Taxonomy) -> list[AreaTag]:
    """The topic tags of ``record`` a reviewer judges: those of areas ``taxonomy`` has."""
    return [t for t in record.tags if t.id in taxonomy.by_id and not taxonomy.facet(t.id)]


class JudgmentStore:
    """The judgments file of a review (see the module's docstring for its lines): read when
    opened, and rewritten whole, atomically, by each :meth:`save`, which returns only once the
    file holds the change. Holds the file's lock (io.files.lock_beside) until closed, so that
    two reviews cannot write one file.

    The file is the truth, whoever wrote it: a path through a symlink is its target's (written
    there, the link kept, locked there); a file changed since the store read or wrote it (an
    edit by hand) is read again, through the checks of :meth:`open`, before a save and by
    :meth:`refresh`, so an edit is kept and shown. Each paper's judgment has a revision (the
    digest of its line, "" for a paper not begun): a save that names one no longer the file's,
    made in another page of the review, is refused (:class:`StaleJudgment`)."""

    def __init__(
        self,
        path: str | Path,
        records: Sequence[TaggedPaper] | Mapping[str, TaggedPaper],
        taxonomy: Taxonomy,
        *,
        source: str = "",
    ) -> None:
        self.path = Path(os.path.realpath(path))  # a link's target, existing or not
        self.records = (
            records
            if isinstance(records, Mapping)
            else {record.paper.id: record for record in records}
        )
        self.taxonomy = taxonomy
        self.source = source  # the judged lines' 'source' where a paper names none
        self._lines: dict[str, dict[str, Any]] = {}
        self._seen: tuple[int, ...] | None = None  # the file as last read or written
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
            with contextlib.suppress(FileNotFoundError):  # a save a kill cut short: never renamed
                temporary_beside(store.path).unlink()
            store._check_writable()
            store._lines, store._seen = store._read()
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

    def states(self, ids: Iterable[str]) -> str:
        """One letter for each paper of ``ids``, in order: ``d`` done, ``b`` begun (a draft),
        ``t`` to do."""
        lines = self._lines
        return "".join(
            "t" if (line := lines.get(paper_id)) is None else "d" if "judged" in line else "b"
            for paper_id in ids
        )

    def view(self, paper_id: str) -> dict[str, Any] | None:
        """A paper's judgment as the page holds it, None if not begun: ``done``, the lists
        ``areas`` (accepted and added), ``acceptable``, ``rejected``, ``main`` and ``type``,
        ``notes``, and the ``revision`` a save made on it names. A done paper's rejected tags
        are those of its tags not judged."""
        line = self._lines.get(paper_id)
        return None if line is None else self._view_of(line)

    def revision(self, paper_id: str) -> str:
        """The revision of a paper's judgment: the digest of its line, "" if not begun."""
        line = self._lines.get(paper_id)
        return "" if line is None else _revision(line)

    def refresh(self) -> None:
        """Read the file again if it changed since the store last read or wrote it (an edit by
        hand), through the checks of :meth:`open`: InputError, naming the line, if the edit
        broke it (the store keeps what it held)."""
        with self._writing:
            self._refresh()

    def _view_of(self, line: dict[str, Any]) -> dict[str, Any]:
        given = line.get("judged", line.get("draft"))
        if not isinstance(given, dict):
            raise TaggerError("neither 'judged' nor 'draft' holds a judgment")
        view = {name: list(given.get(name) or []) for name in LISTS}
        view["notes"] = given.get("notes") or ""
        view["done"] = "judged" in line
        view["revision"] = _revision(line)
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
        revision: str | None = None,
    ) -> dict[str, Any]:
        """Write a paper's judgment (``done``) or draft, and return its :meth:`view` as written.
        ``revision``, if given, is the one it was made on (:meth:`revision`): StaleJudgment,
        with the paper's view now, if the file holds another. TaggerError if it is no judgment
        of this paper (an area the taxonomy lacks, a main area not among its areas, done with no
        area ...), InputError if the file was edited into one the review cannot read, OSError
        if it cannot be written. Either way nothing changes, in the file or here."""
        lists = {"areas": areas, "acceptable": acceptable, "rejected": rejected, "main": main}
        line = self._line(paper_id, **lists, type=type, notes=notes, done=done)
        if revision is not None and not isinstance(revision, str):
            raise TaggerError(f"paper {paper_id!r}: 'revision' must be text. Got {revision!r}.")
        with self._writing:
            if self._lock is None:
                raise TaggerError(f"{self.path}: the review is closed; open it again to save")
            self._refresh()
            if revision is not None and revision != self.revision(paper_id):
                raise StaleJudgment(paper_id, self.view(paper_id))
            lines = {**self._lines, paper_id: line}
            data = b"".join(dumps(one) for one in lines.values())
            written = write_atomic(self.path, data, temporary=temporary_beside(self.path))
            self._lines, self._seen = lines, _signature(written)
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

    def _check_writable(self) -> None:
        """Refuse, before anything is served, a file a save could not rightly replace: one that
        is not a regular file (a FIFO, a device) or is read-only."""
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(status.st_mode):
            raise TaggerError(
                f"{self.path} is {kind_of(status.st_mode)}, not a file: give --judgments a "
                "regular file (or a new one)"
            )
        if not status.st_mode & 0o222 or not os.access(self.path, os.W_OK):
            raise TaggerError(
                f"{self.path} is read-only: make it writable (chmod u+w {self.path}) or give "
                "another file"
            )

    def _refresh(self) -> None:
        """:meth:`refresh`, under the store's lock."""
        try:
            if _signature(os.stat(self.path)) == self._seen:
                return
        except FileNotFoundError:
            if self._seen is None:
                return
        try:
            self._lines, self._seen = self._read()
        except InputError as exc:
            raise InputError(
                f"{exc.reason}: the file was changed while the review runs; mend "
                f"{'that line' if exc.line else 'it'} and save again (nothing was written)",
                source=exc.source,
                line=exc.line,
            ) from None

    def _read(self) -> tuple[dict[str, dict[str, Any]], tuple[int, ...] | None]:
        """The file's lines by paper, checked, and its signature as read; a missing file has
        none. Never opens a FIFO in a way that blocks."""
        try:
            handle = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return {}, None
        except OSError as exc:
            raise TaggerError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        with os.fdopen(handle, "rb") as file:
            status = os.fstat(handle)
            if not stat.S_ISREG(status.st_mode):
                raise TaggerError(
                    f"{self.path} is {kind_of(status.st_mode)}, not a file: give --judgments a "
                    "regular file (or a new one)"
                )
            data = file.read()
        return self._parse(data), _signature(status)

    def _parse(self, data: bytes) -> dict[str, dict[str, Any]]:
        name = str(self.path)
        lines: dict[str, dict[str, Any]] = {}
        others: list[tuple[int, str]] = []
        for number, raw in enumerate(lines_of([data], name), start=1):
            if not raw.strip():
                continue
            value = _judged_line(raw, name, number)
            paper_id = value["id"]
            record = self.records.get(paper_id)
            if record is None:
                others.append((number, paper_id))
                continue
            if paper_id in lines:
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
            lines[paper_id] = self._reread(value, name, number)
        if others:
            number, paper_id = others[0]
            count = f"{len(others):,} of its lines judge" if len(others) > 1 else "a line judges"
            raise InputError(
                f"{count} papers that {self.source or 'the tagged file'} does not hold (the first "
                f"on line {number}: {paper_id!r}): it holds judgments of other papers; give "
                "--judgments a new file, or review the tagged file they were judged from",
                source=name,
            )
        return lines

    def _reread(self, value: dict[str, Any], name: str, number: int) -> dict[str, Any]:
        """A line of the file as :meth:`save` would write it, checked the same way."""
        try:
            if "judged" in value:  # read as eval and the fit read it
                judgment = Judgment.of_paper(Paper.model_validate(value), source=name)
                if judgment is None:
                    raise TaggerError("its 'judged' is null")
            view = self._view_of(value)
            del view["revision"]
            return self._line(value["id"], **view)
        except InputError as exc:  # Judgment's own, which names the format
            raise InputError(exc.reason, source=name, line=number) from None
        except (TaggerError, ValueError) as exc:
            raise InputError(
                f"{exc} (judged/README.md gives the format)", source=name, line=number
            ) from None


def _revision(line: dict[str, Any]) -> str:
    """The revision of a paper's line: its digest, as the file holds it."""
    return hashlib.sha256(dumps(line)).hexdigest()[:16]


def _signature(status: os.stat_result) -> tuple[int, ...]:
    """What tells that a file changed: its identity, size and time of change."""
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


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
