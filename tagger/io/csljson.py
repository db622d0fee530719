"""CSL JSON libraries (Zotero's, Mendeley's and pandoc's JSON export), both ways: the array cut
into its items and what lies between them (io.blocks), an item's variables into a paper's
fields, and an item's ``keyword`` rewritten with tags.

"Byte-identical" for CSL JSON: an item that is not given tags, and everything between items, is
written as it was, byte for byte. An item whose ``keyword`` changes is written again as JSON, in
the item's own indentation (or on one line, if it was on one), its keys in their order and every
other value unchanged; escapes in strings may be written otherwise than they were (``\\u00e9``
as ``é`` in a file with non-ASCII text), which a JSON reader cannot tell apart.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..records import Paper
from .blocks import Block, LineOf

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class NotCsl(ValueError):
    """The text is no JSON array (the whole file's problem, not one item's)."""


def blocks(text: str) -> list[Block]:
    """The blocks of a CSL JSON file, joining to ``text``: its items, and the text between them
    (``[``, commas, white space, ``]``). An item that is no object is an entry with a problem;
    a file that is no JSON array raises :class:`NotCsl`, with the line where it goes wrong."""
    found: list[Block] = []
    line_of = LineOf(text)
    position = _skip(text, 1 if text.startswith("\ufeff") else 0)
    if not text.startswith("[", position):
        raise NotCsl("expected a JSON array of CSL items (a file that starts with '[')", 1)
    cursor, position = 0, _skip(text, position + 1)
    first_line: dict[str, int] = {}
    while position < len(text) and text[position] != "]":
        try:
            item, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise NotCsl(f"invalid JSON: {exc.msg} at column {exc.colno}", exc.lineno) from None
        found.append(Block(text[cursor:position], line_of(cursor)))
        line = line_of(position)
        raw = text[position:end]
        if not isinstance(item, dict):
            found.append(Block(raw, line, problem="the item is no JSON object"))
        else:
            key = str(item["id"]) if item.get("id") not in (None, "") else None
            if key is not None and key in first_line:
                problem = f"the id {key!r} is used before at line {first_line[key]}"
                found.append(Block(raw, line, key, problem=problem))
            else:
                if key is not None:
                    first_line[key] = line
                found.append(Block(raw, line, key, fields=item))
        cursor, position = end, _skip(text, end)
        if text.startswith(",", position):
            position = _skip(text, position + 1)
        elif position < len(text) and text[position] != "]":
            raise NotCsl("invalid JSON: expected ',' or ']' after an item", line_of(position))
    if not text.startswith("]", position):
        raise NotCsl("invalid JSON: the array is not closed with ']'", line_of(position))
    found.append(Block(text[cursor:], line_of(cursor)))
    return found


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in _SPACE:
        position += 1
    return position


def paper_fields(fields: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A paper's fields from a CSL item's variables: id, title, abstract, venue
    (container-title), year (issued's first date part, else its raw or literal date) and the
    user's keywords (``keyword``, comma-separated as Zotero writes it)."""
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
    keyword = fields.get("keyword")
    if isinstance(keyword, str):
        words = [w.strip() for w in keyword.split(",")]
        words = [w for w in words if w and not w.startswith(prefix)]
        if words:
            paper["keywords"] = words
    return paper


def _year(issued: Any) -> int | None:
    if not isinstance(issued, dict):
        return None
    parts = issued.get("date-parts")
    try:
        return int(parts[0][0])
    except (TypeError, ValueError, IndexError, KeyError):
        pass
    written = str(issued.get("raw") or issued.get("literal") or "")
    found = re.search(r"(?<!\d)(\d{4})(?!\d)", written)
    return int(found.group(1)) if found else None


def with_tags(text: str, tags: list[str], prefix: str) -> str:
    """The item ``text`` with ``tags`` (``prefix`` + tag) in its ``keyword`` variable: the user's
    keywords kept, earlier ``prefix``-ed ones dropped, the tags appended, comma-separated; a
    ``keyword`` left empty removed. Unchanged, the text is returned as it was."""
    item = json.loads(text)
    before = item.get("keyword")
    words = [w.strip() for w in before.split(",")] if isinstance(before, str) else []
    words = [w for w in words if w and not w.startswith(prefix)]
    words += [prefix + " ".join(tag.replace(",", " ").split()) for tag in tags]
    if isinstance(before, str) and ", ".join(words) == before:
        return text
    if words:
        item["keyword"] = ", ".join(words)
    elif "keyword" in item and isinstance(before, str):
        del item["keyword"]
    else:
        return text
    return dump_like(item, text)


def dump_like(item: dict[str, Any], text: str) -> str:
    """``item`` as JSON written as ``text`` (an item of the same file) is: on one line, or
    indented as it is, with its closing brace's indentation; ASCII only if it is."""
    ascii_only = text.isascii()
    lines = text.split("\n")
    if len(lines) < 2:
        return json.dumps(item, ensure_ascii=ascii_only)
    closing = lines[-1][: len(lines[-1]) - len(lines[-1].lstrip())]
    inner = lines[1][: len(lines[1]) - len(lines[1].lstrip())]
    unit = inner[len(closing) :] if inner.startswith(closing) and inner != closing else "  "
    carriage = "\r" if lines[0].endswith("\r") else ""
    dumped = json.dumps(item, ensure_ascii=ascii_only, indent=unit)
    return dumped.replace("\n", carriage + "\n" + closing)


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
        item["keyword"] = ", ".join(w.replace(",", " ") for w in words)
    return item
