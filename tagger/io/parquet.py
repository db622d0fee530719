"""Parquet, both ways: the schema of tagged output written as Parquet, its writer, and opening a
Parquet file to read (papers, or tagged output) with errors a user can act on.

The schema (:func:`parquet_schema`): the paper's ``id``, ``title``, ``abstract``, ``venue``,
``year``; ``keyphrases`` (list of ``{text, normalized, score}``); ``tags`` and ``facets`` (lists
of ``{id, score, path}``); ``areas`` (every area id a tag or facet names, its ancestors included:
what ``filter --area`` matches); and ``record``, the whole tagged line as JSON, from which readers
rebuild the record exactly.

Reading is bounded (:func:`parquet_batches`): a file's metadata says how large each row group is
once decompressed, and a file whose rows would take more than a JSON line may hold is refused
before anything is decompressed (a few kilobytes can hold gigabytes of repeated text); the rest
is read in batches of about PARQUET_BATCH_BYTES, text columns as dictionaries, so that a row
whose text is larger (one value repeated in many rows is stored once) is measured, and rejected,
before it is decoded; a file that cannot be decoded is an InputError that names it.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..records import TaggedPaper
from .files import MAX_LINE_BYTES
from .jsonl import dumps

MAX_ROW_BYTES = MAX_LINE_BYTES  # a row may hold what a line of JSON Lines may
PARQUET_BATCH_BYTES = 64 * 2**20  # what one batch of rows may take, decoded


def open_parquet(source: str | Path) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` of ``source``, or an InputError saying why it cannot be
    read. Its text and binary columns read as dictionaries (a value repeated in many rows is
    held once, as the file holds it), so that a row's size is known before it is decoded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = str(source)
    try:
        found = pq.ParquetFile(source)
        text = [field.name for field in found.schema_arrow if _is_text(field.type, pa)]
        return pq.ParquetFile(source, read_dictionary=text) if text else found
    except FileNotFoundError:
        raise InputError("no such file", source=name) from None
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(f"not a Parquet file it can read: {exc}", source=name) from None


def _is_text(kind: Any, pa: Any) -> bool:
    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    )


def parquet_batches(
    table: Any,
    name: str,
    *,
    columns: list[str] | None = None,
    start: int = 0,
    stop: int | None = None,
) -> Iterator[tuple[int, Any, list[int]]]:
    """The rows ``start`` to ``stop`` (0-based, ``stop`` excluded; all by default) of ``columns``
    of a ParquetFile (from :func:`open_parquet`), a batch of about PARQUET_BATCH_BYTES at a time,
    as ``(number of the batch's first row, 0-based, RecordBatch, the bytes of text each of its
    rows holds)``: a row over MAX_ROW_BYTES is for the caller to reject without decoding it.

    The file's sizes are checked first (:func:`check_sizes`, at once, so a bomb fails before
    anything is read); a batch far larger than the metadata said, or a file that cannot be
    decoded, raises InputError."""
    check_sizes(table, name, columns)
    return _batches(table, name, columns, start, stop)


def check_sizes(table: Any, name: str, columns: list[str] | None = None) -> None:
    """Refuse a file whose row groups, by its metadata, would take more than MAX_ROW_BYTES a row
    once decompressed: nothing is read."""
    metadata = table.metadata
    for group in range(metadata.num_row_groups):
        rows, size = _group_size(metadata, group, columns)
        if rows and size / rows > MAX_ROW_BYTES:
            raise InputError(
                f"row group {group + 1} holds {rows:,} rows that take {_megabytes(size)} once "
                f"decompressed ({_megabytes(size / rows)} a row); a row may take at most "
                f"{_megabytes(MAX_ROW_BYTES)}, as a line of JSON Lines may: this file is not "
                "read (is it a decompression bomb?)",
                source=name,
            )


def too_big(size: int) -> str | None:
    """Why a row holding ``size`` bytes of text is not read, if it is not."""
    if size <= MAX_ROW_BYTES:
        return None
    return (
        f"the row holds {_megabytes(size)} of text; a row may hold at most "
        f"{_megabytes(MAX_ROW_BYTES)}, as a line of JSON Lines may (a decompression bomb?)"
    )


def _batches(
    table: Any, name: str, columns: list[str] | None, start: int, stop: int | None
) -> Iterator[tuple[int, Any, list[int]]]:
    import pyarrow as pa

    metadata = table.metadata
    stop = metadata.num_rows if stop is None else stop
    first = 0  # of the row group
    for group in range(metadata.num_row_groups):
        rows, size = _group_size(metadata, group, columns)
        if first + rows > start and first < stop:
            per_batch = max(1, min(rows, PARQUET_BATCH_BYTES * rows // max(size, 1)))
            batches = table.iter_batches(
                batch_size=per_batch, row_groups=[group], columns=columns, use_threads=False
            )
            row = first
            while True:
                try:
                    batch = next(batches, None)
                    sizes = _row_sizes(batch, pa) if batch is not None else []
                except (pa.ArrowException, OSError, ValueError) as exc:  # a corrupt file
                    raise InputError(f"cannot read it: {exc}", source=name) from None
                if batch is None:
                    break
                if batch.nbytes > 2 * PARQUET_BATCH_BYTES + MAX_ROW_BYTES * batch.num_rows:
                    raise InputError(
                        f"row group {group + 1} takes far more than its metadata says once "
                        "decompressed: this file is not read further",
                        source=name,
                    )
                if row + batch.num_rows > start and row < stop:
                    yield row, batch, sizes
                row += batch.num_rows
        first += rows
        if first >= stop:
            break


def _row_sizes(batch: Any, pa: Any) -> list[int]:
    """The bytes of text and binary each row of a batch holds, counted without decoding it."""
    import pyarrow.compute as pc

    total = None
    for column in batch.columns:
        if pa.types.is_dictionary(column.type) and _is_text(column.type.value_type, pa):
            lengths = pc.take(pc.binary_length(column.dictionary), column.indices)
        elif _is_text(column.type, pa):
            lengths = pc.binary_length(column)
        else:
            continue
        lengths = pc.fill_null(pc.cast(lengths, pa.int64()), 0)
        total = lengths if total is None else pc.add(total, lengths)
    return total.to_pylist() if total is not None else [0] * batch.num_rows


def _group_size(metadata: Any, group: int, columns: list[str] | None) -> tuple[int, int]:
    """A row group's rows, and the bytes its (chosen) columns take decompressed."""
    found = metadata.row_group(group)
    size = 0
    for k in range(found.num_columns):
        chunk = found.column(k)
        if columns is None or chunk.path_in_schema.split(".")[0] in columns:
            size += max(chunk.total_uncompressed_size, 0)
    return found.num_rows, size


