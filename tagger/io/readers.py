"""Read papers from paper-list text, JSON Lines, a JSON array, CSV/TSV, Parquet or a reference
manager's library (BibTeX, RIS, CSL JSON: io.libraries); from a file or stdin (all but Parquet).

``iter_records`` yields one ``Paper`` or ``InputError`` per record, in input order, so one bad
record does not stop a run; ``read_papers`` raises the first error instead. Problems with the
file itself (missing, a directory, not JSON at all, a CSV without an abstract column) raise
``InputError`` before any record comes out.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from ..errors import STDIN_NAME, InputError, InputNotice
from ..records import CONTROL, FIELD_ALIASES, FIRST_YEAR, LAST_YEAR, MAX_ABSTRACT_CHARS, Paper
from .files import chunks_of, is_stdio, lines_of, open_input, reads_once
from .formats import (
    BOM,
    FORMATS,
    csv_delimiter,
    detect_format,
    is_library,
    is_parquet,
    not_papers,
)
from .jsonl import parse_json
from .libraries import MAX_LIBRARY_BYTES, library_records
from .paperlist import paper_list
from .parquet import Unkeepable, open_parquet, parquet_batches, plain, plain_rows, too_big
from .tagged import is_tagged_object, tagged_from_object

MAX_JSON_BYTES = 512 * 2**20


_UTF16BOMS = (b"\xff\xfe", b"\xfe\xff")  # Excel's "Unicode text" export
# Known columns other than the abstract's: an empty cell in one of them means "not given".
_OPTIONAL_COLUMNS = frozenset(
    name for field, names in FIELD_ALIASES.items() if field != "abstract" for name in names
)
_CSV_FIELD_LIMIT = 2**31 - 1  # the largest value csv.field_size_limit accepts everywhere

# How surrogateescape decoding keeps a byte that is not UTF-8.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def iter_records(
    source: str | Path,
    *,
    format: str | None = None,
    stdin: IO[bytes] | Iterable[bytes] | None = None,
    notices: bool = False,
    venue: str | None = None,
    year: int | None = None,
) -> Iterator[Paper | InputError | InputNotice]:
    """Yield each record of ``source`` (a path, or "-" for stdin) as a Paper or an InputError.

    ``format`` is one of FORMATS; by default it comes from the file name (a ``.gz`` suffix aside:
    gzip is read transparently), else the content. ``stdin`` (a binary stream, or its lines)
    stands in for standard input, or for the pipe ``source`` names, already opened. The file is
    opened now: a missing one raises at once, as does one that holds no papers by its name and
    first bytes (``README.md``; io.formats). With ``notices``, an :class:`InputNotice` also
    comes where the reader has something to say that is no error (a paper list's header line,
    read for its venue and year), or a warning (io.paperlist). ``venue`` and ``year`` are
    those of each paper that does not give its own (nor has them from a paper list's header):
    as if the record said so, its stable id included.
    """
    given = check_given(venue, year)
    if format is not None and format not in FORMATS:
        raise InputError(
            f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", source=str(source)
        )
    if format == "parquet" or (format is None and is_parquet(source)):
        if is_stdio(source):
            raise InputError("Parquet cannot be read from stdin: give the file", source=STDIN_NAME)
        return read_parquet(source, venue=venue, year=year)
    if stdin is not None and reads_once(source):
        name = STDIN_NAME if is_stdio(source) else str(source)
        file_name = "" if is_stdio(source) else Path(source).name.removesuffix(".gz")
        records = _read_stream(_Chunks(stdin, name), name, file_name, format, given)
    else:
        stream, name, file_name = _open_papers(source, format)
        chunks = _Chunks(stream, name)
        records = _closing(stream, _read_stream(chunks, name, file_name, format, given))
    return records if notices else (r for r in records if not isinstance(r, InputNotice))


def check_records(source: str | Path, *, format: str | None = None) -> None:
    """Raise now what :func:`iter_records` raises on opening ``source`` (no such file, not
    readable, a directory, no papers by its name and first bytes, a Parquet file too big to
    read), holding it open no longer than that: a run checks every input before its models
    load, then opens them one at a time. What is wrong further in (a truncated gzip, UTF-16) is
    found when it is read."""
    if format is not None and format not in FORMATS:
        iter_records(source, format=format)  # raises: an unknown format
    if format == "parquet" or (format is None and is_parquet(source)):
        read_parquet(source)  # its footer read and checked; the file closed when dropped
        return
    stream, _, _ = _open_papers(source, format)
    if stream is not sys.stdin.buffer:
        stream.close()


def _open_papers(source: str | Path, format: str | None) -> tuple[IO[bytes], str, str]:
    """``source`` opened (gzip read through), its name for messages, and its file name without
    ``.gz`` ("" for stdin); refused if its name and first bytes say it holds no papers."""
    stream, name = open_input(source)
    file_name = "" if is_stdio(source) else Path(source).name.removesuffix(".gz")
    if format is None and file_name and detect_format(file_name, _peek(stream)) is None:
        stream.close()
        raise InputError(not_papers(file_name), source=name)
    return stream, name, file_name


def read_papers(
    source: str | Path,
    *,
    format: str | None = None,
    stdin: IO[bytes] | Iterable[bytes] | None = None,
    venue: str | None = None,
    year: int | None = None,
) -> Iterator[Paper]:
    """Like ``iter_records``, but raise the first InputError instead of yielding it."""
    records = iter_records(source, format=format, stdin=stdin, venue=venue, year=year)
    return _raise_errors(records)


def read_parquet(
    source: str | Path,
    *,
    start: int = 0,
    stop: int | None = None,
    venue: str | None = None,
    year: int | None = None,
) -> Iterator[Paper | InputError]:
    """The papers of a Parquet file, one per row, rows ``start`` to ``stop`` (0-based, ``stop``
    excluded): columns are fields, as in JSON Lines. A row that is no paper, or holds a value
    JSON cannot keep as it is, is an InputError naming its record (row) number, 1-based. The
    file's sizes are checked now (io.parquet.parquet_batches): a bomb fails at once. ``venue``
    and ``year``: as for :func:`iter_records`."""
    name, given = str(source), check_given(venue, year)
    batches = parquet_batches(open_parquet(source), name, start=start, stop=stop)
    return _parquet_rows(batches, name, start, stop, given)


def _parquet_rows(
    batches: Iterator[tuple[int, Any, list[int]]],
    name: str,
    start: int,
    stop: int | None,
    given: dict[str, Any],
) -> Iterator[Paper | InputError]:
    for first, batch, sizes in batches:
        for offset, row in enumerate(plain_rows(batch, [too_big(size) for size in sizes])):
            number = first + offset
            if number < start or (stop is not None and number >= stop):
                continue
            if isinstance(row, str):
                yield InputError(row, source=name, record=number + 1)
                continue
            try:
                fields = {key: plain(value, key) for key, value in row.items()}
            except Unkeepable as exc:
                yield InputError(str(exc), source=name, record=number + 1)
                continue
            yield _json_paper(fields, name, given, record=number + 1)


def read_line_range(
    source: str | Path, start: int, end: int, first_line: int
) -> Iterator[Paper | InputError]:
    """The records of JSON Lines file ``source`` in bytes ``start`` to ``end`` (both at the
    start of a line), numbered from ``first_line``: one partition of a big file, read without
    the rest of it (tagger.cluster plans them)."""
    name = str(source)
    try:
        with open(source, "rb") as handle:
            handle.seek(start)
            data = handle.read(end - start)
    except OSError as exc:
        raise InputError(f"cannot read it: {exc.strerror or exc}", source=name) from None
    lines = lines_of([data], name)
    if start == 0:
        lines = _raw_lines(lines)
    return _read_jsonl(lines, name, {}, first_line=first_line)


# --- files and streams -------------------------------------------------------------------------


def _closing(stream: IO[bytes], records: Iterator[Paper | InputError]):
    try:
        yield from records
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


class _Chunks:
    """A stream's bytes in chunks (io.files.chunks_of), which keeps those it has given until
    its format is told: its lines are read to tell it, and a library, whose bytes must be read
    as they are (CRLF line ends and all), is then read whole from the start (:meth:`whole`);
    any other format is read on as a stream (:meth:`stream_on`), keeping nothing."""

    def __init__(self, stream: IO[bytes] | Iterable[bytes], source: str) -> None:
        self._chunks = iter(chunks_of(stream, source))
        self.given: list[bytes] | None = []

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            if self.given is not None:
                self.given.append(chunk)
            yield chunk

    def stream_on(self) -> None:
        """Keep no chunk from now on: the stream is read once, however large."""
        self.given = None

    def whole(self, limit: int) -> bytes:
        """Every byte of the stream, those given and the rest; at most ``limit`` more than
        that, so that an endless one stops."""
        assert self.given is not None, "whole() after stream_on()"
        size = sum(map(len, self.given))
        for chunk in self._chunks:
            self.given.append(chunk)
            size += len(chunk)
            if size > limit:
                break
        return b"".join(self.given)


def _read_stream(
    chunks: _Chunks, source: str, name: str, format: str | None, given: dict[str, Any]
) -> Iterator[Paper | InputError | InputNotice]:
    lines = _raw_lines(lines_of(chunks, source))
    head = _head(lines)
    if head and (head[0].startswith(_UTF16BOMS) or _looks_utf16(b"".join(head))):
        raise InputError("the file is UTF-16; save it as UTF-8", source=source)
    chosen = format or detect_format(name, b"".join(head))
    if chosen is None:
        raise InputError(not_papers(name), source=source)
    lines = itertools.chain(head, lines)
    if is_library(chosen):
        yield from _read_library(chunks.whole(MAX_LIBRARY_BYTES), source, chosen, given)
        return
    chunks.stream_on()
    if chosen == "text":
        yield from _read_text(lines, source, given)
    elif chosen == "jsonl":
        yield from _read_jsonl(lines, source, given)
    elif chosen == "json":
        yield from _read_json(lines, source, given)
    else:
        head_line = head[-1].decode("utf-8", "replace") if head else ""
        yield from _read_csv(lines, source, csv_delimiter(name, head_line), given)


def _peek(stream: IO[bytes]) -> bytes:
    """The first bytes of ``stream``, which are read again: enough to tell its format."""
    peek = getattr(stream, "peek", None)
    try:
        return peek(1 << 16)[: 1 << 16] if peek else b""
    except (OSError, EOFError):
        return b""  # a broken gzip stream: reading it says what is wrong


def _raw_lines(stream: Iterable[bytes]) -> Iterator[bytes]:
    """The stream's lines as bytes, without a leading UTF-8 byte-order mark."""
    lines = iter(stream)
    first = next(lines, None)
    if first is None:
        return
    yield first.removeprefix(BOM)
    yield from lines


def _looks_utf16(head: bytes) -> bool:
    """UTF-16 without a byte-order mark: ASCII text with a NUL after (or before) every byte."""
    sample = head[:64]
    if len(sample) < 4:
        return False
    even, odd = sample[0::2], sample[1::2]
    return (set(odd) == {0} and 0 not in even) or (set(even) == {0} and 0 not in odd)


def _head(lines: Iterator[bytes]) -> list[bytes]:
    """Lines up to and including the first that is not blank: enough to tell the format; but
    for the start of a JSON array (CSL JSON or not: its first item tells) or a ``%`` comment
    line (before a BibTeX entry), lines up to 64 KB."""
    head, size = [], 0
    for line in lines:
        head.append(line)
        size += len(line)
        start = head[0].lstrip() if len(head) == 1 else b"".join(head).lstrip()
        if line.strip() and not start.startswith((b"[", b"%", BOM + b"[", BOM + b"%")):
            break
        if size > 1 << 16:
            break
    return head


def _text_lines(lines: Iterable[bytes]) -> Iterator[str]:
    """Decode line by line; bytes that are not UTF-8 are kept as surrogates (surrogateescape)
    for ``_utf8_problem`` to report."""
    for raw in lines:
        yield raw.decode("utf-8", "surrogateescape")


def _utf8_problem(text: str) -> str | None:
    """What is wrong, if ``text`` holds a byte that was not UTF-8."""
    found = _ESCAPED_BYTE.search(text)
    if found is None:
        return None
    byte = ord(found.group()) - 0xDC00
    before = _ESCAPED_BYTE.sub("?", text[: found.start()].rsplit("\n", 1)[-1][-20:])
    place = f"after {before!r}" if before else "at the start"
    return f"invalid UTF-8: byte 0x{byte:02X} {place}; save the file as UTF-8"


# --- records -----------------------------------------------------------------------------------


def _paper(
    fields: dict[str, Any],
    source: str,
    given: dict[str, Any],
    *,
    line: int | None = None,
    record: int | None = None,
) -> Paper | InputError:
    """A Paper from ``fields`` (with the ``given`` venue and year where they have none), or an
    InputError that says in one line why not."""
    missing = {k: v for k, v in given.items() if not _has(fields, k)}
    try:
        return Paper.model_validate({**fields, **missing} if missing else fields)
    except ValidationError as exc:
        reason = "; ".join(_one_problem(error) for error in exc.errors(include_url=False))
        return InputError(
            reason, source=source, line=line, record=record, record_id=_record_id(fields)
        )


def _one_problem(error: Any) -> str:
    """One pydantic error as ``'abstract': field required``; our own checks' message as is."""
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    message = "field required" if error["type"] == "missing" else error["msg"]
    message = message[:1].lower() + message[1:]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where!r}: {message}" if where else message


