"""Parquet, both ways: the schema of tagged output written as Parquet, its writer, and opening a
Parquet file to read (papers, or tagged output) with errors a user can act on.

The schema (:func:`parquet_schema`): the paper's ``id``, ``title``, ``abstract``, ``venue``,
``year``; ``keyphrases`` (list of ``{text, normalized, score}``); ``tags`` and ``facets`` (lists
of ``{id, score, path}``); ``areas`` (every area id a tag or facet names, its ancestors included:
what ``filter --area`` matches); and ``record``, the whole tagged line as JSON, from which readers
rebuild the record exactly.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..records import TaggedPaper
from .jsonl import dumps


def open_parquet(source: str | Path) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` of ``source``, or an InputError saying why it cannot be
    read."""
    import pyarrow.parquet as pq

    name = str(source)
    try:
        return pq.ParquetFile(source)
    except FileNotFoundError:
        raise InputError("no such file", source=name) from None
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(f"not a Parquet file it can read: {exc}", source=name) from None


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
