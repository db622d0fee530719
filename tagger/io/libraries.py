"""A reference manager's library (BibTeX, RIS, CSL JSON), read as papers and written back with
their tags: the one owner of the ``library`` field a paper read from one carries, and of what is
written where a manager reads tags.

Reading: the file is read whole and cut into blocks by its format's module (io.bibtex, io.ris,
io.csljson; io.blocks), each entry a paper: its key the id, its title, abstract, venue, year
and keywords read as text. An entry that is no paper (no abstract; unreadable; a key used
before) is an InputError naming its line and key, never dropped silently. A file that is not
UTF-8 is read as Windows-1252 (or, where that has no character for a byte, Latin-1), with a
warning; its bytes are written back as they were.

Each paper carries what writing it back needs, in its ``library`` field (kept in tagged output
and by retag, so that `tagger filter` writes a library from tagged JSONL alone)::

    {"format": "bibtex", "key": "smith2020", "line": 12, "encoding": "utf-8",
     "entry": "<the entry's text, exactly as in the file>",
     "uses": ["<the text of each @string macro the entry uses>"]}

Writing back (:func:`write_back`, `tagger tag LIB --output-format bibtex`): every block of the
library in order, exactly as it was, but that each tagged entry's tag field holds its tags:
``keywords`` (BibTeX), ``KW`` lines (RIS), ``keyword`` (CSL JSON), each tag as ``tagger:`` and
its area id (or name); the user's keywords are kept, and tagger's earlier ones replaced, so
that a second run writes the same file. :func:`library_entries` writes the entries of a
selection (`tagger filter --output-format bibtex`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ..config import KEYWORD_PREFIX, TAG_LABEL_CHOICES, TAG_LABELS
from ..errors import STDIN_NAME, InputError, InputNotice, TaggerError
from ..records import Paper, TaggedPaper
from . import bibtex, csljson, ris
from .blocks import Block
from .files import is_stdio, open_input
from .formats import BOM, LIBRARY_FORMATS, detect_format, is_library

LIBRARY_FIELD = "library"
MAX_LIBRARY_BYTES = 512 * 2**20  # a library is read whole; the biggest real ones are tens of MB
_MODULES: dict[str, ModuleType] = {"bibtex": bibtex, "ris": ris, "csl-json": csljson}
_FIELD_NAMES = {"bibtex": "keywords", "ris": "KW", "csl-json": "keyword"}


def decode(data: bytes) -> tuple[str, str]:
    """A library's text and the encoding that gives its bytes back: UTF-8, else Windows-1252,
    else Latin-1 (which has a character for every byte)."""
    for encoding in ("utf-8", "cp1252", "latin-1"):
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes every byte")


def read_blocks(data: bytes, source: str, format: str) -> tuple[list[Block], str]:
    """The blocks of a library's bytes and its encoding (:func:`decode`); a file too big, or
    (CSL JSON) no JSON array, raises InputError."""
    if len(data) > MAX_LIBRARY_BYTES:
        raise _too_big(source)
    text, encoding = decode(data)
    try:
        return _MODULES[format].blocks(text), encoding
    except csljson.NotCsl as exc:
        reason, line = exc.args
        raise InputError(reason, source=source, line=line) from None


def library_records(
    data: bytes, source: str, format: str
) -> Iterator[tuple[int, dict[str, Any]] | InputError | InputNotice]:
    """Each entry of a library, in order: its line and a paper's fields (its ``library`` field
    among them), or an InputError saying why it is no paper; a warning first if the file
    is not UTF-8."""
    blocks, encoding = read_blocks(data, source, format)
    module = _MODULES[format]
    if encoding != "utf-8":
        bad = _first_bad_byte(data)
        line = data.count(b"\n", 0, bad) + 1
        yield InputNotice(
            f"not UTF-8 (byte 0x{data[bad]:02X}): read "
            f"as {'Windows-1252' if encoding == 'cp1252' else 'Latin-1'}; a library written back "
            "keeps its bytes as they are",
            source=source,
            line=line,
            warning=True,
        )
    if not any(block.is_entry for block in blocks):
        yield InputNotice(
            f"no entry found in it: nothing to tag (is it a {_NAMES[format]} file?)",
            source=source,
            warning=True,
        )
    for block in blocks:
        if block.notice:
            yield InputNotice(block.notice, source=source, line=block.line, warning=True)
        if not block.is_entry:
            continue
        named = f"entry {block.key!r}" if block.key else "an entry"
        if block.fields is None:
            yield InputError(
                f"{named}: {block.problem}; it is not tagged, and written back as it is",
                source=source,
                line=block.line,
                record_id=block.key,
            )
            continue
        fields = module.paper_fields(block.fields, KEYWORD_PREFIX)
        if "abstract" not in fields:
            yield InputError(
                f"{named} has no abstract: it is not tagged, and written back as it is; add "
                f"its abstract ({_ABSTRACT_FIELD[format]}) to tag it",
                source=source,
                line=block.line,
                record_id=block.key,
            )
            continue
        if block.key and format == "bibtex":
            fields["id"] = block.key
        library = {"format": format, "key": block.key, "line": block.line}
        library |= {"encoding": encoding, "entry": block.text}
        if block.uses:
            library["uses"] = list(block.uses)
        yield block.line, fields | {LIBRARY_FIELD: library}


_NAMES = {"bibtex": "BibTeX", "ris": "RIS", "csl-json": "CSL JSON"}
_ABSTRACT_FIELD = {"bibtex": "abstract = {...}", "ris": "an AB line", "csl-json": '"abstract"'}


def _first_bad_byte(data: bytes) -> int:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return 0


# --- writing back -------------------------------------------------------------------------------


def tag_words(record: TaggedPaper, labels: str = TAG_LABELS) -> list[str]:
    """The tags written back for a paper: its area tags as tagger lists them (``tags``, at the
    listing threshold; facets are not areas), by id or, with ``labels="names"``, by name."""
    if labels not in TAG_LABEL_CHOICES:
        raise ValueError(
            f"The 'labels' parameter must be one of {', '.join(TAG_LABEL_CHOICES)}. Got "
            f"{labels!r} instead."
        )
    return [tag.id if labels == "ids" else tag.name for tag in record.tags]


def library_of(paper: Paper, *, strict: bool = False) -> dict[str, Any] | None:
    """The ``library`` field of a paper read from a library, if it has a well-formed one; with
    ``strict``, TaggerError if it has one tagger did not write (a hand edit)."""
    library = (paper.model_extra or {}).get(LIBRARY_FIELD)
    if (
        isinstance(library, dict)
        and library.get("format") in LIBRARY_FORMATS
        and isinstance(library.get("entry"), str)
        and library.get("encoding") in _ENCODINGS
        and isinstance(library.get("key"), (str, type(None)))
        and all(isinstance(macro, str) for macro in library.get("uses") or [])
    ):
        return library
    if strict and library is not None:
        raise TaggerError(_not_ours(paper, "its fields are not those tagger writes"))
    return None


def _not_ours(paper: Paper, why: str) -> str:
    return (
        f"paper {paper.id!r}: its {LIBRARY_FIELD!r} field cannot be written back ({why}): was it "
        "edited? Tag the library again"
    )


def retagged_entry(library: dict[str, Any], tags: list[str]) -> str:
    """A library entry's text with ``tags`` in its tag field."""
    return _MODULES[library["format"]].with_tags(library["entry"], tags, KEYWORD_PREFIX)


