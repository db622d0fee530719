"""The data files tagger ships in ``tagger/data`` (models, tables, schemes): read one, or a
user's file in its place; and tell whether a fitted model was fitted on a given judged set."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any


def read_json(path: str | Path | None, shipped: str) -> Any:
    """The JSON at ``path``, or the shipped ``tagger/data/<shipped>`` without one. OSError and
    ValueError reach the caller, which says which file it could not read."""
    if path:
        return parse_json(Path(path).read_bytes())
    return parse_json(resources.files("tagger").joinpath("data", shipped).read_bytes())


def parse_json(data: bytes) -> Any:
    """The JSON in ``data`` (UTF-8), as ``json.loads`` reads it, by orjson where it can: a
    model's 2 MB of JSON in a third of the time. Where orjson refuses what json reads (NaN,
    Infinity, an integer over 64 bits), json reads it; ValueError if neither can."""
    import orjson

    with gc_paused():
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return json.loads(data.decode("utf-8"))


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection while a model file's objects are made: they all live on, and the
    collections its hundred thousand new objects set off would only walk them (half the time
    reading a large model takes)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def package_dir() -> Path:
    """The directory tagger is installed in (``tagger/``), symlinks resolved: nothing a user
    makes is written inside it (fitting.modeldir.check_target)."""
    return Path(str(resources.files("tagger"))).resolve()


def data_dir(name: str) -> Path:
    """The shipped directory ``tagger/data/<name>`` (a model's files: ``minilm``, ``static``)."""
    return Path(str(resources.files("tagger").joinpath("data", name)))


def read_bytes(shipped: str) -> bytes:
    """The bytes of the shipped ``tagger/data/<shipped>``."""
    return resources.files("tagger").joinpath("data", shipped).read_bytes()


def fitted_on(about: Mapping[str, Any], path: str | Path) -> bool:
    """Whether a model whose record is ``about`` was fitted on the judged set in the file at
    ``path`` (the file's sha256 is in the record)."""
    try:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return False
    return about.get("judged_sha256") == digest
