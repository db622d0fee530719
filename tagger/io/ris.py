"""RIS libraries (.ris), both ways: cut into records (``TY  - `` to ``ER  - ``) and what lies
between (io.blocks), a record's tags read by rispy into a paper's fields, and a record's
``KW  - `` lines rewritten with tags, its other lines as they were."""

from __future__ import annotations

import re
from typing import Any

from ..records import Paper
from .blocks import Block, year_in

_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
_START = re.compile(r"(?:\ufeff|\u00ef\u00bb\u00bf)?\s*TY  -")  # a BOM (read as UTF-8 or not)
_END = re.compile(r"ER  -")
_KEYWORD = re.compile(r"KW  - ?(.*?)\r?\n?$")
_STRAY = (
    "lines outside any record (a record runs from a 'TY  - ' line to an 'ER  - ' line, each tag "
    "two capitals, two spaces, a hyphen and a space): they are not read"
)


def blocks(text: str) -> list[Block]:
    """The blocks of a RIS file, joining to ``text``: each record from its ``TY`` line to its
    ``ER`` line, and the lines between records. A record that the next ``TY`` or the file's end
    cuts short of its ``ER`` line is an entry with a problem."""
    import rispy

    found: list[Block] = []
    lines = _LINE.findall(text)
    first_line: dict[str, int] = {}
    index = 0
    while index < len(lines):
        start = index
        if not _START.match(lines[index]):
            while index < len(lines) and not _START.match(lines[index]):
                index += 1
            between = "".join(lines[start:index])
            stray = next((k for k in range(start, index) if lines[k].strip("\ufeff \t\r\n")), None)
            if stray is None:
                found.append(Block(between, start + 1))
            else:  # text outside any record: said, and written back as it is
                found.append(Block(between, stray + 1, problem=_STRAY))
            continue
        index += 1
        while index < len(lines) and not (_END.match(lines[index]) or _START.match(lines[index])):
            index += 1
        ended = index < len(lines) and _END.match(lines[index]) is not None
        index += ended
        raw = "".join(lines[start:index])
        if not ended:
            found.append(Block(raw, start + 1, problem="the record has no 'ER  - ' line ending it"))
            continue
        try:
            (fields,) = rispy.loads(
                raw.replace("\r\n", "\n").lstrip("\ufeff\u00ef\u00bb\u00bf \t\r\n")
            )
        except Exception as exc:  # rispy raises plain exceptions on what it cannot read
            found.append(Block(raw, start + 1, problem=f"it cannot be read by rispy: {exc}"))
            continue
        key = fields.get("id") or None
        if key is not None and key in first_line:
            problem = f"the ID {key!r} is used before at line {first_line[key]}"
            found.append(Block(raw, start + 1, key, problem=problem))
            continue
        if key is not None:
            first_line[key] = start + 1
        found.append(Block(raw, start + 1, key, fields=fields))
    return found


def paper_fields(fields: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A paper's fields from a record's (as rispy names them): the ID, title (TI, T1), abstract
    (AB, N2), venue (JO, T2, JF, JA), year (PY, Y1, DA) and the user's keywords (KW)."""
    paper: dict[str, Any] = {}
    if fields.get("id"):
        paper["id"] = str(fields["id"])
    for ours, theirs in (
        ("title", ("title", "primary_title")),
        ("abstract", ("abstract", "notes_abstract")),
        ("venue", ("journal_name", "secondary_title", "alternate_title3", "alternate_title2")),
    ):
        value = next((fields[n] for n in theirs if str(fields.get(n) or "").strip()), None)
        if value is not None:
            paper[ours] = " ".join(str(value).split())
    for name in ("year", "publication_year", "date"):
        year = year_in(str(fields.get(name) or ""))
        if year is not None:
            paper["year"] = year
            break
    keywords = [k for k in fields.get("keywords") or [] if k.strip() and not k.startswith(prefix)]
    if keywords:
        paper["keywords"] = keywords
    return paper


def with_tags(text: str, tags: list[str], prefix: str) -> str:
    """The record ``text`` with a ``KW  - `` line for each of ``tags`` (``prefix`` + tag) after
    its last keyword line (else before its ``ER`` line), the earlier ``prefix``-ed ones dropped;
    every other line as it was."""
    lines = _LINE.findall(text)
    end = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    kept = [
        line
        for line in lines
        if not ((m := _KEYWORD.match(line)) and m.group(1).strip().startswith(prefix))
    ]
    at = max((k + 1 for k, line in enumerate(kept) if _KEYWORD.match(line)), default=None)
    if at is None:
        at = next((k for k, line in enumerate(kept) if _END.match(line)), len(kept))
    new = [f"KW  - {prefix}{' '.join(tag.split())}{end}" for tag in tags]
    return "".join(kept[:at] + new + kept[at:])


def new_entry(paper: Paper, tags: list[str], prefix: str, key: str) -> str:
    """A minimal record for a paper read from no RIS library: ``TY  - GEN`` with its ID,
    title, abstract, venue (JO), year (PY) and keywords (the paper's and the tags)."""
    lines = [("TY", "GEN"), ("ID", key), ("TI", paper.title), ("AB", paper.abstract)]
    lines += [("JO", paper.venue), ("PY", str(paper.year) if paper.year else None)]
    lines += [("KW", k) for k in paper.keywords or []]
    lines += [("KW", prefix + tag) for tag in tags]
    body = "".join(f"{tag}  - {' '.join(v.split())}\n" for tag, v in lines if v)
    return body + "ER  - \n"
