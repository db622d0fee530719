"""Tagged output, both ways: written here one whole line per paper (JSON Lines) or one row per
paper (Parquet), and read back only here.

Every command that reads tagger's output (filter, stats, report, suggest, eval, taxonomy lint
--corpus, and tag --resume) goes through :func:`read_tagged` and gets back the same
:class:`~tagger.records.TaggedPaper` the writer was given, from a JSONL file, a Parquet file, or
a directory of parts (`tagger tag --cluster`).

The Parquet schema (:func:`parquet_schema`): the paper's ``id``, ``title``, ``abstract``,
``venue``, ``year``; ``keyphrases`` (list of ``{text, normalized, score}``); ``tags`` and
``facets`` (lists of ``{id, score, path}``); ``areas`` (every area id a tag or facet names, its
ancestors included: what ``filter --area`` matches); and ``record``, the whole tagged line as
JSON, from which readers rebuild the record exactly.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from .errors import STDIN_NAME, InputError
from .files import is_stdio, lines_of, read_lines
from .records import TaggedPaper

if TYPE_CHECKING:
    from .taxonomy import Taxonomy

T = TypeVar("T")
NOT_TAGGED = "not a line of tagged JSONL (run `tagger tag` first)"


# Characters that JSON leaves raw but that some line splitters (Python's str.splitlines, older
# JavaScript) take for line ends; as UTF-8 bytes, which cannot occur inside another character.
_LINE_BREAKS = {b"\xc2\x85": b"\\u0085", b"\xe2\x80\xa8": b"\\u2028", b"\xe2\x80\xa9": b"\\u2029"}


def dumps(record: BaseModel | dict[str, Any]) -> bytes:
    """One JSON line (with its newline) for a record. orjson writes it, or, for an integer beyond
    64 bits that a paper's own field may hold (readers keep them exact), the json module does.
    Nothing in the line but its end reads as a line break, however it is split."""
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
    try:
        line = orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        text = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        line = text.encode() + b"\n"
    for raw, escaped in _LINE_BREAKS.items():
        if raw in line:
            line = line.replace(raw, escaped)
    return line


def rejected_line(error: InputError) -> bytes:
    """One line of an errors report (``--errors``, a part's ``.errors.jsonl``): where the
    rejected record is, the record as read, its id if known, and why."""
    where = {"source": error.source, "line": error.line, "record": error.record}
    return dumps({**where, "id": error.record_id, "reason": error.reason})


def _finite(value: Any) -> Any:
    """NaN and infinities as null, as orjson writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def parquet_schema():
    import pyarrow as pa

    tag = pa.struct([("id", pa.string()), ("score", pa.float64()), ("path", pa.list_(pa.string()))])
    return pa.schema(
        [
            ("id", pa.string()),
            ("title", pa.string()),
            ("abstract", pa.string()),
            ("venue", pa.string()),
            ("year", pa.int64()),
            (
                "keyphrases",
                pa.list_(
                    pa.struct(
                        [
                            ("text", pa.string()),
                            ("normalized", pa.string()),
                            ("score", pa.float64()),
                        ]
                    )
                ),
            ),
            ("tags", pa.list_(tag)),
            ("facets", pa.list_(tag)),
            ("areas", pa.list_(pa.string())),
            ("record", pa.string()),
        ]
    )


def parquet_row(record: TaggedPaper, line: bytes) -> dict[str, Any]:
    """One row of the Parquet schema: a tagged record and its JSON line."""
    paper = record.paper
    tags = [{"id": tag.id, "score": tag.score, "path": list(tag.path)} for tag in record.tags]
    facets = [{"id": tag.id, "score": tag.score, "path": list(tag.path)} for tag in record.facets]
    areas = sorted({area for tag in record.tags + record.facets for area in tag.path})
    return {
        "id": paper.id,
        "title": paper.title,
        "abstract": paper.abstract,
        "venue": paper.venue,
        "year": paper.year,
        "keyphrases": [
            {"text": k.text, "normalized": k.normalized, "score": k.score}
            for k in record.keyphrases
        ],
        "tags": tags,
        "facets": facets,
        "areas": areas,
        "record": line.decode("utf-8").rstrip("\n"),
    }


class ParquetWriter:
    """Writes tagged records to a Parquet file, a row group every ``group`` records. The file is
    written under a temporary name beside ``path`` and renamed on :meth:`close`: a killed run
    leaves no half file (and no resume: rerun it)."""

    def __init__(
        self, path: str | Path, *, group: int = 1000, temporary: Path | None = None
    ) -> None:
        import pyarrow.parquet as pq

        self.path = Path(path)
        self.temporary = temporary or self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self.schema = parquet_schema()
        self._writer = pq.ParquetWriter(self.temporary, self.schema, compression="zstd")
        self.group = group
        self._rows: list[dict[str, Any]] = []
        self.count = 0

    def write(self, record: TaggedPaper) -> None:
        self._rows.append(parquet_row(record, dumps(record)))
        self.count += 1
        if len(self._rows) >= self.group:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self._rows:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self.schema))
            self._rows = []

    def close(self) -> None:
        """Write what is left and put the file in place."""
        self.flush()
        self._writer.close()
        os.replace(self.temporary, self.path)

    def discard(self) -> None:
        """Drop the temporary file (the run failed)."""
        with contextlib.suppress(OSError):
            self._writer.close()
        with contextlib.suppress(OSError):
            self.temporary.unlink()


