"""Importing a library without the heavy optional parts it would load on the side."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without(*names: str) -> Iterator[None]:
    """Inside the block, import as if the modules ``names`` were not installed (unless they are
    loaded already). thinc (under spaCy) imports torch if it can, and KeyBERT imports
    sentence-transformers and transformers, only to offer backends tagger does not use; each
    falls back cleanly when they are missing. Importing torch costs about 1-5 s and 400 MB.
    After the block they import as usual (the torch backend loads them then)."""
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` now fails
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
