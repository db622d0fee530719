"""The plain-text paper list, as people write it: one abstract per paragraph, blank lines between,
perhaps under a header that names the venue and year of the papers after it.

What it decides, in reading a list's lines (io.readers makes each entry a Paper or an InputError):

- A paragraph that is a header gives the venue and year of the papers after it, and is said to
  (a notice). A header names a venue (a word with two capitals or more: ICML, NeurIPS, CoRL) and a
  year, in either order, with at most a few words of the kind people put there: ``ICML 2025
  Papers``, ``ICLR 2025 Oral Papers``, ``Papers from NeurIPS 2025``, ``NeurIPS'25 Papers``,
  ``2024 NeurIPS``, ``ICLR 2025 论文列表``.
- A short first line that is no header it knows (one line, no full stop) is read as a paper, with
  a warning naming it: it may be a header, and then every paper would lack its venue and year.
- A paragraph of several lines each long enough to be an abstract (ABSTRACT_LINE characters or
  more) holds several papers, one ending at each such line (shorter lines before one, a title
  say, go with it; those after the last, with the last), with a warning: lists are written one
  abstract per line too, and read as one paragraph they were one paper with the tags of all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..errors import InputNotice
from ..records import MAX_ABSTRACT_CHARS

ABSTRACT_LINE = 300  # characters: a line this long is an abstract of its own (real ones: 800+)
_SHORT_PARAGRAPH = 120  # a one-line first paragraph shorter than this may be a header

_VENUE = r"[A-Z][A-Za-z]*[A-Z][A-Za-z]*"
_YEAR = r"(?:19|20)\d\d"
_SHORT_YEAR = r"['’]\d\d"  # NeurIPS'25
_KIND = (  # what the papers of a list are: "Accepted Papers", "Oral Papers", "Spotlights"
    r"(?i:(?:(?:accepted|oral|spotlight|poster|highlighted|main|track|conference)\s+){0,3}"
    r"(?:papers?|paper\s+list|abstracts?|orals|spotlights|posters))"
)
_CHINESE = r"(?:论文列表|论文摘要|论文)"
_NAMED = (
    rf"(?P<venue>{_VENUE})\s*(?P<year>{_YEAR}|{_SHORT_YEAR})"
    rf"|(?P<year2>{_YEAR})\s+(?P<venue2>{_VENUE})"
)
_HEADER = re.compile(
    rf"\s*(?:"
    rf"(?:{_NAMED})(?:\s*[-–—:：]?\s*{_KIND}|\s*{_CHINESE})?"
    rf"|{_KIND}\s+(?i:from|of|at|in|accepted\s+(?:at|to|by))\s+(?i:the\s+)?"
    rf"(?P<venue3>{_VENUE})\s*(?P<year3>{_YEAR}|{_SHORT_YEAR})"
    rf")\s*[:：]?\s*"
)


@dataclass(frozen=True)
class Entry:
    """One paper of a list: the line it starts on, its text (stripped, inner line breaks kept;
    at most MAX_ABSTRACT_CHARS + 1 characters of a longer one), and the venue and year of the
    header above it."""

    line: int
    text: str
    venue: str | None = None
    year: int | None = None


def venue_and_year(line: str) -> tuple[str, int] | None:
    """The venue and year a header line like ``Papers from NeurIPS 2025`` names, if it is one."""
    found = _HEADER.fullmatch(line)
    if found is None:
        return None
    venue = found["venue"] or found["venue2"] or found["venue3"]
    year = found["year"] or found["year2"] or found["year3"]
    return venue, int(year) if year[0].isdigit() else 2000 + int(year[1:])


def paper_list(lines: Iterable[str], source: str) -> Iterator[Entry | InputNotice]:
    """The entries of a paper list's lines (decoded, each ending in a line break), and what is
    worth saying about them, in order (see the module's doc)."""
    venue: str | None = None
    year: int | None = None
    first, warned = True, False
    for block in _blocks(lines):
        if block.split and not warned:
            warned = True
            yield InputNotice(
                f"the paragraph holds several lines of {ABSTRACT_LINE} characters or more, each "
                "long enough to be an abstract: each is read as a paper (with the shorter lines "
                "before it, such as a title); put a blank line between papers to say where each "
                "ends",
                source=source,
                line=block.paragraph,
                warning=True,
            )
        lines_of_block = block.text.split("\n")
        header = venue_and_year(block.text)
        if header is None and block.split and first and len(lines_of_block) > 1:
            header = venue_and_year(lines_of_block[0])  # a header with no blank line after it
            if header is not None:
                block = _Block(block.start + 1, "\n".join(lines_of_block[1:]).strip())
                yield _header(lines_of_block[0], header, source, block.start - 1)
                venue, year = header
                header = None
        elif header is not None:
            yield _header(block.text, header, source, block.start)
            venue, year = header
            first = False
            continue
        if first and _looks_like_a_header(block.text):
            yield InputNotice(
                f"{block.text!r} is read as a paper, but looks like a header: a header names a "
                "venue and a year, like 'ICML 2025 Papers' or 'Papers from NeurIPS 2025'. If it "
                "is one, remove it and give the venue and year (--venue, --year)",
                source=source,
                line=block.start,
                warning=True,
            )
        first = False
        yield Entry(block.start, block.text, venue, year)


def _header(text: str, header: tuple[str, int], source: str, line: int) -> InputNotice:
    venue, year = header
    return InputNotice(
        f"{text!r} is the header: venue {venue}, year {year}", source=source, line=line
    )


def _looks_like_a_header(text: str) -> bool:
    return "\n" not in text and len(text) < _SHORT_PARAGRAPH and not text.endswith(".")


@dataclass(frozen=True)
class _Block:
    start: int  # the line it starts on
    text: str
    split: bool = False  # one of several papers of a paragraph
    paragraph: int = 0  # the line that paragraph starts on


def _blocks(lines: Iterable[str]) -> Iterator[_Block]:
    """Runs of non-blank lines, each with the number of its first line, surrounding whitespace
    stripped and inner line breaks kept; a run with several lines of ABSTRACT_LINE characters or
    more is cut after each of them (the lines after the last go with it). A block longer than
    any abstract may be is not kept whole (its first MAX_ABSTRACT_CHARS + 1 characters stand for
    it), so no file fills the memory."""
    paragraph = 0
    done = _Lines()  # a block up to and including an abstract's line, when one was seen
    pending = _Lines()  # lines after it, or all lines of the paragraph until one is long
    split = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            if done or pending:
                last = done.joined(pending) if done else pending
                yield _Block(last.start, last.text(), split, paragraph)
            done, pending, split = _Lines(), _Lines(), False
            continue
        if not done and not pending:
            paragraph = number
        pending.add(number, line)
        if len(line.strip()) >= ABSTRACT_LINE:
            if done:  # a second abstract in the paragraph: the first ends before it
                split = True
                yield _Block(done.start, done.text(), split, paragraph)
            done, pending = pending, _Lines()
    if done or pending:
        last = done.joined(pending) if done else pending
        yield _Block(last.start, last.text(), split, paragraph)


class _Lines:
    """Lines of one block, kept up to MAX_ABSTRACT_CHARS + 1 characters."""

    def __init__(self) -> None:
        self.start, self.parts, self.size = 0, [], 0

    def __bool__(self) -> bool:
        return bool(self.parts) or self.size > 0

    def add(self, number: int, line: str) -> None:
        if not self:
            self.start = number
        if self.size <= MAX_ABSTRACT_CHARS:
            self.parts.append(line[: MAX_ABSTRACT_CHARS + 1 - self.size])
        self.size += len(line)

    def joined(self, after: _Lines) -> _Lines:
        for part in after.parts:
            self.add(self.start, part)
        self.size += after.size - sum(map(len, after.parts))
        return self

    def text(self) -> str:
        return "".join(self.parts).strip()