class JsonlWriter:
    """Writes records to a binary stream, each as one complete line."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.count = 0

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Write one line in one piece and flush it: a crash leaves only whole lines behind
        (a resumed run cuts off the rare half line a full disk can leave)."""
        view = memoryview(dumps(record))
        while view:  # an unbuffered file may take part of a line at a time
            written = self.stream.write(view)
            if not written:
                raise OSError(f"the output took none of a {len(view)}-byte line")
            view = view[written:]
        self.stream.flush()
        self.count += 1

    def flush(self) -> None:
        self.stream.flush()


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

    number: int  # 1-based line number
    raw: bytes  # the line as in the file, ending in a newline
    record: TaggedPaper
    source: str = ""  # the file's name, as messages give it


Skip = Callable[[InputError], None]


def read_tagged(
    source: str | Path, *, stdin: Iterable[bytes] | None = None, skip: Skip | None = None
) -> Iterator[TaggedPaper]:
    """The records of tagged output: a file, or "-" for stdin (read once, as it streams).

    A line that is not tagged output raises :class:`InputError` with its number, or, given
    ``skip``, is passed to it and left out (the command line warns and goes on) once an earlier
    line was read: a file whose first line is not tagged output is not tagged output.
    """
    return (line.record for line in read_tagged_lines(source, stdin=stdin, skip=skip))


def read_tagged_lines(
    source: str | Path, *, stdin: Iterable[bytes] | None = None, skip: Skip | None = None
) -> Iterator[TaggedLine]:
    """Each non-blank line of tagged output with its number and bytes (``filter`` copies them
    through unchanged). ``stdin`` stands in for standard input when ``source`` is "-"."""
    if is_stdio(source) and stdin is not None:
        return _parse_lines(lines_of(stdin, STDIN_NAME), STDIN_NAME, skip)
    if not is_stdio(source) and Path(source).is_dir():
        return _read_parts(Path(source), skip)
    if not is_stdio(source) and _is_parquet(source):
        return _parquet_lines(source, skip)
    name = STDIN_NAME if is_stdio(source) else str(source)
    return _parse_lines(read_lines(source), name, skip)


def part_files(directory: Path) -> list[Path]:
    """The parts of a `tagger tag --cluster` output directory, in order."""
    return sorted(
        path
        for path in directory.iterdir()
        if path.name.startswith("part-")
        and path.suffix in (".jsonl", ".parquet")
        and not path.name.endswith(".errors.jsonl")
    )


def _read_parts(directory: Path, skip: Skip | None) -> Iterator[TaggedLine]:
    parts = part_files(directory)
    if not parts:
        raise InputError(
            "is a directory, not a file, and holds no part files (part-00000.jsonl, ...) of "
            "`tagger tag --cluster`",
            source=str(directory),
        )
    return (line for part in parts for line in read_tagged_lines(part, skip=skip))


def _is_parquet(source: str | Path) -> bool:
    from .readers import is_parquet

    return is_parquet(source)


def _parquet_lines(source: str | Path, skip: Skip | None) -> Iterator[TaggedLine]:
    import pyarrow.parquet as pq

    name = str(source)
    try:
        table = pq.ParquetFile(source)
    except (OSError, ValueError) as exc:
        raise InputError(f"not a Parquet file it can read: {exc}", source=name) from None
    if "record" not in table.schema_arrow.names:
        raise InputError(
            "a Parquet file without a 'record' column: not tagged output (run `tagger tag`)",
            source=name,
        )
    return _parquet_records(table, name, skip)


def _parquet_records(table: Any, name: str, skip: Skip | None) -> Iterator[TaggedLine]:
    number = 0
    for batch in table.iter_batches(columns=["record"]):
        raws = [(value or "").encode("utf-8") + b"\n" for value in batch.column(0).to_pylist()]
        for raw in raws:
            number += 1
            yield from _parse_lines([raw], name, skip, first=number)


def _parse_lines(
    lines: Iterable[bytes], name: str, skip: Skip | None, *, first: int = 1
) -> Iterator[TaggedLine]:
    read = first - 1  # rows of a Parquet file come one call each
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


def same_taxonomy(
    records: Iterable[T], taxonomy: Taxonomy, warn: Callable[[str], None], source: str
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


def parse_tagged_line(raw: bytes, *, source: str, line: int) -> TaggedPaper:
    """One line of tagged output as its record, or an InputError that says why not."""
    try:
        return TaggedPaper.model_validate_json(raw)
    except ValidationError as exc:
        raise _not_tagged(exc, source=source, line=line) from None


def is_tagged_object(value: Any) -> bool:
    """Whether a parsed JSON object has the shape of tagged output (readers tag its paper)."""
    return isinstance(value, dict) and isinstance(value.get("paper"), dict) and "tags" in value


def tagged_from_object(
    value: Any, *, source: str, line: int | None = None, record: int | None = None
) -> TaggedPaper:
    """A parsed JSON object of tagged output as its record, or an InputError that says why not."""
    try:
        return TaggedPaper.model_validate(value)
    except ValidationError as exc:
        raise _not_tagged(exc, source=source, line=line, record=record) from None


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
    by its first non-blank line. For stdin, also the lines to read it from next, the peeked ones
    included: pass them on as ``stdin=`` so that nothing is read twice or lost. A directory is
    a `tagger tag --cluster` output; a Parquet file is tagged output if it has a 'record'
    column."""
    if not is_stdio(source) and Path(source).is_dir():
        return True, None
    if not is_stdio(source) and _is_parquet(source):
        import pyarrow.parquet as pq

        try:
            return "record" in pq.ParquetFile(source).schema_arrow.names, None
        except (OSError, ValueError):
            return False, None  # the papers' reader says what is wrong with it
    lines = read_lines(source)
    head: list[bytes] = []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    tagged = _is_tagged(head[-1]) if head else False
    if is_stdio(source):
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