def _record_id(fields: dict[str, Any]) -> str | None:
    for name in FIELD_ALIASES["id"]:
        if fields.get(name) not in (None, ""):
            return str(fields[name])
    return None


def _has(fields: dict[str, Any], field: str) -> bool:
    """Whether ``fields`` give ``field``, under any of its names (records.FIELD_ALIASES)."""
    return any(fields.get(name) not in (None, "") for name in FIELD_ALIASES[field])


def check_given(venue: str | None, year: int | None) -> dict[str, Any]:
    """The venue and year given for the papers that lack them (``--venue``, ``--year``),
    checked, as the fields to add: a venue is a line of text, a year an int from FIRST_YEAR to
    LAST_YEAR (so that ``25`` is refused rather than read as the year 25)."""
    if venue is not None and not (
        isinstance(venue, str) and venue.strip() and not CONTROL.search(venue)
    ):
        raise ValueError(
            "The 'venue' parameter must be a line of text (not blank, no line breaks or other "
            f"control characters). Got {venue!r} instead."
        )
    if year is not None and not (
        isinstance(year, int) and not isinstance(year, bool) and FIRST_YEAR <= year <= LAST_YEAR
    ):
        raise ValueError(
            f"The 'year' parameter must be an int from {FIRST_YEAR} to {LAST_YEAR}. Got "
            f"{year!r} instead."
        )
    given = {"venue": venue.strip() if venue is not None else None, "year": year}
    return {key: value for key, value in given.items() if value is not None}


