"""The data files tagger ships in ``tagger/data`` (models, tables, schemes): read one, or a
user's file in its place; and tell whether a fitted model was fitted on a given judged set."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any


def read_json(path: str | Path | None, shipped: str) -> Any:
    """The JSON at ``path``, or the shipped ``tagger/data/<shipped>`` without one. OSError and
    ValueError reach the caller, which says which file it could not read."""
    if path:
        text = Path(path).read_text(encoding="utf-8")
    else:
        text = resources.files("tagger").joinpath("data", shipped).read_text(encoding="utf-8")
    return json.loads(text)


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
