"""A reference manager's library cut into blocks: what each format's reader (io.bibtex, io.ris,
io.csljson) hands io.libraries, which reads papers from the entries and writes tags back.

The blocks of a file, joined, are the file, character for character: an entry, and everything
between entries (comments, ``@string`` macros, JabRef's groups, blank lines, an entry that cannot
be read), each in its place. Writing a library back is joining its blocks with the tagged
entries' tag field changed, so nothing else can change."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Between two keywords of one field (BibTeX keywords, a CSL keyword string): a comma or a
# semicolon, with the white space around it
KEYWORD_SEPARATOR = re.compile(r"\s*[,;]\s*")
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a library, as written in it.

    ``fields`` are an entry's fields as read (LaTeX and all, macros expanded); None for what is
    no entry, or an entry that cannot be read, whose ``problem`` then says why. ``key`` is an
    entry's key (BibTeX's citation key, RIS's ID, CSL's id), when it has one."""

    text: str
    line: int  # 1-based, where the block starts
    key: str | None = None
    fields: dict[str, Any] | None = None
    problem: str | None = None
    uses: tuple[str, ...] = ()  # the text of the blocks it needs (BibTeX's @string macros)
    notice: str | None = None  # a warning about what is no entry (an @string defined again)

    @property
    def is_entry(self) -> bool:
        """Whether the block is an entry (read or not), rather than what lies between them."""
        return self.fields is not None or self.problem is not None


class LineOf:
    """The line a position of ``text`` is on, counted on from the last position asked about
    (positions come in order, as a reader cuts blocks): a file is counted through once, not once
    per block."""

    def __init__(self, text: str) -> None:
        self.text, self.position, self.line = text, 0, 1

    def __call__(self, position: int) -> int:
        if position < self.position:
            self.position, self.line = 0, 1
        self.line += self.text.count("\n", self.position, position)
        self.position = position
        return self.line


def year_in(text: str) -> int | None:
    """The first four-digit number standing alone in a date as written ('2021', '2021-03',
    'March 2021'), as a year; None if there is none."""
    found = _YEAR.search(text)
    return int(found.group(1)) if found else None
