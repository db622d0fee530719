"""JSON as tagger reads and writes it: one object per line, big integers kept exact, nothing in a
line that a line splitter could take for its end."""

from __future__ import annotations

import json
import math
import re
from typing import IO, Any

import orjson
from pydantic import BaseModel

from ..errors import InputError

# 19 digits or more may be an integer beyond 64 bits, which orjson reads as a float.
_LONG_DIGITS = re.compile(r"\d{19}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")

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


REJECTED_FIELDS = ("source", "line", "record", "id", "reason")  # of a line of an errors report


def rejected_line(error: InputError) -> bytes:
    """One line of an errors report (``--errors``, a part's ``.errors.jsonl``): where the
    rejected record is, the record as read, its id if known, and why."""
    values = (error.source, error.line, error.record, error.record_id, error.reason)
    return dumps(dict(zip(REJECTED_FIELDS, values, strict=True)))


def is_rejected_object(value: Any) -> bool:
    """Whether a parsed JSON object has the shape of a line of an errors report."""
    return isinstance(value, dict) and tuple(value) == REJECTED_FIELDS


def _finite(value: Any) -> Any:
    """NaN and infinities as null, as orjson writes them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def parse_json(text: str) -> Any:
    """Parse with orjson. Where it would read an integer beyond 64 bits as a float, or fails,
    use json: it keeps big integers exact, reads NaN, and explains errors well. Like orjson,
    refuse half a surrogate pair (text no UTF-8 writer could write back)."""
    try:
        if not _LONG_DIGITS.search(text):
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                pass
        value = json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    escape = _SURROGATE_ESCAPE.search(text)
    if escape and not _encodable(value):
        raise json.JSONDecodeError("a \\u escape is half a surrogate pair", text, escape.start())
    return value


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
