"""Sets of character spans of one text, asked whether a span overlaps any of them, in O(log n):
what rule matching, evidence counting and a sentence's context all ask."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable


class SpanIndex:
    """A fixed set of ``[start, end)`` spans of one text, asked in O(log n) whether any of them
    overlaps a given span: spans sorted by start, with the furthest end reached so far."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self.starts = [start for start, _ in ordered]
        self.reach = list(itertools.accumulate((end for _, end in ordered), max))

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.starts, end)  # the spans that start before ``end``
        return i > 0 and self.reach[i - 1] > start


class DisjointSpans:
    """Spans that never overlap each other, added one by one: only the one that starts last
    before a span's end can overlap it."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.starts, end)
        return i > 0 and self.ends[i - 1] > start

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self.starts, start)
        self.starts.insert(i, start)
        self.ends.insert(i, end)