def _raise_errors(records: Iterator[Paper | InputError]) -> Iterator[Paper]:
    for record in records:
        if isinstance(record, InputError):
            raise record
        yield record


# --- paper-list text ---------------------------------------------------------------------------


def _read_text(
    lines: Iterable[bytes], source: str, given: dict[str, Any]
) -> Iterator[Paper | InputError | InputNotice]:
    """One abstract per paragraph, headers giving the venue and year (io.paperlist decides)."""
    for entry in paper_list(_text_lines(lines), source):
        if isinstance(entry, InputNotice):
            yield entry
            continue
        problem = _utf8_problem(entry.text)
        if len(entry.text) > MAX_ABSTRACT_CHARS:  # cut short by paper_list
            problem = (
                f"the paragraph is over {MAX_ABSTRACT_CHARS:,} characters long; tagger reads "
                "abstracts of up to that (is this a whole paper?)"
            )
        if problem:
            yield InputError(problem, source=source, line=entry.line)
        else:
            fields = {"abstract": entry.text, "venue": entry.venue, "year": entry.year}
            yield _paper(fields, source, given, line=entry.line)


# --- reference managers' libraries: BibTeX, RIS, CSL JSON (io.libraries) ---------------------


def _read_library(
    data: bytes, source: str, format: str, given: dict[str, Any]
) -> Iterator[Paper | InputError | InputNotice]:
    for item in library_records(data, source, format):
        if isinstance(item, (InputError, InputNotice)):
            yield item
        else:
            line, fields = item
            yield _paper(fields, source, given, line=line)


