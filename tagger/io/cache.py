"""The cache directory (config.cache_dir): what outlives a run, and the guarantees around it.

Every cache file is read and written here. A file is written whole under a temporary name, then
renamed; one made with :func:`save` begins with a header line that names what it was made for
(its key) and the sha256 of the bytes that follow, and :func:`load` gives those bytes back only
if both match, so a damaged file (a flipped bit, a cut end) or another one put in its place (the
vectors of another model) is made again, never used. A cache file is opened only if it is a
regular file: a FIFO or a device in its place would hang a run or read forever. A cache
directory that cannot be used (another user's, not readable or writable by this one) is not
used: the run goes on without a cache, and what went wrong is said once, to whoever asked to be
told (:func:`tell`: the command line's notes).

    where = directory()                         # None: no cache (off, or unusable)
    data = load(where / "x.json", key)          # None: missing, damaged or another key's
    save(where / "x.json", key, data)           # never raises: a cache is an optimisation
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from ..config import cache_dir
from .files import read_regular

MAGIC = b"tagger-cache 1"
MAX_BYTES = 1 << 30  # larger is no cache file of tagger's: a few hundred MB at most (vectors)

_listeners: list[Callable[[str], None]] = []
_said: set[str] = set()  # each trouble is said once
_unusable: dict[Path, str] = {}  # cache directories found unusable, with why


def tell(listener: Callable[[str], None]) -> None:
    """Pass ``listener`` what keeps the cache from being used, each trouble once per process
    (the command line passes its notes: the library prints nothing)."""
    if listener not in _listeners:
        _listeners.append(listener)


def _trouble(message: str) -> None:
    if message not in _said:
        _said.add(message)
        for listener in _listeners:
            listener(message)


def directory() -> Path | None:
    """The cache directory, made if missing; None if the cache is off, or if the directory
    cannot be used (said once: :func:`tell`), and then the run goes on without a cache."""
    where = cache_dir()
    if where is None or where in _unusable:
        return None
    why = _unusable_because(where)
    if why is None:
        return where
    _unusable[where] = why
    _trouble(
        f"the cache directory {where} cannot be used ({why}): running without a cache, so "
        "runs are slower; set TAGGER_CACHE_DIR to a directory of yours (empty: no cache)"
    )
    return None


def _unusable_because(where: Path) -> str | None:
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _why(exc)
    if not where.is_dir():
        return "it is not a directory"
    if not os.access(where, os.R_OK | os.W_OK | os.X_OK):
        return "permission denied: another user's?"
    return None


def _why(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def subdirectory(name: str) -> Path | None:
    """A directory of the cache directory (``rules``, ``taxonomies``), made if missing; None
    without a usable cache, or if it cannot be made and used (said once)."""
    where = directory()
    if where is None:
        return None
    path = where / name
    why = _unusable_because(path)
    if why is not None:
        _trouble(
            f"{path} cannot be used ({why}): running without what tagger keeps there; "
            f"delete {path} to have it made again"
        )
        return None
    return path


def read(path: Path) -> bytes | None:
    """The bytes of the cache file ``path``; None if it is missing, is no regular file (it is
    never opened then: a FIFO would hang), is larger than any cache file, or cannot be read."""
    try:
        return read_regular(path, MAX_BYTES)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            _unreadable(path, exc)
        return None


def _unreadable(path: Path, exc: OSError) -> None:
    _trouble(f"cannot read {path} ({_why(exc)}): running without it; delete it to have it remade")


def write(path: Path, data: bytes) -> bool:
    """Write the cache file ``path`` whole: under a temporary name of this process, then
    renamed over whatever was there. Whether it was written; a cache that cannot be written is
    no error (said once)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(temporary, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
        return True
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        _trouble(f"cannot keep {path} ({_why(exc)}): running without it; delete it if it is there")
        return False


def load(path: Path, key: str) -> bytes | None:
    """The bytes :func:`save` kept at ``path`` under ``key``; None if the file is missing, or
    was made for another key, or its bytes are not the ones its header's sha256 names."""
    data = read(path)
    if data is None:
        return None
    header, newline, body = data.partition(b"\n")
    if not newline or header != _header(key, body):
        return None
    return body


def save(path: Path, key: str, data: bytes) -> bool:
    """Keep ``data`` at ``path`` for ``key`` (see :func:`load`); whether it was written."""
    return write(path, _header(key, data) + b"\n" + data)


def _header(key: str, data: bytes) -> bytes:
    return b"%s key=%s sha256=%s" % (
        MAGIC,
        key.encode("ascii", "backslashreplace"),
        hashlib.sha256(data).hexdigest().encode(),
    )
