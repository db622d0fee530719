"""Text from papers and taxonomies, made safe to print on a terminal: a venue or a title may hold
an escape sequence that would recolour, clear or rewrite the screen of whoever reads the output."""

from __future__ import annotations

import re

# C0 and C1 controls (ESC among them), line and paragraph separators, and bidirectional controls
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` on one line, with every control character written as its escape (``\\x1b``);
    runs of whitespace, line breaks included, become one space."""
    text = " ".join(text.split())
    return _UNPRINTABLE.sub(lambda found: ascii(found.group())[1:-1], text)
