"""BibTeX libraries (.bib), both ways: read into blocks by bibtexparser 2 (io.blocks), an
entry's fields into a paper's (LaTeX read as text by pylatexenc, math kept as written), and an
entry's ``keywords`` field rewritten with tags, the rest of its text as it was.

bibtexparser reads; its blocks keep their raw text, which is found in the file in order, so the
blocks (and the text between them) join to the file. Only the rewriting of one field is done by
hand (:func:`with_tags`): bibtexparser 2 writes a library from its model, not as it was written,
and a re-formatted library is no round trip.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..records import Paper
from .blocks import Block, LineOf

_ENTRY_HEAD = re.compile(r"@\s*([A-Za-z]+)\s*[{(]\s*([^,\s{}()]*)")
_NAME = re.compile(r"[^\s=,{}()\"#]+")
_BARE = re.compile(r"[^\s,#{}()\"]+")
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_SEPARATOR = re.compile(r"\s*[,;]\s*")
_MARKUP = re.compile(r"[\\$~%]|--|``|''")  # what pylatexenc reads otherwise than as written


def blocks(text: str) -> list[Block]:
    """The blocks of a BibTeX file, in order, joining to ``text``: entries (read, or with the
    problem that stops them being read: an unbalanced brace, a key used before, a field given
    twice), and the rest (comments, ``@string``, ``@preamble``, ``@comment``, blank lines)."""
    import bibtexparser
    from bibtexparser import model

    logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # what fails is reported here
    library = bibtexparser.parse_string(text)  # @string macros resolved, enclosing braces cut
    strings: dict[str, str] = {}  # a macro's name (lower case) -> its @string block's text
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
        if isinstance(block, model.String):
            strings[block.key.lower()] = raw
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
            fields = {"ENTRYTYPE": block.entry_type}
            fields |= {field.key.lower(): field.value for field in block.fields}
            uses = tuple(strings[name] for name in _macros(raw) if name in strings)
            found.append(Block(raw, line, block.key, fields=fields, uses=uses))
        else:  # @comment, @preamble, text between entries
            found.append(Block(raw, line))
    if cursor < len(text):
        found.append(Block(text[cursor:], line_of(cursor)))
    return found


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
    year = _YEAR.search(fields.get("year") or fields.get("date") or "")
    if year:
        paper["year"] = int(year.group(1))
    keywords = [k for k in _SEPARATOR.split(fields.get("keywords", "")) if k.strip()]
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


def _macros(text: str) -> list[str]:
    """The macro names (lower case) an entry's field values use: ``journal = jmlr``."""
    names = []
    for field in _fields(text):
        for start, end in field.pieces:
            piece = text[start:end]
            if piece[:1] not in '{"' and not piece.isdigit():
                names.append(piece.lower())
    return names


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
    braced = value[:1] in '{"' and len(field.pieces) == 1
    inner = value[1:-1] if braced else value
    kept = _without_prefixed(inner, prefix)
    if not kept.strip() and not words:
        return _remove_field(text, fields, field)
    separator = _separator_of(inner)
    joined = separator.join([kept, *words]) if kept.strip() else separator.join(words)
    new = f"{value[0]}{joined}{value[-1]}" if braced else "{" + joined + "}"
    return text[: field.value_start] + new + text[field.value_end :]


def _bibtex_word(tag: str) -> str:
    """A tag as one keyword, as it is (``rl.offline``, ``Offline RL``, ``Attention & transformer
    architectures``: BibTeX reads ``_`` and ``&`` in a braced value as they are, and managers
    show them so), but that a separator, brace or backslash in it becomes a space."""
    return " ".join(re.sub(r"[,;{}\\]", " ", tag).split())


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
    """Text as a braced BibTeX value: braces balanced (unbalanced ones dropped), one line."""
    value = " ".join(value.split())
    out, depth = [], 0
    for character in value:
        if character == "{":
            depth += 1
        elif character == "}":
            if depth == 0:
                continue
            depth -= 1
        out.append(character)
    return "".join(out) + "}" * depth


def safe_key(key: str) -> str:
    """A citation key BibTeX reads: no white space, comma, brace, quote, ``#``, ``%`` or ``=``."""
    return re.sub(r"[\s,{}()\"#%=~\\']", "_", key) or "paper"


def entries(block_list: list[Block]) -> Iterator[Block]:
    """The blocks that are entries (read or not)."""
    return (block for block in block_list if block.is_entry)
