"""CSL JSON libraries (Zotero's, Mendeley's and pandoc's JSON export), both ways: the array cut
into its items and what lies between them (io.blocks), an item's variables into a paper's
fields, and an item's ``keyword`` rewritten with tags.

"Byte-identical" for CSL JSON: every byte of the file but a tagged item's ``keyword`` value is
written as it was. An item is never written again as JSON: its ``keyword`` value's text is
replaced in place (the user's keywords in it as written, separators and escapes too), or, if it
has none, ``"keyword": "..."`` is added after its last member, in that member's indentation and
line end; numbers such as ``1E400`` or ``1.10``, duplicate keys and compact values stay as they
are.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..records import Paper
from .blocks import KEYWORD_SEPARATOR, Block, LineOf

_DECODER = json.JSONDecoder()
# finding where a value ends, never making a number of it (1E400 would be inf)
_SCANNER = json.JSONDecoder(parse_float=str, parse_int=str, parse_constant=str)
_SPACE = " \t\r\n"
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_Member = tuple[int, int, int, int]  # an object member's key start and end, value start and end
NOT_KEYWORDS = "its keyword is neither text nor a list of texts"


class NotCsl(ValueError):
    """The text is no JSON array (the whole file's problem, not one item's)."""


def blocks(text: str) -> list[Block]:
    """The blocks of a CSL JSON file, joining to ``text``: its items, and the text between them
    (``[``, commas, white space, ``]``). An item that is no object, is nested too deeply to read
    or has a ``keyword`` that is neither text nor a list of texts is an entry with a problem, and
    so are a comma after the last item and text after the array's end; a file that is no JSON
    array raises :class:`NotCsl`, with the line where it goes wrong."""
    found: list[Block] = []
    line_of = LineOf(text)
    position = _skip(text, 1 if text.startswith("\ufeff") else 0)
    if not text.startswith("[", position):
        raise NotCsl("expected a JSON array of CSL items (a file that starts with '[')", 1)
    cursor, position = 0, _skip(text, position + 1)
    first_line: dict[str, int] = {}
    comma = -1  # where the comma after the last item read is
    while position < len(text) and text[position] != "]":
        try:
            item, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise NotCsl(f"invalid JSON: {exc.msg} at column {exc.colno}", exc.lineno) from None
        except RecursionError:
            item, end = _TOO_DEEP, _value_end(text, position, line_of)
        found.append(Block(text[cursor:position], line_of(cursor)))
        line = line_of(position)
        raw = text[position:end]
        key = None
        if isinstance(item, dict) and item.get("id") not in (None, ""):
            key = str(item["id"])
        if item is _TOO_DEEP:
            found.append(Block(raw, line, problem="nested too deeply to read"))
        elif not isinstance(item, dict):
            found.append(Block(raw, line, problem="the item is no JSON object"))
        elif key is not None and key in first_line:
            problem = f"the id {key!r} is used before at line {first_line[key]}"
            found.append(Block(raw, line, key, problem=problem))
        else:
            if key is not None:
                first_line[key] = line
            if "keyword" in item and _keywords(item["keyword"]) is None:
                found.append(Block(raw, line, key, problem=NOT_KEYWORDS))
            else:
                found.append(Block(raw, line, key, fields=item))
        cursor, position, comma = end, _skip(text, end), -1
        if text.startswith(",", position):
            comma, position = position, _skip(text, position + 1)
        elif position < len(text) and text[position] != "]":
            raise NotCsl("invalid JSON: expected ',' or ']' after an item", line_of(position))
    if not text.startswith("]", position):
        raise NotCsl("invalid JSON: the array is not closed with ']'", line_of(position))
    if comma >= 0:
        found.append(Block(text[cursor:comma], line_of(cursor)))
        problem = "a comma after the last item: not JSON (remove it)"
        found.append(Block(",", line_of(comma), problem=problem))
        cursor = comma + 1
    after = _skip(text, position + 1)
    if after < len(text):
        found.append(Block(text[cursor:after], line_of(cursor)))
        problem = "text after the array's end: not JSON"
        found.append(Block(text[after:], line_of(after), problem=problem))
    else:
        found.append(Block(text[cursor:], line_of(cursor)))
    return found


_TOO_DEEP = object()


def _value_end(text: str, position: int, line_of: LineOf) -> int:
    """Where the array or object at ``position`` ends, by its brackets (no recursion: for one
    nested too deeply for the JSON decoder)."""
    depth = 0
    while position < len(text):
        char = text[position]
        if char == '"':
            string = _STRING.match(text, position)
            if string is None:
                break
            position = string.end()
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    raise NotCsl("invalid JSON: an item is not closed", line_of(len(text)))


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in _SPACE:
        position += 1
    return position


def _keywords(value: Any) -> list[str] | None:
    """The keywords of a ``keyword`` value: a string's split at commas and semicolons, a list
    of strings' own; None if it is neither."""
    if isinstance(value, str):
        return [w.strip() for w in KEYWORD_SEPARATOR.split(value)]
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return [w.strip() for w in value]
    return None