def _megabytes(size: float) -> str:
    return f"{size / 2**20:,.0f} MB" if size >= 2**20 else f"{size / 1024:,.0f} KB"


# --- rows read: Parquet values as JSON holds them -------------------------------------------


def plain_rows(batch: Any, big: list[str | None]) -> list[dict[str, Any] | str]:
    """The rows of a batch as dicts, or, for a row that cannot be one, why: it is too big to
    decode (``big``), or a map in it gives a key twice."""
    if not any(big):
        try:
            return batch.to_pylist(maps_as_pydicts="strict")
        except KeyError:  # a map gives a key twice: find its rows
            pass
    return [why or _one_row(batch.slice(k, 1)) for k, why in enumerate(big)]


def _one_row(batch: Any) -> dict[str, Any] | str:
    """One row as a dict, or why it cannot be one."""
    try:
        return batch.to_pylist(maps_as_pydicts="strict")[0]
    except KeyError as exc:
        key = str(exc.args[0]).rsplit("duplicate key was ", 1)[-1].rstrip(").")
        return f"a map gives the key {key} twice; JSON keeps one value a key"


class Unkeepable(ValueError):
    """A Parquet value that no JSON value keeps as it is."""


def plain(value: Any, where: str) -> Any:
    """A Parquet value as JSON holds it, exactly: structs and maps (with text keys) as objects,
    lists as arrays, UTF-8 binary as text, decimals as their digits (``"1.10"``), dates and
    times in ISO 8601. Anything else raises Unkeepable: it would change on the way through
    (NaN and infinities are refused by the Paper, as from JSON Lines)."""
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise Unkeepable(
                    f"field {where!r} is a map with {type(key).__name__} keys, and JSON keys are "
                    "text: convert the keys to strings"
                )
        return {key: plain(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item, f"{where}[{k}]") for k, item in enumerate(value)]
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unkeepable(
                f"field {where!r} holds binary data that is not UTF-8 text (byte "
                f"0x{value[exc.start]:02X}), which JSON cannot hold: drop the column or encode it"
            ) from None
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
        return value.isoformat()
    raise Unkeepable(
        f"field {where!r} holds a {type(value).__name__} value, which JSON has no type for: "
        "drop the column or convert it to text or numbers"
    )


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
