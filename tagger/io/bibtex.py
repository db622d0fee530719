"""BibTeX libraries (.bib), both ways: read into blocks by bibtexparser 2 (io.blocks), an
entry's fields into a paper's (LaTeX read as text by pylatexenc, math kept as written), and an
entry's ``keywords`` field rewritten with tags, the rest of its text as it was.

bibtexparser reads; its blocks keep their raw text, which is found in the file in order, so the
blocks (and the text between them) join to the file. Two things are done by hand: a value read
as BibTeX reads it (:func:`_joined`: bibtexparser 2 expands a value that is one macro, but
leaves ``a # {b}`` as written), and the rewriting of one field (:func:`with_tags`): bibtexparser
2 writes a library from its model, not as it was written, and a re-formatted library is no
round trip.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..records import Paper
from .blocks import KEYWORD_SEPARATOR, Block, LineOf, year_in

_ENTRY_HEAD = re.compile(r"@\s*([A-Za-z]+)\s*[{(]\s*([^,\s{}()]*)")
_NAME = re.compile(r"[^\s=,{}()\"#]+")
_BARE = re.compile(r"[^\s,#{}()\"]+")
_UNFOLLOWED = "its fields cannot be followed to their end (a '#' joining nothing?)"
_MARKUP = re.compile(r"[\\$~%]|--|``|''")  # what pylatexenc reads otherwise than as written


def blocks(text: str) -> list[Block]:
    """The blocks of a BibTeX file, in order, joining to ``text``: entries (read, or with the
    problem that stops them being read: an unbalanced brace, a key used before, a field given
    twice, in any case), and the rest (comments, ``@string``, ``@preamble``, ``@comment``, blank
    lines); an ``@string`` that defines a macro again is a block with a ``notice``.

    An entry's fields are read as BibTeX reads them (:func:`_joined`): the pieces of a value
    joined by ``#`` joined, macros expanded (a macro BibTeX's styles define, ``jan``, as
    written), the enclosing braces or quotes cut."""
    import bibtexparser
    from bibtexparser import model

    with _silenced("bibtexparser"):  # what fails is reported here, with its line
        library = bibtexparser.parse_string(text, parse_stack=[])  # values as written
    strings: dict[str, str] = {}  # a macro's name (lower case) -> its value, as BibTeX reads it
    needs: dict[str, tuple[str, ...]] = {}  # -> the text of its @string and those it uses
    string_line: dict[str, int] = {}  # a macro's name (lower case) -> where it is first defined
    first_line: dict[str, int] = {}  # a key -> the line of the entry that has it first
    found: list[Block] = []
    cursor, line_of = 0, LineOf(text)
    for block in library.blocks:
        raw = block.raw or ""
        start = text.find(raw, cursor) if raw else -1
        if start < 0:
            continue  # no text of its own (cannot be: bibtexparser cuts raw from the file)
        if start > cursor:
            found.append(Block(text[cursor:start], line_of(cursor)))
        line = line_of(start)
        cursor = start + len(raw)
        if isinstance(block, model.DuplicateBlockKeyBlock) and isinstance(
            block.ignore_error_block, model.String
        ):
            block = block.ignore_error_block  # BibTeX reads a macro defined again: see below
        if isinstance(block, model.String):
            name = block.key.lower()
            used: list[str] = []
            strings[name] = _joined(block.value, strings, used)
            needs[name] = (*_needed(used, needs), raw)
            if name in string_line:
                found.append(Block(raw, line, notice=_again(block.key, string_line[name])))
                continue
            string_line[name] = line
            found.append(Block(raw, line))
        elif isinstance(block, model.DuplicateBlockKeyBlock):
            key = block.key
            before = first_line.get(key)
            at = f" at line {before}" if before else ""
            found.append(Block(raw, line, key, problem=f"the key {key!r} is used before{at}"))
        elif isinstance(block, model.ParsingFailedBlock):
            found.append(Block(raw, line, _key_of(raw), problem=_failure(block)))
        elif isinstance(block, model.Entry):
            first_line.setdefault(block.key, line)
            names = Counter(field.key.lower() for field in block.fields)
            twice = sorted(name for name, count in names.items() if count > 1)
            if twice:
                problem = f"it gives a field twice ({', '.join(twice)}); keep one"
                found.append(Block(raw, line, block.key, problem=problem))
                continue
            if sorted(f.name.lower() for f in _fields(raw)) != sorted(names):
                found.append(Block(raw, line, block.key, problem=_UNFOLLOWED))
                continue  # its tag field could not be found to write: never tagged silently
            used = []
            fields = {"ENTRYTYPE": block.entry_type}
            fields |= {f.key.lower(): _joined(f.value, strings, used) for f in block.fields}
            found.append(Block(raw, line, block.key, fields=fields, uses=_needed(used, needs)))
        else:  # @comment, @preamble, text between entries
            found.append(Block(raw, line))
    if cursor < len(text):
        found.append(Block(text[cursor:], line_of(cursor)))
    return found


def _again(name: str, first: int) -> str:
    return (
        f"@string {name!r} is defined twice (first at line {first}): BibTeX reads the later "
        "definition from here on; keep one"
    )


@contextlib.contextmanager
def _silenced(name: str) -> Iterator[None]:
    """The logger ``name`` and those under it silent meanwhile, whatever their levels and
    handlers (bibtexparser logs each block it cannot read, with 0-based lines), and as they
    were after."""
    names = [n for n in list(logging.root.manager.loggerDict) if n.startswith(name + ".")]
    loggers = [logging.getLogger(n) for n in (name, *names)]
    were = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, was in zip(loggers, were, strict=True):
            logger.disabled = was


def _joined(value: str, strings: dict[str, str], used: list[str]) -> str:
    """A field's value as written (``{kw1} # {, more} # kw``) as BibTeX reads it: each piece's
    text (a braced or quoted piece's inside, a number as it is, a macro's value; a macro not
    defined as written), joined. The macros it names are added to ``used``. A value that
    cannot be cut into pieces is read as written."""
    if "#" not in value:  # one piece (the fast way, for nearly every value)
        return _piece(value, strings, used)
    pieces = _pieces(value)
    if pieces is None:
        return value
    return "".join(_piece(piece, strings, used) for piece in pieces)


def _piece(piece: str, strings: dict[str, str], used: list[str]) -> str:
    if piece[:1] == "{" and piece[-1:] == "}" or piece[:1] == '"' and piece[-1:] == '"':
        return piece[1:-1]
    if piece.isdigit():
        return piece
    name = piece.lower()
    if name in strings:
        used.append(name)
        return strings[name]
    return piece


def _pieces(value: str) -> list[str] | None:
    """The pieces of a value joined by ``#``, as written; None if it is no such value."""
    pieces, position = [], 0
    while True:
        end = _piece_end(value, position)
        if end is None:
            return None
        pieces.append(value[position:end])
        position = _skip(value, end, " \t\r\n")
        if position >= len(value):
            return pieces
        if value[position] != "#":
            return None
        position = _skip(value, position + 1, " \t\r\n")


