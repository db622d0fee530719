"""Tagged output, both ways: written here one whole line per paper (JSON Lines) or one row per
paper (Parquet), and read back only here.

Every command that reads tagger's output (filter, stats, report, suggest, eval, taxonomy lint
--corpus, and tag --resume) goes through :func:`read_tagged` and gets back the same
:class:`~tagger.records.TaggedPaper` the writer was given, from a JSONL file, a Parquet file, or
a directory of parts (`tagger tag --cluster`).

JSON lines are written by :mod:`tagger.io.jsonl`, Parquet by :mod:`tagger.io.parquet` (its
docstring gives the schema); a Parquet file's ``record`` column holds each whole tagged line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from ..errors import STDIN_NAME, InputError
from ..errors import where as where_of
from ..records import TaggedPaper
from .files import is_stdio, lines_of, read_lines, reads_once
from .formats import is_parquet
from .jsonl import is_rejected_object, parse_json
from .parquet import open_parquet, parquet_batches, parquet_schema, too_big
from .parts import Incomplete, parts_to_read
from .parts import part_files as part_files  # what a part directory holds, for its callers


class TaxonomyIdentity(Protocol):
    """What :func:`same_taxonomy` reads of a taxonomy (a tagger.taxonomy.model.Taxonomy)."""

    version: str
    sha256: str
    source: str


T = TypeVar("T")
NOT_TAGGED = "not a line of tagged JSONL (run `tagger tag` first)"


def cut_partial_line(path: Path) -> None:
    """Make a tagged file safe to append to: cut off a half-written last line, which a killed run
    or a full disk can leave."""
    with path.open("r+b") as handle:
        end = handle.seek(0, os.SEEK_END)
        position = end
        while position > 0:  # find the last newline, reading backwards in blocks
            start = max(0, position - 65536)
            handle.seek(start)
            block = handle.read(position - start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                position = start + newline + 1
                break
            position = start
        if position < end:
            handle.truncate(position)


@dataclass(frozen=True, slots=True)
class TaggedLine:
    """One line of tagged output: where it is, its bytes (as written), and its record."""

    number: int  # 1-based line number (row number, in a Parquet file)
    raw: bytes  # the line as in the file, ending in a newline
    record: TaggedPaper
    source: str = ""  # the file's name, as messages give it
    row: bool = False  # a row of a Parquet file, not a line

    def where(self) -> dict[str, Any]:
        """Where the line is, as InputError takes it: its source and line (or record)."""
        return {"source": self.source, ("record" if self.row else "line"): self.number}


Skip = Callable[[InputError], None]


def read_tagged(
    source: str | Path,
    *,
    stdin: Iterable[bytes] | None = None,
    skip: Skip | None = None,
    incomplete: Incomplete | None = None,
) -> Iterator[TaggedPaper]:
    """The records of tagged output: a file, or "-" for stdin (read once, as it streams), or a
    part directory (io.parts: exactly the parts its manifest names, checked first).

    A line that is not tagged output raises :class:`InputError` with its number, or, given
    ``skip``, is passed to it and left out (the command line warns and goes on) once an earlier
    line was read: a file whose first line is not tagged output is not tagged output. A part
    directory that is not a whole run's output is refused, or, given ``incomplete``, its intact
    parts are read and what is left out is passed to it.
    """
    lines = read_tagged_lines(source, stdin=stdin, skip=skip, incomplete=incomplete)
    return (line.record for line in lines)


def read_tagged_lines(
    source: str | Path,
    *,
    stdin: Iterable[bytes] | None = None,
    skip: Skip | None = None,
    incomplete: Incomplete | None = None,
) -> Iterator[TaggedLine]:
    """Each non-blank line of tagged output with its number and bytes (``filter`` copies them
    through unchanged). ``stdin`` stands in for standard input when ``source`` is "-", or for
    the pipe ``source`` names, already opened (:func:`sniff_tagged` gives it)."""
    if stdin is not None and reads_once(source):
        name = STDIN_NAME if is_stdio(source) else str(source)
        return _parse_lines(lines_of(stdin, name), name, skip)
    if not is_stdio(source) and Path(source).is_dir():
        parts = parts_to_read(Path(source), incomplete)
        return (line for part in parts for line in read_tagged_lines(part, skip=skip))
    if not is_stdio(source) and is_parquet(source):
        return _parquet_lines(source, skip)
    name = STDIN_NAME if is_stdio(source) else str(source)
    return _parse_lines(read_lines(source), name, skip)


def _parquet_lines(source: str | Path, skip: Skip | None) -> Iterator[TaggedLine]:
    import pyarrow as pa

    name = str(source)
    table = open_parquet(source)
    schema = table.schema_arrow
    if "record" not in schema.names:
        raise InputError(
            "a Parquet file without a 'record' column: not tagged output (run `tagger tag`)",
            source=name,
        )
    kind = schema.field("record").type
    kind = kind.value_type if pa.types.is_dictionary(kind) else kind  # open_parquet reads so
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise InputError(
            f"its 'record' column holds {kind}, not text: not tagged output (tagger writes each "
            "tagged line there as a string; run `tagger tag`)",
            source=name,
        )
    return _parquet_records(parquet_batches(table, name, columns=["record"]), name, skip)


def _text(column: Any, k: int) -> str | None | UnicodeDecodeError:
    """Row ``k`` of a text column, or the error that decoding it raised."""
    try:
        return column[k].as_py()
    except UnicodeDecodeError as exc:
        return exc


def _parquet_records(
    batches: Iterator[tuple[int, Any, list[int]]], name: str, skip: Skip | None
) -> Iterator[TaggedLine]:
    read = 0
    for first, batch, sizes in batches:
        column, big = batch.column(0), [too_big(size) for size in sizes]
        try:
            values = None if any(big) else column.to_pylist()
        except UnicodeDecodeError:
            values = None
        if values is None:  # row by row: the big ones never decoded, a damaged one said so
            values = [None if why else _text(column, k) for k, why in enumerate(big)]
        for offset, value in enumerate(values):
            number = first + offset + 1
            try:
                if isinstance(value, UnicodeDecodeError):
                    raise InputError(
                        f"cannot read it: its 'record' is not UTF-8 text ({value.reason} at byte "
                        f"{value.start:,}): the file is damaged",
                        source=name,
                        record=number,
                    )
                if big[offset]:
                    raise InputError(big[offset], source=name, record=number)
                if value is None or not value.strip():
                    raise InputError(
                        f"its 'record' is {'null' if value is None else 'empty'}: no tagged "
                        "line there (was the column written by another program?)",
                        source=name,
                        record=number,
                    )
                raw = value.encode("utf-8") + b"\n"
                record = parse_tagged_line(raw, source=name, record=number)
            except InputError as error:
                if skip is None or not read:
                    raise
                skip(error)
                continue
            read += 1
            yield TaggedLine(number, raw, record, name, row=True)


def _parse_lines(
    lines: Iterable[bytes], name: str, skip: Skip | None, *, first: int = 1
) -> Iterator[TaggedLine]:
    read = 0
    for number, raw in enumerate(lines, start=first):
        if not raw.strip():
            continue
        try:
            record = parse_tagged_line(raw, source=name, line=number)
        except InputError as exc:
            error = exc
            if not raw.endswith(b"\n"):  # the last line, cut short
                error = InputError(
                    "the file ends in the middle of this line (an interrupted run?); the lines "
                    "before it are read",
                    source=name,
                    line=number,
                )
            if skip is None or not read:
                raise error from None
            skip(error)
            continue
        read += 1
        yield TaggedLine(number, raw if raw.endswith(b"\n") else raw + b"\n", record, name)


def repeated_ids(
    lines: Iterable[T], warn: Callable[[str], None] | None, source: str
) -> Iterator[T]:
    """The records (or tagged lines), with a warning when a paper id comes again: the first
    time with where, and at the end how many ids came more than once. Two copies of a part, or a
    file given twice, count every paper twice."""
    seen: set[str] = set()
    repeated: set[str] = set()
    for item in lines:
        record = item.record if isinstance(item, TaggedLine) else item
        paper_id = record.paper.id
        if paper_id in seen:
            if not repeated and warn is not None:
                at = where_of(**item.where()) if isinstance(item, TaggedLine) else ""
                warn(
                    f"{at}paper id {paper_id!r} appears again in {source}; every line is read, "
                    "so counts include it twice"
                )
            repeated.add(paper_id)
        seen.add(paper_id)
        yield item
    if len(repeated) > 1 and warn is not None:
        warn(f"{len(repeated):,} paper ids appear more than once in {source}")


def same_taxonomy(
    records: Iterable[T], taxonomy: TaxonomyIdentity, warn: Callable[[str], None], source: str
) -> Iterator[T]:
    """The records (or tagged lines), with a warning (once) if one was tagged with another
    taxonomy than ``taxonomy``: its areas may not be this taxonomy's, and counts by area would
    mislead."""
    for number, item in enumerate(records, start=1):
        record = item.record if isinstance(item, TaggedLine) else item
        if record.provenance.taxonomy_sha256 != taxonomy.sha256 and warn is not None:
            warn(
                f"{source}: paper {number} was tagged with taxonomy version "
                f"{record.provenance.taxonomy_version} (sha256 "
                f"{record.provenance.taxonomy_sha256[:12]}), not with {taxonomy.source} "
                f"(version {taxonomy.version}, sha256 {taxonomy.sha256[:12]}): areas it does not "
                "have are not counted; pass the taxonomy it was tagged with (--taxonomy)"
            )
            warn = None
        yield item


def same_embedding(records: Iterable[T], warn: Callable[[str], None], source: str) -> Iterator[T]:
    """The records (or tagged lines), with a warning (once) if one was tagged with another
    embedding model (or backend) than the lines before it: similarities, and so scores, from two
    embedding spaces are not on one scale, and counts would mix them."""
    first: str | None = None
    for number, item in enumerate(records, start=1):
        record = item.record if isinstance(item, TaggedLine) else item
        model = record.provenance.embedding_model
        if first is None:
            first = model
        elif model != first and warn is not None:
            warn(
                f"{source}: paper {number} was tagged with the embedding model {model!r}, and "
                f"the papers before it with {first!r}: their tags were weighed in two embedding "
                "spaces, and counts mix them; tag them again with one --embedding-backend"
            )
            warn = None
        yield item


def parse_tagged_line(
    raw: bytes, *, source: str, line: int | None = None, record: int | None = None
) -> TaggedPaper:
    """One line of tagged output as its record, or an InputError that says why not."""
    try:
        parsed = TaggedPaper.model_validate_json(raw)
    except ValidationError as exc:
        raise _not_tagged(exc, source=source, line=line, record=record) from None
    _check_spans(parsed, source=source, line=line, record=record)
    return parsed


def is_tagged_object(value: Any) -> bool:
    """Whether a parsed JSON object has the shape of tagged output (readers tag its paper)."""
    return isinstance(value, dict) and isinstance(value.get("paper"), dict) and "tags" in value


def own_output(path: str | Path) -> str | None:
    """What of tagger's own output the file ``path`` holds, judged by its first non-blank line
    (or a Parquet file's columns): "tagged output" (lines with a paper, its tags and the
    provenance of the run), "an errors report" (io.jsonl.rejected_line), or None: papers, or
    what its reader will say is wrong with it. A directory of papers read by `tagger tag` leaves
    these out, so an output written there is not read back as papers."""
    try:
        if is_parquet(path):
            names = set(open_parquet(path).schema_arrow.names)
            return "tagged output" if set(parquet_schema().names) <= names else None
        lines = read_lines(path)
        try:
            first = next((line for line in lines if line.strip()), b"")
        finally:
            lines.close()
        value = parse_json(first.decode("utf-8").removeprefix("\ufeff"))
    except (InputError, ValueError):  # not JSON (UnicodeDecodeError, JSONDecodeError), unreadable
        return None
    if is_tagged_object(value) and isinstance(value.get("provenance"), dict):
        return "tagged output"
    return "an errors report" if is_rejected_object(value) else None


def tagged_from_object(
    value: Any, *, source: str, line: int | None = None, record: int | None = None
) -> TaggedPaper:
    """A parsed JSON object of tagged output as its record, or an InputError that says why not."""
    try:
        parsed = TaggedPaper.model_validate(value)
    except ValidationError as exc:
        raise _not_tagged(exc, source=source, line=line, record=record) from None
    _check_spans(parsed, source=source, line=line, record=record)
    return parsed


def _check_spans(parsed: TaggedPaper, **where: Any) -> None:
    """Refuse a line whose keyphrase spans or evidence do not lie in its paper's text (or whose
    evidence is not the text it points at): retag and report read the text there."""
    texts = {"title": parsed.paper.title or "", "abstract": parsed.paper.abstract}
    for k, keyphrase in enumerate(parsed.keyphrases):
        for m, span in enumerate(keyphrase.spans):
            problem = _outside(span.field, span.start, span.end, texts[span.field])
            if problem:
                raise _bad_span(f"keyphrases.{k}.spans.{m}", problem, where)
    for kind in ("tags", "facets"):
        for k, tag in enumerate(getattr(parsed, kind)):
            for m, evidence in enumerate(tag.evidence):
                text = texts[evidence.field]
                problem = _outside(evidence.field, evidence.start, evidence.end, text)
                if problem is None and text[evidence.start : evidence.end] != evidence.text:
                    problem = (
                        f"its text {evidence.text[:40]!r} is not the {evidence.field}'s "
                        f"characters {evidence.start:,} to {evidence.end:,}"
                    )
                if problem:
                    raise _bad_span(f"{kind}.{k}.evidence.{m}", problem, where)


def _outside(field: str, start: int, end: int, text: str) -> str | None:
    if 0 <= start < end <= len(text):
        return None
    return (
        f"characters {start:,} to {end:,} of the {field}, which has {len(text):,}: not in "
        "this paper's text"
    )


def _bad_span(at: str, problem: str, where: dict[str, Any]) -> InputError:
    return InputError(f"not a line of tagged JSONL: {at!r}: {problem}", **where)


def _not_tagged(exc: ValidationError, **where: Any) -> InputError:
    errors = exc.errors(include_url=False)
    if any(e["type"] == "json_invalid" or e["loc"] in ((), ("paper",), ("tags",)) for e in errors):
        return InputError(NOT_TAGGED, **where)  # not even close: no paper, no tags
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"])
    message = first["msg"][:1].lower() + first["msg"][1:]
    return InputError(f"not a line of tagged JSONL: {field!r}: {message}", **where)


def sniff_tagged(source: str | Path) -> tuple[bool, Iterator[bytes] | None]:
    """Whether ``source`` (a file, or "-") holds tagged output rather than papers to tag, judged
    by its first non-blank line. For stdin or a pipe (io.files.reads_once), also the lines to
    read it from next, the peeked ones included: pass them on as ``stdin=`` so that nothing is
    read twice or lost. A directory is
    a `tagger tag --cluster` output; a Parquet file is tagged output if it has a 'record'
    column."""
    if not is_stdio(source) and Path(source).is_dir():
        return True, None
    if not is_stdio(source) and is_parquet(source):
        try:
            return "record" in open_parquet(source).schema_arrow.names, None
        except InputError:
            return False, None  # the papers' reader says what is wrong with it
    lines = read_lines(source)
    head: list[bytes] = []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    tagged = _is_tagged(head[-1]) if head else False
    if reads_once(source):
        return tagged, _chain(head, lines)
    lines.close()
    return tagged, None


def _is_tagged(raw: bytes) -> bool:
    try:
        TaggedPaper.model_validate_json(raw)
    except ValidationError:
        return False
    return True


def _chain(head: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from head
    yield from rest


def count_lines(source: str | Path) -> int | None:
    """About how many lines of tagged output ``source`` holds, counted cheaply for a progress
    bar: the rows a Parquet file's footer gives, the non-blank lines of JSON Lines (bytes
    counted, nothing parsed), the sum of a part directory's parts; None for stdin or a pipe,
    which cannot be read twice, and for what cannot be read (reading it says what is wrong)."""
    if reads_once(source):
        return None
    path = Path(source)
    try:
        if path.is_dir():
            counts = [count_lines(part) for part in part_files(path)]
            return None if None in counts else sum(c for c in counts if c is not None)
        if is_parquet(path):
            return open_parquet(path).metadata.num_rows
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except (OSError, InputError):
        return None