def write_back(
    sources: Iterable[tuple[str, bytes]],
    format: str,
    results: Iterable[tuple[dict[str, Any], list[str]]],
) -> Iterator[bytes]:
    """Each library of ``sources`` (its name and bytes, in order) written back: every block as
    it was, but each tagged entry with its tags. ``results`` are the tagged entries' ``library``
    fields and tags, in input order (entries that are no paper have none: they pass through).
    Raises TaggerError if they are not the libraries' entries in order (a file changed while it
    was tagged)."""
    pending = iter(results)
    result = next(pending, None)
    first: tuple[str, str] | None = None  # the first library's name and encoding
    ended = True  # whether what was written so far ends a line
    for name, data in sources:
        blocks, encoding = read_blocks(data, name, format)
        if first is not None and encoding != first[1]:
            raise TaggerError(
                f"{name} is {_ENCODINGS[encoding]} and {first[0]} {_ENCODINGS[first[1]]}: one "
                "file cannot hold both; write them back one at a time (or save both as UTF-8)"
            )
        first = first or (name, encoding)
        out: list[str] = [] if ended else ["\n"]  # a library never runs on from the last line
        for block in blocks:
            if (
                result is not None
                and block.fields is not None
                and result[0]["entry"] == block.text
                and result[0]["line"] == block.line
            ):
                out.append(retagged_entry(result[0], result[1]))
                result = next(pending, None)
            else:
                out.append(block.text)
        text = "".join(out)
        yield _encoded(text, encoding, name)
        ended = not text or text.endswith("\n")
    if result is not None:
        raise TaggerError(
            f"entry {result[0].get('key')!r} (line {result[0].get('line')}) is not where it was "
            "read: did the library change while it was tagged? Nothing is written; run again"
        )


