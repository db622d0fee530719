"""Tagged output, both ways: written here one whole line per paper, and read back only here.

Every command that reads tagger's output (filter, stats, report, suggest, eval, taxonomy lint
--corpus, and tag --resume) goes through :func:`read_tagged` and gets back the same
:class:`~tagger.records.TaggedPaper` the writer was given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel, ValidationError

from .errors import STDIN_NAME, InputError
from .records import TaggedPaper

STDIN = "-"
NOT_TAGGED = "not a line of tagged JSONL (run `tagger tag` first)"


def dumps(record: BaseModel | dict[str, Any]) -> bytes:
    """One JSON line (with its newline) for a record."""
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
    return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)


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


def read_tagged(
    source: str | Path, *, stdin: Iterable[bytes] | None = None
) -> Iterator[TaggedPaper]:
    """The records of tagged output: a file, or "-" for stdin (read once, as it streams).

    Raises :class:`InputError`, with the line, at the first line that is not tagged output.
    """
    return (line.record for line in read_tagged_lines(source, stdin=stdin))


def read_tagged_lines(
    source: str | Path, *, stdin: Iterable[bytes] | None = None
) -> Iterator[TaggedLine]:
    """Each non-blank line of tagged output with its number and bytes (``filter`` copies them
    through unchanged). ``stdin`` stands in for standard input when ``source`` is "-"."""
    if str(source) == STDIN:
        return _parse_lines(stdin if stdin is not None else sys.stdin.buffer, STDIN_NAME)
    return _parse_lines(read_lines(source), str(source))


def _parse_lines(lines: Iterable[bytes], name: str) -> Iterator[TaggedLine]:
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        yield TaggedLine(
            number,
            raw if raw.endswith(b"\n") else raw + b"\n",
            parse_tagged_line(raw, source=name, line=number),
        )


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
    if any(not e["loc"] or e["loc"][0] in ("paper", "tags") for e in errors):
        return InputError(NOT_TAGGED, **where)  # not even close
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"])
    message = first["msg"][:1].lower() + first["msg"][1:]
    return InputError(f"not a line of tagged JSONL: {field!r}: {message}", **where)


def sniff_tagged(source: str | Path) -> tuple[bool, Iterator[bytes] | None]:
    """Whether ``source`` (a file, or "-") holds tagged output rather than papers to tag, judged
    by its first non-blank line. For stdin, also the lines to read it from next, the peeked ones
    included: pass them on as ``stdin=`` so that nothing is read twice or lost."""
    if str(source) == STDIN:
        lines = iter(sys.stdin.buffer)
        head: list[bytes] = []
        for line in lines:
            head.append(line)
            if line.strip():
                break
        return _is_tagged(head[-1] if head else b""), _chain(head, lines)
    for line in read_lines(source):
        if line.strip():
            return _is_tagged(line), None
    return False, None


def read_lines(source: str | Path) -> Iterator[bytes]:
    """The lines of a file, with an InputError rather than an OSError when it cannot be read."""
    name = str(source)
    try:
        handle = open(source, "rb")  # noqa: SIM115 - closed by the generator
    except FileNotFoundError:
        raise InputError("no such file", source=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", source=name) from None
    except OSError as exc:
        raise InputError(f"cannot read it: {exc.strerror}", source=name) from None
    return _lines_of(handle)


def _lines_of(handle: IO[bytes]) -> Iterator[bytes]:
    with handle:
        yield from handle


def _is_tagged(raw: bytes) -> bool:
    try:
        TaggedPaper.model_validate_json(raw)
    except ValidationError:
        return False
    return True


def _chain(head: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from head
    yield from rest
