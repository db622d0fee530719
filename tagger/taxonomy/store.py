"""Taxonomies kept in the cache directory under their sha256, so that `tagger retag` can compare
the taxonomy a paper was tagged with to the one it is retagged with, and the commands that read
tagged output can read it with the taxonomy it was tagged with (:func:`tagged_with`)."""

from __future__ import annotations

import hashlib
import json
import re

from ..io import cache
from .model import Area, Taxonomy, build_taxonomy


def remember(taxonomy: Taxonomy) -> None:
    """Keep the taxonomy's canonical JSON in the cache directory, under its sha256, once: what
    `tagger retag` compares a later taxonomy with, to find the papers an edit cannot change.
    A cache that cannot be written is ignored (io.cache)."""
    where = cache.subdirectory("taxonomies")
    if where is None:
        return
    path = where / f"{taxonomy.sha256}.json"
    kept = cache.read(path)
    if kept is None or hashlib.sha256(kept).hexdigest() != taxonomy.sha256:  # missing, damaged
        cache.write(path, taxonomy.canonical())


def recall(sha256: str) -> Taxonomy | None:
    """The taxonomy :func:`remember` kept under ``sha256``, if it is there and intact (its
    bytes have that sha256: the file's name is its digest)."""
    where = cache.directory()
    if where is None or not re.fullmatch(r"[0-9a-f]{64}", sha256):
        return None
    raw = cache.read(where / "taxonomies" / f"{sha256}.json")
    if raw is None or hashlib.sha256(raw).hexdigest() != sha256:
        return None
    try:
        data = json.loads(raw)
        areas = [Area.model_validate(area) for area in data["areas"]]
    except (ValueError, KeyError, TypeError):
        return None
    return build_taxonomy(data["version"], areas, f"the taxonomy of sha256 {sha256[:12]}", {})


def tagged_with(sha256: str) -> Taxonomy | None:
    """The taxonomy of ``sha256`` (what a tagged line's provenance names): the packaged one, or
    one :func:`remember` kept (every taxonomy tagger tags with); None if it is neither."""
    from .loading import load_taxonomy

    packaged = load_taxonomy()
    return packaged if packaged.sha256 == sha256 else recall(sha256)
