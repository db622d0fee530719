"""Streaming JSONL output: one line per record, written whole, flushed as it goes."""

from __future__ import annotations

from typing import IO, Any

import orjson
from pydantic import BaseModel


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
        self.stream.write(dumps(record))
        self.count += 1

    def flush(self) -> None:
        self.stream.flush()