_ENCODINGS = {"utf-8": "UTF-8", "cp1252": "Windows-1252", "latin-1": "Latin-1"}


def _encoded(text: str, encoding: str, name: str) -> bytes:
    """A library's text in its encoding; TaggerError if a tag has a character it lacks."""
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise TaggerError(
            f"{name} is {_ENCODINGS[encoding]}, which has no {exc.object[exc.start]!r} for a tag "
            "written into it: write tags by id (--tag-labels ids), or save the library as UTF-8; "
            "nothing is written"
        ) from None


def read_source(source: str | Path, stdin: bytes | None = None) -> bytes:
    """The bytes of an input (gzip read through), whole; "-": ``stdin``, read before."""
    if is_stdio(source) and stdin is not None:
        return stdin
    return _read_head(source, MAX_LIBRARY_BYTES + 1, whole=True)


def _read_head(source: str | Path, size: int, *, whole: bool = False) -> bytes:
    stream, name = open_input(source)
    try:
        data = stream.read(size)
    finally:
        if not is_stdio(source):
            stream.close()
    if whole and len(data) >= size:
        raise _too_big(name)
    return data


def _too_big(source: str) -> InputError:
    return InputError(
        f"a library is read whole, and this one is over {MAX_LIBRARY_BYTES // 2**20} MB: split it",
        source=source,
    )


def check_write_back(
    sources: list[str], format: str, given: str | None, stdin: bytes | None = None
) -> None:
    """Refuse, before anything is read for tagging, to write ``sources`` back as a ``format``
    library unless each is a library of that format (by ``given``, the input format, else by
    its name and content), and a CSL JSON library one alone (two arrays are no file)."""
    for source in sources:
        name = STDIN_NAME if is_stdio(source) else str(source)
        file_name = "" if is_stdio(source) else Path(source).name.removesuffix(".gz")
        if is_stdio(source) and stdin is not None:
            head = stdin[: 1 << 16]
        else:
            head = _read_head(source, 1 << 16)
        found = given or detect_format(file_name, head.removeprefix(BOM))
        if found != format:
            what = f"a {found} library" if is_library(found) else f"{found or 'no'} papers"
            raise TaggerError(
                f"{name} holds {what}, not a {format} library: --output-format {format} writes "
                f"{format} libraries back with their tags. Tag it to JSONL, and write the papers "
                f"as {format} entries with `tagger filter TAGGED --output-format {format}`"
            )
    if format == "csl-json" and len(sources) > 1:
        raise TaggerError(
            "--output-format csl-json writes one library back, and two CSL JSON arrays make no "
            "one file: tag one at a time"
        )


