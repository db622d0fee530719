"""The partitions of a cluster run: input files cut into runs of records, each named by its
content, and read back on a worker.

:func:`plan` reads each input once, in the client: a JSON Lines file is cut at line starts (a
partition is a byte range, and each task reads only its own bytes), any other file by record
index. Each partition records its content's sha256 (its bytes, or its records), so that a
``--resume`` proves the inputs are what the directory's parts were tagged from, and
:func:`read_partition`, on a worker, refuses a partition whose file changed since. Tasks read a
file by its absolute path (a worker's working directory is not the client's); messages and
errors reports name it as the user gave it.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import PARTITION_SIZE
from ..errors import InputError, InputNotice
from ..io.files import open_input
from ..io.jsonl import dumps
from ..io.parts import part_name
from ..io.readers import iter_records, read_line_range, read_parquet

_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Partition:
    """Records ``first`` to ``stop`` (0-based, ``stop`` excluded) of one input file; for a JSON
    Lines file read by byte range, its bytes ``start`` to ``end`` from line ``first_line``.
    ``source`` is the file as given (messages name it), ``path`` the same file as an absolute
    path (what tasks read, whatever a worker's working directory), ``sha256`` the partition's
    content as :func:`plan` read it: its bytes, or for a file read by record, its records."""

    index: int
    source: str
    format: str
    first: int
    stop: int
    start: int | None = None
    end: int | None = None
    first_line: int = 1
    path: str = ""
    sha256: str = ""

    @property
    def name(self) -> str:
        return part_name(self.index)

    @property
    def extent(self) -> str:
        """Its records in words: lines 9-16 (of a JSON Lines file), records 9-16."""
        return f"{'lines' if self.start is not None else 'records'} {self.first + 1}-{self.stop}"


def expand(inputs: Sequence[str]) -> list[str]:
    """Each input as given, or a glob's matches in sorted order; a glob matching nothing, or a
    missing file, is an InputError."""
    files: list[str] = []
    for given in inputs:
        if glob.has_magic(given):
            matched = sorted(glob.glob(given, recursive=True))
            if not matched:
                raise InputError("no file matches this pattern", source=given)
            files += matched
        else:
            files.append(given)
    return files


def plan(inputs: Sequence[str], *, size: int = PARTITION_SIZE, format: str | None = None):
    """The partitions of ``inputs``, in input order: at most ``size`` records each, and the very
    first a quarter of that, so that the first part is written soon (a partition is tagged by
    one worker, a local run's first lines by all of them). Each file is read once, here, for
    its partitions' boundaries and content hashes."""
    partitions: list[Partition] = []
    for source in inputs:
        chosen = _format_of(source, format)
        first_size = size if partitions else max(1, size // 4)
        path = os.path.abspath(source)
        if chosen == "jsonl" and not _gzipped(path):
            spans = _line_spans(path, size, first_size)
        else:
            spans = _record_spans(path, chosen, size, first_size)
        for first, stop, start, end, first_line, digest in spans:
            partitions.append(
                Partition(
                    len(partitions),
                    str(source),
                    chosen,
                    first,
                    stop,
                    start,
                    end,
                    first_line,
                    path=path,
                    sha256=digest,
                )
            )
    return partitions


def _format_of(source: str, format: str | None) -> str:
    from ..io.formats import detect_format, is_parquet, not_papers

    if format:
        return format
    if is_parquet(source):
        return "parquet"
    stream, _ = open_input(source)  # gzip read through, as iter_records reads it
    with stream:
        head = stream.read(1 << 16)
    name = Path(source).name.removesuffix(".gz")
    chosen = detect_format(name, head)
    if chosen is None:
        raise InputError(not_papers(name), source=source)
    return chosen


def _gzipped(source: str) -> bool:
    with open(source, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _record_spans(
    path: str, format: str, size: int, first_size: int
) -> list[tuple[int, int, None, None, int, str]]:
    """Cut a file read record by record (papers and rejected records alike) after its first
    ``first_size`` records, then every ``size``: (first record, stop, None, None, 1, sha256 of
    the partition's records, each as :func:`_record_bytes` gives it)."""
    spans: list[tuple[int, int, None, None, int, str]] = []
    digest, first, count = hashlib.sha256(), 0, 0
    for item in iter_records(path, format=format):
        digest.update(_record_bytes(item))
        count += 1
        if count - first >= (size if spans else first_size):
            spans.append((first, count, None, None, 1, digest.hexdigest()))
            digest, first = hashlib.sha256(), count
    if count > first or not spans:
        spans.append((first, count, None, None, 1, digest.hexdigest()))
    return spans


def _record_bytes(item: Any) -> bytes:
    """A record as its partition's hash takes it: the paper as JSON, or where and why it was
    rejected (the file's name aside: the same file by another path holds the same records)."""
    if isinstance(item, InputError):
        return dumps({"line": item.line, "record": item.record, "reason": item.reason})
    return dumps(item)


def _line_spans(
    source: str, size: int, first_size: int | None = None
) -> list[tuple[int, int, int, int, int, str]]:
    """Cut a JSON Lines file after its first ``first_size`` lines (default ``size``), then every
    ``size`` (as io.files.lines_of counts lines: LF, CRLF or a lone CR ends one), only ever after
    a LF byte or a lone CR: (first record, stop, start byte, end byte, first line, sha256 of the
    bytes). Record indexes here count lines; a partition's tasks count what they read."""
    spans: list[tuple[int, int, int, int, int, str]] = []
    first_size = first_size or size
    start = offset = lines = lines_at_start = 0
    digest = hashlib.sha256()
    pending_cr = False

    def cut(end: int) -> None:
        nonlocal start, lines_at_start, digest
        spans.append((lines_at_start, lines, start, end, lines_at_start + 1, digest.hexdigest()))
        start, lines_at_start, digest = end, lines, hashlib.sha256()

    with open(source, "rb") as handle:
        while chunk := handle.read(1 << 20):
            if pending_cr:
                if chunk.startswith(b"\n"):
                    digest.update(b"\n")
                    chunk, offset = chunk[1:], offset + 1
                pending_cr = False
                lines += 1
                if lines - lines_at_start >= (size if spans else first_size):
                    cut(offset)
            hashed = 0  # bytes of this chunk in a digest
            for match in _LINE_END.finditer(chunk):
                if match.group() == b"\r" and match.end() == len(chunk):
                    pending_cr = True  # a CRLF may be split between chunks
                    continue
                lines += 1
                if lines - lines_at_start >= (size if spans else first_size):
                    digest.update(chunk[hashed : match.end()])
                    hashed = match.end()
                    cut(offset + match.end())
            digest.update(chunk[hashed:])
            offset += len(chunk)
    if pending_cr:
        lines += 1
    if offset > start or not spans:
        spans.append((lines_at_start, lines, start, offset, lines_at_start + 1, digest.hexdigest()))
    return spans


def read_partition(partition: Partition) -> Iterator[Any]:
    """The partition's records, read from its absolute path and named by its source as given,
    and its notices (a paper list's header); an InputError if the file is not what :func:`plan`
    read (it changed since): no part is written from other records than the manifest's."""
    path = partition.path or partition.source
    if partition.start is not None:
        items = read_line_range(path, partition.start, partition.end, partition.first_line)
        digest = _bytes_sha256(path, partition.start, partition.end)
    else:
        if partition.format == "parquet":
            items = read_parquet(path, start=partition.first, stop=partition.stop)
        else:
            items = _slice(
                iter_records(path, format=partition.format, notices=True),
                partition.first,
                partition.stop,
            )
        items, digest = list(items), hashlib.sha256()
        for item in items:
            if not isinstance(item, InputNotice):
                digest.update(_record_bytes(item))
    if partition.sha256 and digest.hexdigest() != partition.sha256:
        raise InputError(
            f"changed while the run read it: {partition.extent} ({partition.name}) are not "
            "what the run planned; tag the changed file into a new directory",
            source=partition.source,
        )
    return (_named(item, partition) for item in items)


def _bytes_sha256(path: str, start: int, end: int) -> Any:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        handle.seek(start)
        while start < end and (block := handle.read(min(1 << 20, end - start))):
            digest.update(block)
            start += len(block)
    return digest


def _named(item: Any, partition: Partition) -> Any:
    """``item``, its source named as the user gave it rather than by its absolute path."""
    if partition.path and getattr(item, "source", None) == partition.path:
        if isinstance(item, InputNotice):
            item.source = partition.source
        elif isinstance(item, InputError):
            item = InputError(
                item.reason,
                source=partition.source,
                line=item.line,
                record=item.record,
                record_id=item.record_id,
            )
    return item


def _slice(items: Iterator[Any], first: int, stop: int) -> Iterator[Any]:
    """Records first..stop of a file; its notices (a paper list's header) go with the first
    partition."""
    index = 0
    for item in items:
        if isinstance(item, InputNotice):
            if first == 0:
                yield item
            continue
        if index >= stop:
            return
        if index >= first:
            yield item
        index += 1
