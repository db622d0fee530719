"""Tagged output, both ways: written here one whole line per paper, and read back only here.

Every command that reads tagger's output (filter, stats, report, suggest, eval, taxonomy lint
--corpus, and tag --resume) goes through :func:`read_tagged` and gets back the same
:class:`~tagger.records.TaggedPaper` the writer was given.
"""

from __future__ import annotations

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


def _finite(value: Any) -> Any:
    """NaN and infinities as null, as orjson writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


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
    name = STDIN_NAME if is_stdio(source) else str(source)
    return _parse_lines(read_lines(source), name, skip)


def _parse_lines(lines: Iterable[bytes], name: str, skip: Skip | None) -> Iterator[TaggedLine]:
    read = 0
    for number, raw in enumerate(lines, start=1):
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
        yield TaggedLine(number, raw if raw.endswith(b"\n") else raw + b"\n", record)


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
    included: pass them on as ``stdin=`` so that nothing is read twice or lost."""
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