def check_names(sources: list[str], names: Iterable[str], stdin: bytes | None = None) -> None:
    """Refuse, before anything is tagged, to write area ``names`` (--tag-labels names) into a
    library whose encoding cannot hold one of them (a Windows-1252 file, a name in Chinese)."""
    names = list(names)
    for source in sources:
        _, encoding = decode(read_source(source, stdin))
        for name in names:
            _encoded(name, encoding, STDIN_NAME if is_stdio(source) else str(source))


class LibraryWriter:
    """Collects what writing a library back needs of each tagged paper (its ``library`` field
    and its tags, not the paper), then writes the libraries whole (:meth:`render`)."""

    def __init__(self, format: str, labels: str = TAG_LABELS) -> None:
        self.format, self.labels = format, labels
        self.results: list[tuple[dict[str, Any], list[str]]] = []

    @property
    def count(self) -> int:
        """The papers written so far."""
        return len(self.results)

    def write(self, record: TaggedPaper) -> None:
        library = library_of(record.paper)
        if library is None or library["format"] != self.format:
            raise TaggerError(
                f"paper {record.paper.id!r} was not read from a {self.format} library, so it "
                "cannot be written back into one"
            )
        self.results.append((library, tag_words(record, self.labels)))

    def render(self, sources: Iterable[str | Path], stdin: bytes | None = None) -> bytes:
        """The libraries ``sources`` (read again; "-": ``stdin``) written back, as one file's
        bytes."""
        read = ((str(source), read_source(source, stdin)) for source in sources)
        return b"".join(write_back(read, self.format, self.results))


# --- a selection's entries ---------------------------------------------------------------------


def library_entries(
    records: Iterable[TaggedPaper], format: str, labels: str = TAG_LABELS
) -> Iterator[bytes]:
    """Tagged papers as a library's entries, in order (`tagger filter --output-format`): one
    read from a library of ``format`` exactly as it was, with its tags in the tag field (and,
    first, the ``@string`` macros it uses, once each); any other as a minimal entry made from
    its fields, its key made safe and unique. A CSL JSON array is opened and closed around
    them."""
    module = _MODULES[format]
    keys: set[str] = set()
    macros: set[str] = set()
    if format == "csl-json":
        yield b"[\n"
    first = True
    for record in records:
        tags = tag_words(record, labels)
        library = library_of(record.paper, strict=True)
        if library is not None and library["format"] == format:
            keys.add(str(library.get("key")))
            encoding = "utf-8"  # one file, one encoding, whatever the libraries' were
            try:
                text = retagged_entry(library, tags)
            except (ValueError, TypeError, AttributeError) as exc:
                raise TaggerError(_not_ours(record.paper, str(exc) or type(exc).__name__)) from None
            if format == "bibtex":
                uses = [m for m in library.get("uses") or [] if isinstance(m, str)]
                for macro in uses:
                    if macro not in macros:
                        macros.add(macro)
                        yield (macro + "\n\n").encode(encoding)
                yield (text + "\n\n").encode(encoding)
            elif format == "ris":
                yield (text if text.endswith("\n") else text + "\n").encode(encoding) + b"\n"
            else:
                yield (b"" if first else b",\n") + ("  " + text).encode(encoding)
        else:
            key = _unique(bibtex.safe_key(_key_for(record.paper)), keys)
            entry = module.new_entry(record.paper, tags, KEYWORD_PREFIX, key)
            if format == "csl-json":
                item = json.dumps(entry, ensure_ascii=False, indent=2).replace("\n", "\n  ")
                yield (b"" if first else b",\n") + ("  " + item).encode()
            else:
                yield (entry + ("\n" if format == "bibtex" else "\n")).encode()
        first = False
    if format == "csl-json":
        yield b"\n]\n"


def _key_for(paper: Paper) -> str:
    library = library_of(paper)
    return str(library["key"]) if library and library.get("key") else paper.id


def _unique(key: str, keys: set[str]) -> str:
    candidate, number = key, 2
    while candidate in keys:
        candidate, number = f"{key}-{number}", number + 1
    keys.add(candidate)
    return candidate