def _needed(used: list[str], needs: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The text of the @string blocks the macros ``used`` need, each once, each after those it
    uses."""
    return tuple(dict.fromkeys(text for name in used for text in needs[name]))


def _key_of(raw: str) -> str | None:
    match = _ENTRY_HEAD.match(raw.lstrip())
    return match.group(2) or None if match else None


def _failure(block: Any) -> str:
    """Why bibtexparser could not read a block, in words that name no 0-based line."""
    error = getattr(block, "error", None)
    if "DuplicateFieldKey" in type(block).__name__:
        fields = getattr(block, "duplicate_keys", None)
        named = f" ({', '.join(sorted(fields))})" if fields else ""
        return f"it gives a field twice{named}; keep one"
    detail = str(getattr(error, "abort_reason", "") or "").strip().split("\n")[0].strip()
    detail = f": {detail.rstrip('. ')}" if detail else ""
    return f"it cannot be read (is a brace or a quote unbalanced?){detail}"


def paper_fields(fields: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A paper's fields from an entry's: title and abstract as text, the venue (journal, else
    booktitle), the year (year, else date), the keywords (the user's: ``prefix``-ed ones are
    tagger's own, not read)."""
    paper: dict[str, Any] = {}
    for ours, theirs in (("title", "title"), ("abstract", "abstract")):
        if fields.get(theirs, "").strip():
            paper[ours] = latex_text(fields[theirs])
    venue = fields.get("journal") or fields.get("booktitle") or fields.get("journaltitle")
    if venue and venue.strip():
        paper["venue"] = latex_text(venue)
    year = year_in(fields.get("year") or fields.get("date") or "")
    if year is not None:
        paper["year"] = year
    keywords = [k for k in KEYWORD_SEPARATOR.split(fields.get("keywords", "")) if k.strip()]
    keywords = [latex_text(k) for k in keywords if not k.startswith(prefix)]
    if keywords:
        paper["keywords"] = keywords
    return paper


def latex_text(value: str) -> str:
    """LaTeX as text: accents (``{\\"o}``: ö), ``\\emph{..}`` and ``\\textbf{..}`` as their
    words, braces dropped, ``$...$`` math kept as written; white space made single spaces."""
    if not _MARKUP.search(value):  # no macro, math, ligature or tie: only braces to drop
        return " ".join(value.replace("{", "").replace("}", "").split())
    try:
        text = _latex().latex_to_text(value)
    except Exception:  # pylatexenc is tolerant; an input it still fails on is read as written
        text = value
    return " ".join(text.split())


@functools.cache
def _latex() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text

    logging.getLogger("pylatexenc").setLevel(logging.ERROR)  # its parse warnings: not ours
    return LatexNodes2Text(math_mode="verbatim")


# --- writing tags back -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    start: int  # of the name
    value_start: int
    value_end: int
    pieces: tuple[tuple[int, int], ...]  # each piece of a value joined by '#'


def _fields(text: str) -> list[_Field]:
    """The fields of an entry's text, where each name and value lies; a scan that stops at the
    first thing it cannot read (only entries bibtexparser read are scanned)."""
    opening = re.search(r"[{(]", text)
    if opening is None:
        return []
    closer = "}" if opening.group() == "{" else ")"
    position = text.find(",", opening.end())
    found: list[_Field] = []
    while position >= 0:
        position = _skip(text, position, " \t\r\n,")
        name = _NAME.match(text, position)
        if position >= len(text) or text[position] == closer or name is None:
            break
        position = _skip(text, name.end(), " \t\r\n")
        if not text.startswith("=", position):
            break
        value_start = position = _skip(text, position + 1, " \t\r\n")
        pieces = []
        while True:
            end = _piece_end(text, position)
            if end is None:
                return found
            pieces.append((position, end))
            after = _skip(text, end, " \t\r\n")
            if not text.startswith("#", after):
                break
            position = _skip(text, after + 1, " \t\r\n")
        found.append(_Field(name.group(), name.start(), value_start, end, tuple(pieces)))
        position = end
    return found


def _skip(text: str, position: int, characters: str) -> int:
    while position < len(text) and text[position] in characters:
        position += 1
    return position


def _piece_end(text: str, position: int) -> int | None:
    """Where a value's piece starting at ``position`` ends: ``{...}`` (braces balanced),
    ``"..."`` (braces balanced inside), or a bare number or macro."""
    if position >= len(text):
        return None
    if text[position] in '{"':
        closing, depth = ("}" if text[position] == "{" else '"'), 0
        for index in range(position + 1, len(text)):
            character = text[index]
            if character == closing and depth == 0:
                return index + 1
            depth += (character == "{") - (character == "}")
        return None
    bare = _BARE.match(text, position)
    return bare.end() if bare else None


def with_tags(text: str, tags: list[str], prefix: str) -> str:
    """The entry ``text`` with ``tags`` in its ``keywords`` field, each as ``prefix`` + tag: the
    user's keywords kept as written, with their separator; the earlier ``prefix``-ed ones
    dropped; the tags appended. An entry without the field gets one, after its last field, in
    the entry's own indentation, ``=`` spacing and name case; a field left with nothing is
    removed. Nothing else in the text changes, and a second call with the same tags changes
    nothing."""
    fields = _fields(text)
    words = [prefix + _bibtex_word(tag) for tag in tags]
    field = next((f for f in fields if f.name.lower() == "keywords"), None)
    if field is None:
        return _add_field(text, fields, words) if words and fields else text
    value = text[field.value_start : field.value_end]
    if len(field.pieces) > 1 or value[:1] not in '{"':
        return _with_piece(text, field, words, prefix)
    inner = value[1:-1]
    kept = _without_prefixed(inner, prefix)
    if not kept.strip() and not words:
        return _remove_field(text, fields, field)
    separator = _separator_of(inner)
    joined = separator.join([kept, *words]) if kept.strip() else separator.join(words)
    return text[: field.value_start] + value[0] + joined + value[-1] + text[field.value_end :]


def _with_piece(text: str, field: _Field, words: list[str], prefix: str) -> str:
    """A ``keywords`` value of several pieces or a macro (``kw # {, more}``, ``kw``) with the
    tags as one more piece, ``kw # {, tagger:a, tagger:b}``, joined as its pieces are: never
    made one literal, which would change what BibTeX reads. A last piece of nothing but
    ``prefix``-ed words is tagger's own, from before: it goes first."""
    pieces = list(field.pieces)
    start, end = pieces[-1]
    last = text[start:end]
    if len(pieces) > 1 and last[:1] in '{"':
        found = [w.strip() for w in KEYWORD_SEPARATOR.split(last[1:-1]) if w.strip()]
        if found and all(word.startswith(prefix) for word in found):
            pieces.pop()
    value_end = pieces[-1][1]
    if not words:
        return text[:value_end] + text[field.value_end :]
    joiner = text[pieces[-2][1] : pieces[-1][0]] if len(pieces) > 1 else " # "
    piece = "{, " + ", ".join(words) + "}"
    return text[:value_end] + joiner + piece + text[field.value_end :]


def _bibtex_word(tag: str) -> str:
    """A tag as one keyword, as it is (``rl.offline``, ``Offline RL``, ``Attention & transformer
    architectures``: BibTeX reads ``_`` and ``&`` in a braced value as they are, and managers
    show them so), but that nothing in it can end the value or cut it: a separator, brace or
    backslash becomes a space, a double quote goes (it ends a quoted value). ``#``, ``@`` and
    ``%`` are kept: inside braces or quotes BibTeX reads them as they are, and so does
    bibtexparser (``@`` starts a block for it only at the start of a line, and a tag word never
    is; ``%`` is a comment in LaTeX, not in BibTeX)."""
    return " ".join(re.sub(r"[,;{}\\]", " ", tag.replace('"', "")).split())


def _without_prefixed(inner: str, prefix: str) -> str:
    """A keywords value without the keywords that start with ``prefix``, and their separators;
    the others, and the separators between them, as written."""
    parts = re.split(r"(\s*[,;]\s*)", inner)  # keyword, separator, keyword, ...
    kept: list[str] = []
    for index in range(0, len(parts), 2):
        word = parts[index]
        if word.strip().startswith(prefix):
            continue
        if kept and index > 0:
            kept.append(parts[index - 1])
        kept.append(word)
    return "".join(kept).rstrip() if len(kept) != len(parts) else inner


def _separator_of(inner: str) -> str:
    """The separator the user's keywords use (as written, spaces and all), else ``", "``."""
    match = re.search(r"\s*[,;]\s*", inner)
    if match is None:
        return ", "
    separator = match.group().strip()
    return separator + (" " if match.group().endswith((" ", "\t")) else "")


def _add_field(text: str, fields: list[_Field], words: list[str]) -> str:
    last = fields[-1]
    before = text[: last.start]
    gap = before[len(before.rstrip(" \t\r\n")) :]  # what comes before a field's name
    name = text[last.start : last.start + len(last.name)]
    equals = text[last.start + len(last.name) : last.value_start]
    label = "KEYWORDS" if name.isupper() else "Keywords" if name[:1].isupper() else "keywords"
    field = f"{gap}{label}{equals}{{{', '.join(words)}}}"
    after = _skip(text, last.value_end, " \t\r\n")
    if text.startswith(",", after):  # a trailing comma: the new field goes after it, with one
        return text[: after + 1] + field + "," + text[after + 1 :]
    return text[: last.value_end] + "," + field + text[last.value_end :]


def _remove_field(text: str, fields: list[_Field], field: _Field) -> str:
    index = fields.index(field)
    if index > 0:  # from the end of the field before it: its comma and the field go
        return text[: fields[index - 1].value_end] + text[field.value_end :]
    end = _skip(text, field.value_end, " \t\r\n")
    end = _skip(text, end + 1, " \t\r\n") if text.startswith(",", end) else end
    return text[: field.start] + text[end:]


# --- an entry for a paper from elsewhere -------------------------------------------------------


def new_entry(paper: Paper, tags: list[str], prefix: str, key: str) -> str:
    """A minimal entry for a paper read from no BibTeX library: ``@misc`` with its title,
    abstract, venue (as ``howpublished``), year and keywords (the paper's and the tags)."""
    fields = [("title", paper.title), ("abstract", paper.abstract)]
    fields.append(("howpublished", paper.venue))
    fields.append(("year", str(paper.year) if paper.year is not None else None))
    words = [_bibtex_word(k) for k in paper.keywords or []]
    words += [prefix + _bibtex_word(tag) for tag in tags]
    fields.append(("keywords", ", ".join(words) if words else None))
    lines = [f"  {name} = {{{_braced(value)}}}" for name, value in fields if value]
    return f"@misc{{{key},\n" + ",\n".join(lines) + "\n}\n"


def _braced(value: str) -> str:
    """Text as a braced BibTeX value, on one line: a brace without its match (a ``}`` before any
    ``{``, a ``{`` never closed) dropped, and only that."""
    value = " ".join(value.split())
    unmatched, opened = set(), []
    for index, character in enumerate(value):
        if character == "{":
            opened.append(index)
        elif character == "}":
            if opened:
                opened.pop()
            else:
                unmatched.add(index)
    unmatched.update(opened)
    return "".join(c for index, c in enumerate(value) if index not in unmatched)


def safe_key(key: str) -> str:
    """A citation key BibTeX reads: no white space, comma, brace, quote, ``#``, ``%`` or ``=``."""
    return re.sub(r"[\s,{}()\"#%=~\\']", "_", key) or "paper"


def entries(block_list: list[Block]) -> Iterator[Block]:
    """The blocks that are entries (read or not)."""
    return (block for block in block_list if block.is_entry)