def paper_fields(fields: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A paper's fields from a CSL item's variables: id, title, abstract, venue
    (container-title), year (issued's first date part, else its raw or literal date) and the
    user's keywords (``keyword``: a string, split at commas as Zotero writes it, or at
    semicolons; or a list of strings), not tagger's own (``prefix``-ed)."""
    paper: dict[str, Any] = {}
    if fields.get("id") not in (None, ""):
        paper["id"] = str(fields["id"])
    names = (("title", "title"), ("abstract", "abstract"), ("venue", "container-title"))
    for ours, theirs in names:
        value = fields.get(theirs)
        if isinstance(value, str) and value.strip():
            paper[ours] = " ".join(value.split())
    year = _year(fields.get("issued"))
    if year is not None:
        paper["year"] = year
    words = [w for w in _keywords(fields.get("keyword")) or [] if w and not w.startswith(prefix)]
    if words:
        paper["keywords"] = words
    return paper


def _year(issued: Any) -> int | None:
    if not isinstance(issued, dict):
        return None
    parts = issued.get("date-parts")
    try:
        return int(parts[0][0])
    except (TypeError, ValueError, IndexError, KeyError, OverflowError):
        pass
    written = str(issued.get("raw") or issued.get("literal") or "")
    found = re.search(r"(?<!\d)(\d{4})(?!\d)", written)
    return int(found.group(1)) if found else None


# --- writing tags back --------------------------------------------------------------------------


def with_tags(text: str, tags: list[str], prefix: str) -> str:
    """The item ``text`` with ``tags`` (``prefix`` + tag) in its ``keyword`` variable (the last,
    if it is given twice, as JSON readers keep it), nothing else of it changed.

    A string keeps the user's keywords as written, separators and all; earlier ``prefix``-ed
    ones are dropped, each with the separator before it, and the tags appended with the user's
    first separator (``, `` if there is none). A list of strings keeps the user's strings and
    gets the tags appended as strings. An item without ``keyword`` gets one after its last
    member. A ``keyword`` that held tagger's keywords alone, and is left empty, is removed (so
    writing back without tags gives the export back); one that was empty stays. A ``keyword``
    that is neither (the reader reports it) and an unchanged one: the text as it was."""
    members, _ = _members(text)
    found = [m for m in members if json.loads(text[m[0] : m[1]]) == "keyword"]
    ascii_only = text.isascii()
    words = [prefix + " ".join(KEYWORD_SEPARATOR.sub(" ", tag).split()) for tag in tags]
    if not found:
        if not words:
            return text
        value = json.dumps(", ".join(words), ensure_ascii=ascii_only)
        return _insert(text, members, value)
    key_start, key_end, start, end = found[-1]
    raw = text[start:end]
    if raw.startswith('"'):
        value = _string_with(raw[1:-1], words, prefix, ascii_only)
        if value == "" and raw != '""':
            return _remove(text, members, found[-1])
        value = '"' + value + '"'
    elif raw.startswith("[") and _keywords(json.loads(raw)) is not None:
        value = _list_with(raw, words, prefix, ascii_only)
    else:
        return text
    return text if value == raw else text[:start] + value + text[end:]


def _string_with(raw: str, words: list[str], prefix: str, ascii_only: bool) -> str:
    """A ``keyword`` string's text (as written, between its quotes) with its ``prefix``-ed
    entries dropped and ``words`` appended."""
    parts = KEYWORD_SEPARATOR.split(raw)
    separators = [""] + KEYWORD_SEPARATOR.findall(raw)
    kept = [(s, w) for s, w in zip(separators, parts, strict=True) if not _is_ours(w, prefix)]
    if kept:
        kept[0] = ("", kept[0][1])
    # white space before a first keyword of ours is the user's ("   " stays "   "), so that a
    # second run writes what the first did
    lead = parts[0][: len(parts[0]) - len(parts[0].lstrip())] if _is_ours(parts[0], prefix) else ""
    user = lead + "".join(s + w for s, w in kept)
    separator = next((s for s, _ in kept[1:]), ", ")
    added = separator.join(json.dumps(w, ensure_ascii=ascii_only)[1:-1] for w in words)
    return user + (separator if user.strip() and added else "") + added


def _is_ours(word: str, prefix: str) -> bool:
    return word.strip().startswith(prefix)


def _list_with(raw: str, words: list[str], prefix: str, ascii_only: bool) -> str:
    """A ``keyword`` list's text with its ``prefix``-ed strings dropped (each with the comma
    before it) and ``words`` appended as strings, after the comma and spacing between its
    first two (``, `` if it has fewer)."""
    elements, close = _elements(raw)
    ours = [_is_ours(json.loads(raw[s:e]), prefix) for s, e in elements]
    kept = [i for i, dropped in enumerate(ours) if not dropped]
    separators = [raw[elements[i - 1][1] : elements[i][0]] for i in kept[1:]]
    if not separators and len(elements) > 1:
        separators = [raw[elements[0][1] : elements[1][0]]]
    separator = separators[0] if separators else ", "
    opening = raw[1 : elements[0][0]] if elements else raw[1:close]
    out = ["[", opening]
    for index in kept:
        if index != kept[0]:
            out.append(raw[elements[index - 1][1] : elements[index][0]])
        out.append(raw[elements[index][0] : elements[index][1]])
    added = [json.dumps(w, ensure_ascii=ascii_only) for w in words]
    out.append("".join(separator + w for w in added) if kept else separator.join(added))
    out.append(raw[elements[-1][1] :] if elements else raw[close:])
    return "".join(out)


def _members(text: str) -> tuple[list[_Member], int]:
    """The members of the JSON object ``text`` (an item, as read): each one's key's start and
    end and its value's start and end; and where its closing brace is."""
    members = []
    position = _skip(text, 1)
    while text[position] != "}":
        key_start = position
        _, key_end = _SCANNER.raw_decode(text, key_start)
        position = _skip(text, key_end)
        start = _skip(text, position + 1)  # after the ':'
        _, end = _SCANNER.raw_decode(text, start)
        members.append((key_start, key_end, start, end))
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)
    return members, position


