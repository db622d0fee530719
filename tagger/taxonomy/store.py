"""Taxonomies kept in the cache directory under their sha256, so that `tagger retag` can compare
the taxonomy a paper was tagged with to the one it is retagged with, and the commands that read
tagged output can read it with the taxonomy it was tagged with (:func:`tagged_with`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re

from ..config import cache_dir
from .model import Area, Taxonomy, build_taxonomy


def remember(taxonomy: Taxonomy) -> None:
    """Keep the taxonomy's canonical JSON in the cache directory, under its sha256, once: what
    `tagger retag` compares a later taxonomy with, to find the papers an edit cannot change.
    A cache that cannot be written is ignored."""
    where = cache_dir()
    path = where / "taxonomies" / f"{taxonomy.sha256}.json" if where else None
    if path is None or path.exists():
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(taxonomy.canonical())
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def recall(sha256: str) -> Taxonomy | None:
    """The taxonomy :func:`remember` kept under ``sha256``, if it is there and intact."""
    where = cache_dir()
    if where is None or not re.fullmatch(r"[0-9a-f]{64}", sha256):
        return None
    try:
        raw = (where / "taxonomies" / f"{sha256}.json").read_bytes()
        if hashlib.sha256(raw).hexdigest() != sha256:
            return None
        data = json.loads(raw)
        areas = [Area.model_validate(area) for area in data["areas"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return build_taxonomy(data["version"], areas, f"the taxonomy of sha256 {sha256[:12]}", {})


def tagged_with(sha256: str) -> Taxonomy | None:
    """The taxonomy of ``sha256`` (what a tagged line's provenance names): the packaged one, or
    one :func:`remember` kept (every taxonomy tagger tags with); None if it is neither."""
    from .loading import load_taxonomy

    packaged = load_taxonomy()
    return packaged if packaged.sha256 == sha256 else recall(sha256)