# --- JSON Lines and JSON -----------------------------------------------------------------------


def _read_jsonl(
    lines: Iterable[bytes], source: str, given: dict[str, Any], *, first_line: int = 1
) -> Iterator[Paper | InputError]:
    for number, line in enumerate(_text_lines(lines), first_line):
        if not line.strip():
            continue
        problem = _utf8_problem(line)
        if problem:
            yield InputError(problem, source=source, line=number)
            continue
        try:
            value = parse_json(line)
        except json.JSONDecodeError as exc:
            yield InputError(
                f"invalid JSON: {exc.msg} at column {exc.colno}", source=source, line=number
            )
            continue
        yield _json_paper(value, source, given, line=number)


def _read_json(
    lines: Iterable[bytes], source: str, given: dict[str, Any]
) -> Iterator[Paper | InputError]:
    """A JSON array of paper objects (or one object). The file is parsed whole, so it may be
    at most MAX_JSON_BYTES long."""
    parts, size = [], 0
    for line in lines:
        parts.append(line)
        size += len(line)
        if size > MAX_JSON_BYTES:
            raise InputError(
                f"a JSON array is read whole, and this one is over {MAX_JSON_BYTES // 2**20} MB: "
                "write one paper per line (JSON Lines) instead",
                source=source,
            )
    data = b"".join(parts)
    if not data.strip():
        return
    document = _load_json_document(data, source)
    if isinstance(document, dict):
        document = [document]
    if not isinstance(document, list):
        raise InputError(
            f"expected a JSON array of paper objects, got {_json_kind(document)}", source=source
        )
    for number, value in enumerate(document, 1):
        yield _json_paper(value, source, given, record=number)


