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


@contextmanager
def spacy_cli_deferred() -> Iterator[None]:
    """Inside the block, ``import spacy`` does not import spaCy's command line. spaCy's
    ``__init__`` imports ``spacy.cli.info`` for its ``spacy.info`` function, and with it every
    command (typer, weasel, httpx, jinja2, requests): about half of importing spaCy, 0.3-0.6 s
    of every cold start, for code a pipeline never runs. ``spacy.info`` is then a stand-in that
    imports the real one when called; after the block ``import spacy.cli`` imports it as usual."""
    if "spacy" in sys.modules:
        yield
        return
    import types

    def info(*args, **kwargs):
        from spacy.cli.info import info as real

        return real(*args, **kwargs)

    cli, cli_info = types.ModuleType("spacy.cli"), types.ModuleType("spacy.cli.info")
    cli_info.info = info  # type: ignore[attr-defined]
    cli.info = cli_info  # type: ignore[attr-defined]
    stand_ins = {"spacy.cli": cli, "spacy.cli.info": cli_info}
    sys.modules.update(stand_ins)
    try:
        yield
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
        spacy = sys.modules.get("spacy")
        if spacy is not None and getattr(spacy, "cli", None) is cli:
            del spacy.cli  # the next `import spacy.cli` binds the real one
