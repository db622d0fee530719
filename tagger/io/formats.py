"""Which format a file of papers is in: by its name, else by its first bytes; and which files are
no papers at all (a README, a taxonomy beside the papers a glob caught). The readers
(io.readers), tagged output (io.tagged), the library writer (io.libraries) and the cluster's
planner all ask here.

A reference manager's library is a file of papers too: BibTeX (``.bib``), RIS (``.ris``) and
CSL JSON (Zotero's, Mendeley's and pandoc's JSON export: a ``.json`` array told from a plain
array of papers by its content, :func:`is_csl_json`)."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePath
from typing import Any

import orjson

from ..records import FIELD_ALIASES
from .files import is_stdio, reads_once

FORMATS = ("text", "jsonl", "json", "csv", "parquet", "bibtex", "ris", "csl-json")
LIBRARY_FORMATS = ("bibtex", "ris", "csl-json")  # a reference manager's: tags can go back in
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
    ".bib": "bibtex",
    ".bibtex": "bibtex",
    ".ris": "ris",
}
PAPER_SUFFIXES = tuple(_FORMAT_OF_SUFFIX)  # a file named so holds papers (gzipped: .jsonl.gz)
_ABSTRACT_NAMES = frozenset(name.lower() for name in FIELD_ALIASES["abstract"])
_DECODER = json.JSONDecoder()
_JSON_ARRAY_START = re.compile(r"\[\s*(?:[\[{\]\"]|$)")
_JSON_OBJECT_START = re.compile(r"\{\s*(?:[\"}]|$)")
# BibTeX: an entry (@article{, @string(, ...) first, after blank lines and '%' comment lines
_BIBTEX_START = re.compile(r"(?:%[^\n]*\n|\s)*@[A-Za-z]+\s*[{(]")
_RIS_START = re.compile(r"TY  - ")  # RIS: a record's first tag, after blank lines
# The item types of CSL 1.0.2 (citationstyles.org/schema): a CSL JSON item's "type" is one
_CSL_TYPES = frozenset(
    [
        "article",
        "article-journal",
        "article-magazine",
        "article-newspaper",
        "bill",
        "book",
        "broadcast",
        "chapter",
        "classic",
        "collection",
        "dataset",
        "document",
        "entry",
        "entry-dictionary",
        "entry-encyclopedia",
        "event",
        "figure",
        "graphic",
        "hearing",
        "interview",
        "legal_case",
        "legislation",
        "manuscript",
        "map",
        "motion_picture",
        "musical_score",
        "pamphlet",
        "paper-conference",
        "patent",
        "performance",
        "periodical",
        "personal_communication",
        "post",
        "post-weblog",
        "regulation",
        "report",
        "review",
        "review-book",
        "software",
        "song",
        "speech",
        "standard",
        "thesis",
        "treaty",
        "webpage",
    ]
)


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
    object holds JSON Lines, and one whose first element is a CSL item (:func:`is_csl_json`)
    CSL JSON. Without a known extension: ``[`` is a JSON array (CSL JSON if its first element
    is a CSL item), ``{`` JSON Lines, ``@article{`` (or any ``@type{``/``@type(``, after blank
    and ``%`` comment lines) BibTeX, ``TY  - `` RIS, a first line naming an abstract column
    CSV, anything else paper-list text if the name has no extension (``papers``, stdin), and
    no papers if it has another one (``README.md``, ``overlay.yaml``): a glob that caught them
    must not tag their paragraphs.
    """
    suffix = PurePath(name).suffix.lower()
    text = head.removeprefix(BOM).decode("utf-8", "replace").lstrip()
    first_line = text.split("\n", 1)[0]
    if suffix == ".json" and _is_json_object(first_line):
        return "jsonl"
    if suffix == ".json" and is_csl_json(text):
        return "csl-json"
    if suffix in _FORMAT_OF_SUFFIX:
        return _FORMAT_OF_SUFFIX[suffix]
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    if _JSON_ARRAY_START.match(text):
        return "csl-json" if is_csl_json(text) else "json"
    if _BIBTEX_START.match(text):
        return "bibtex"
    if _RIS_START.match(text):
        return "ris"
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
        ".jsonl, JSON .json, CSV .csv or .tsv, Parquet .parquet, BibTeX .bib, RIS .ris), nor "
        "does its start look like one; leave it out, or give --input-format to read it as "
        "papers (--input-format text for a paper list)"
    )


