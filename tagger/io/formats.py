"""Which format a file of papers is in: by its name, else by its first bytes; and which files are
no papers at all (a README, a taxonomy beside the papers a glob caught). The readers
(io.readers), tagged output (io.tagged) and the cluster's planner all ask here."""

from __future__ import annotations

import re
from pathlib import Path, PurePath

import orjson

from ..records import FIELD_ALIASES
from .files import is_stdio, reads_once

FORMATS = ("text", "jsonl", "json", "csv", "parquet")
BOM = b"\xef\xbb\xbf"
PARQUET_MAGIC = b"PAR1"
_FORMAT_OF_SUFFIX = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "text",
    ".parquet": "parquet",
}
PAPER_SUFFIXES = tuple(_FORMAT_OF_SUFFIX)  # a file named so holds papers (gzipped: .jsonl.gz)
_ABSTRACT_NAMES = frozenset(name.lower() for name in FIELD_ALIASES["abstract"])
_JSON_ARRAY_START = re.compile(r"\[\s*(?:[\[{\]\"]|$)")
_JSON_OBJECT_START = re.compile(r"\{\s*(?:[\"}]|$)")


def is_parquet(source: str | Path) -> bool:
    """Whether ``source`` is a Parquet file: by its name, else by its first bytes (not those of
    a pipe or stdin, which only its reader reads: Parquet cannot come through one)."""
    if not is_stdio(source) and PurePath(source).suffix.lower() == ".parquet":
        return True
    if reads_once(source):
        return False
    try:
        with open(source, "rb") as handle:
            return handle.read(4) == PARQUET_MAGIC
    except OSError:
        return False  # iter_records says what is wrong with it


def detect_format(name: str, head: bytes) -> str | None:
    """The format of a file called ``name`` (may be "") whose first bytes are ``head``, or None
    if it holds no papers.

    The extension decides, except that a ``.json`` file whose first line is a whole JSON
    object holds JSON Lines. Without a known extension: ``[`` is a JSON array, ``{`` JSON
    Lines, a first line naming an abstract column CSV, anything else paper-list text if the
    name has no extension (``papers``, stdin), and no papers if it has another one
    (``README.md``, ``overlay.yaml``): a glob that caught them must not tag their paragraphs.
    """
    suffix = PurePath(name).suffix.lower()
    text = head.removeprefix(BOM).decode("utf-8", "replace").lstrip()
    first_line = text.split("\n", 1)[0]
    if suffix == ".json" and _is_json_object(first_line):
        return "jsonl"
    if suffix in _FORMAT_OF_SUFFIX:
        return _FORMAT_OF_SUFFIX[suffix]
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if _JSON_ARRAY_START.match(text):
        return "json"
    if _JSON_OBJECT_START.match(text):
        return "jsonl"
    if _names_abstract_column(first_line):
        return "csv"
    return None if suffix else "text"


def not_papers(name: str) -> str:
    """Why the file called ``name`` is refused when :func:`detect_format` finds no papers in it,
    and the way to read it still."""
    suffix = PurePath(name).suffix
    return (
        f"not a file of papers: {suffix!r} is no paper format (paper-list text .txt, JSON Lines "
        ".jsonl, JSON .json, CSV .csv or .tsv, Parquet .parquet), nor does its start look like "
        "one; leave it out, or give --input-format to read it as papers (--input-format text "
        "for a paper list)"
    )


def is_paper_file(path: Path) -> bool:
    """Whether ``path`` is named like a file of papers (gzipped or not)."""
    name = path.name.lower().removesuffix(".gz")
    return PurePath(name).suffix in PAPER_SUFFIXES


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


def csv_delimiter(name: str, header_line: str) -> str:
    """Tab for a ``.tsv`` file or a header with more tabs than commas; else comma."""
    if name.lower().endswith(".tsv"):
        return "\t"
    return "\t" if header_line.count("\t") > header_line.count(",") else ","


def _names_abstract_column(line: str) -> bool:
    delimiter = csv_delimiter("", line)
    if delimiter not in line:
        return False
    cells = (cell.strip().strip('"').strip().lower() for cell in line.split(delimiter))
    return any(cell in _ABSTRACT_NAMES for cell in cells)