def _load_json_document(data: bytes, source: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"invalid UTF-8: byte 0x{data[exc.start]:02X}; save the file as UTF-8",
            source=source,
            line=line,
        ) from None
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data" and text.lstrip().startswith("{"):
            hint = "; it looks like one object per line: read it as format 'jsonl'"
        raise InputError(
            f"invalid JSON: {exc.msg} at column {exc.colno}{hint}", source=source, line=exc.lineno
        ) from None


def _json_paper(
    value: Any,
    source: str,
    given: dict[str, Any],
    *,
    line: int | None = None,
    record: int | None = None,
) -> Paper | InputError:
    if not isinstance(value, dict):
        return InputError(
            f"expected a JSON object, got {_json_kind(value)}",
            source=source,
            line=line,
            record=record,
        )
    if is_tagged_object(value):  # a line of tagger's own output: its paper is tagged again
        try:
            paper = tagged_from_object(value, source=source, line=line, record=record).paper
        except InputError as exc:
            return exc
        missing = {k: v for k, v in given.items() if getattr(paper, k) is None}
        return paper.model_copy(update=missing) if missing else paper
    return _paper(value, source, given, line=line, record=record)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "an array", dict: "an object"}.get(type(value), "a value")


# --- CSV and TSV -------------------------------------------------------------------------------


def _read_csv(
    lines: Iterable[bytes], source: str, delimiter: str, given: dict[str, Any]
) -> Iterator[Paper | InputError]:
    """A header row, then one paper per row. Blank rows (Excel's trailing ``,,,``) are skipped."""
    if csv.field_size_limit() < _CSV_FIELD_LIMIT:
        csv.field_size_limit(_CSV_FIELD_LIMIT)
    reader = csv.reader(_text_lines(lines), delimiter=delimiter, skipinitialspace=True)
    rows = _csv_rows(reader)
    first = next(rows, None)
    if first is None:
        return
    header = _csv_header(*first, source)
    for line, row in rows:
        yield _csv_paper(header, row, source, line, given)


def _csv_rows(reader: Any) -> Iterator[tuple[int, list[str] | csv.Error]]:
    """Each row that is not blank, with the line it starts on; a row the csv module cannot
    parse comes as its error."""
    start = 1
    while True:
        try:
            row: list[str] | csv.Error = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            row = exc
        if isinstance(row, csv.Error) or any(cell.strip() for cell in row):
            yield start, row
        start = reader.line_num + 1


def _csv_header(line: int, row: list[str] | csv.Error, source: str) -> list[str]:
    """The column names; raise InputError if the header cannot name an abstract column."""
    if isinstance(row, csv.Error):
        raise InputError(f"cannot parse the CSV header: {row}", source=source, line=line)
    problem = _utf8_problem("".join(row))
    if problem:
        raise InputError(problem, source=source, line=line)
    names = [name.strip() for name in row]
    for name in names:
        if name and names.count(name) > 1:
            raise InputError(
                f"the header names the column {name!r} twice", source=source, line=line
            )
    if not any(name in FIELD_ALIASES["abstract"] for name in names):
        raise InputError(
            f"no abstract column: the header has {', '.join(map(repr, names))}; name the "
            f"column of abstracts one of {', '.join(FIELD_ALIASES['abstract'])}",
            source=source,
            line=line,
        )
    return names


def _csv_paper(
    header: list[str], row: list[str] | csv.Error, source: str, line: int, given: dict[str, Any]
) -> Paper | InputError:
    if isinstance(row, csv.Error):
        return InputError(f"cannot parse this CSV row: {row}", source=source, line=line)
    if len(row) != len(header):
        hint = " (quote fields that contain the delimiter)" if len(row) > len(header) else ""
        return InputError(
            f"the row has {len(row)} fields but the header has {len(header)}{hint}",
            source=source,
            line=line,
        )
    for cell in row:
        problem = _utf8_problem(cell)
        if problem:
            return InputError(problem, source=source, line=line)
    fields = {
        name: cell
        for name, cell in zip(header, row, strict=True)
        if name and not (cell == "" and name in _OPTIONAL_COLUMNS)
    }
    return _paper(fields, source, given, line=line)
