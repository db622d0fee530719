"""Streaming JSONL output: one line per record, written whole, flushed as it goes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel

from .errors import InputError


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
        (--resume cuts off the rare half line a full disk can leave)."""
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


def resume_point(path: Path) -> list[str]:
    """Prepare a tagged JSONL file to be continued: cut off a half-written last line (left by a
    killed run or a full disk) and return the paper ids of the complete lines, in order."""
    if not path.exists():
        return []
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
    ids = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                ids.append(orjson.loads(line)["paper"]["id"])
            except (orjson.JSONDecodeError, KeyError, TypeError):
                raise InputError("not a line of tagged JSONL: cannot resume from this file",
                                 source=str(path), line=number) from None
    return ids