def is_paper_file(path: Path) -> bool:
    """Whether ``path`` is named like a file of papers (gzipped or not)."""
    name = path.name.lower().removesuffix(".gz")
    return PurePath(name).suffix in PAPER_SUFFIXES


def is_csl_json(text: str) -> bool:
    """Whether ``text`` (a file's start, a few KB may do) is CSL JSON rather than a plain JSON
    array of papers: a JSON array whose first element is an object with a CSL item ``type``
    (``article-journal``, ``paper-conference``, ...; :data:`_CSL_TYPES`) and a CSL field no
    paper of tagger's own formats has: ``issued`` (an object: ``{"date-parts": ...}``),
    ``container-title``, or ``author`` as a list of name objects (``{"family", "given"}`` or
    ``{"literal"}``). A plain array may have ``type`` ("poster") or ``author`` (a string), not
    these together; one that means to be read as plain JSON is, with --input-format json."""
    text = text.removeprefix("\ufeff").lstrip()
    if not text.startswith("["):
        return False
    start = len(text) - len(text[1:].lstrip())
    try:
        first, _ = _DECODER.raw_decode(text, start)
    except ValueError:  # cut off by the head's end (a long abstract), or no JSON: its members
        first = _leading_members(text, start)  # before the cut
    except RecursionError:  # nested too deeply to read: no CSL item
        return False
    if not isinstance(first, dict) or first.get("type") not in _CSL_TYPES:
        return False
    authors = first.get("author")
    named = isinstance(authors, list) and any(
        isinstance(a, dict) and ({"family", "given", "literal"} & a.keys()) for a in authors
    )
    return isinstance(first.get("issued"), dict) or "container-title" in first or named


def _leading_members(text: str, start: int) -> dict[str, Any] | None:
    """The members of the JSON object at ``start`` that ``text`` holds whole, in order, up to
    the first it cuts off; None if no object starts there."""
    if not text.startswith("{", start):
        return None
    members: dict[str, Any] = {}
    position = start + 1
    try:
        while True:
            position = len(text) - len(text[position:].lstrip(" \t\r\n,"))
            key, position = _DECODER.raw_decode(text, position)
            position = len(text) - len(text[position:].lstrip(" \t\r\n:"))
            members[key], position = _DECODER.raw_decode(text, position)
    except (ValueError, RecursionError):
        return members


OUTPUT_FORMATS = ("jsonl", "parquet", *LIBRARY_FORMATS)  # what `tagger tag` writes
_OUTPUT_OF_SUFFIX = {".parquet": "parquet", ".bib": "bibtex", ".bibtex": "bibtex", ".ris": "ris"}


def output_format(name: str | Path | None, given: str | None = None) -> str:
    """The format `tagger tag` writes to the output called ``name`` (None or "-": stdout):
    ``given``, else by the name (``.parquet``: Parquet, ``.bib``: BibTeX, ``.ris``: RIS), else
    JSON Lines. CSL JSON is only ever given: a ``.json`` output has always been JSON Lines."""
    if given is not None:
        if given not in OUTPUT_FORMATS:
            raise ValueError(
                f"The 'output_format' parameter must be one of {', '.join(OUTPUT_FORMATS)}. "
                f"Got {given!r} instead."
            )
        return given
    if name is None or is_stdio(name):
        return "jsonl"
    return _OUTPUT_OF_SUFFIX.get(PurePath(name).suffix.lower(), "jsonl")


def is_library(format: str | None) -> bool:
    """Whether ``format`` is a reference manager's, into which tags can be written back."""
    return format in LIBRARY_FORMATS


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
