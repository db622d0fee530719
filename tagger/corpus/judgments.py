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

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import InputError, TaggerError
from ..io.files import lock_beside, read_lines, write_atomic
from ..io.jsonl import dumps, parse_json
from ..records import AreaTag, Paper, TaggedPaper, source_of
from ..taxonomy.model import Taxonomy
from .judged import Judgment

TYPES = ("method", "theory", "dataset", "analysis", "survey", "system")  # judged/JUDGING.md
MAX_MAIN = 2  # "the one area (two only when the paper is equally about both)"
MAX_NOTES = 10_000  # characters of a paper's notes
LISTS = ("areas", "acceptable", "rejected", "main", "type")


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