def _elements(text: str) -> tuple[list[tuple[int, int]], int]:
    """The elements of the JSON array ``text``: each one's start and end; and where its closing
    bracket is."""
    elements = []
    position = _skip(text, 1)
    while text[position] != "]":
        _, end = _SCANNER.raw_decode(text, position)
        elements.append((position, end))
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)
    return elements, position


def _insert(text: str, members: list[_Member], value: str) -> str:
    """``text`` with ``"keyword": value`` added after its last member, in its indentation, line
    end, and spacing after the colon; in an empty object, first."""
    if not members:
        return text[:1] + '"keyword": ' + value + text[1:]
    key_start, key_end, start, end = members[-1]
    before = text[_skip_back(text, key_start) : key_start]
    if not before and len(members) == 1:
        before = " "
    colon = text[key_end:start]
    return text[:end] + "," + before + '"keyword"' + colon + value + text[end:]


def _skip_back(text: str, position: int) -> int:
    while position > 0 and text[position - 1] in _SPACE:
        position -= 1
    return position


def _remove(text: str, members: list[_Member], member: _Member) -> str:
    """``text`` without ``member``: from the end of the member before it (with the comma
    between), or, for the first, up to the next member's key."""
    index = members.index(member)
    if index:
        return text[: members[index - 1][3]] + text[member[3] :]
    if len(members) > 1:
        return text[: member[0]] + text[members[1][0] :]
    return text[: member[0]] + text[member[3] :]


def new_entry(paper: Paper, tags: list[str], prefix: str, key: str) -> dict[str, Any]:
    """A minimal CSL item for a paper read from no CSL library: ``article`` with its id, title,
    abstract, container-title, issued year and keyword (the paper's keywords and the tags)."""
    item: dict[str, Any] = {"id": key, "type": "article"}
    if paper.title:
        item["title"] = paper.title
    item["abstract"] = paper.abstract
    if paper.venue:
        item["container-title"] = paper.venue
    if paper.year is not None:
        item["issued"] = {"date-parts": [[paper.year]]}
    words = [*(paper.keywords or []), *(prefix + tag for tag in tags)]
    if words:
        item["keyword"] = ", ".join(KEYWORD_SEPARATOR.sub(" ", w) for w in words)
    return item
