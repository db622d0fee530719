"""What messages print: text from papers and taxonomies made safe for a terminal (a venue or a
title may hold an escape sequence that would recolour, clear or rewrite the screen of whoever
reads the output), paths as short as they can be while still naming the file, and the progress
bar of a long step."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

# C0 and C1 controls (ESC among them), line and paragraph separators, and bidirectional controls
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` on one line, with every control character written as its escape (``\\x1b``);
    runs of whitespace, line breaks included, become one space."""
    text = " ".join(text.split())
    return _UNPRINTABLE.sub(lambda found: ascii(found.group())[1:-1], text)


def short_path(path: str | os.PathLike[str]) -> str:
    """``path`` as messages print it: an absolute path inside the working directory relative to
    it (``examples/overlay.yaml``, not ``/home/me/tagger/examples/overlay.yaml``); any other as
    it was given."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    try:
        relative = os.path.relpath(text, os.getcwd())
    except (OSError, ValueError):  # no working directory; another drive
        return text
    return text if relative.split(os.sep, 1)[0] == os.pardir else relative


def progress_bar(
    items: Iterable[T], *, total: int | None, unit: str = "papers", initial: int = 0
) -> Iterator[T]:
    """``items`` as they come, with a bar on stderr that counts them against ``total`` (None:
    not known, so a count and a rate only) and says the time left. ``initial``: how many were
    done before (a resumed run), counted in the bar and not in its rate. The clock starts when
    the first item comes: what came before it (loading the models) is not work the rest will
    repeat, and counted in, it made the first estimate hours long."""
    from tqdm import tqdm

    bar = tqdm(
        total=total,
        initial=initial,
        unit=f" {unit}",
        file=sys.stderr,
        dynamic_ncols=True,
        smoothing=0.1,
    )
    with bar:
        for n, item in enumerate(items):
            if n == 0:
                bar.reset(total=total)
                bar.n = bar.initial = initial + 1
                bar.refresh()
            else:
                bar.update()
            yield item
