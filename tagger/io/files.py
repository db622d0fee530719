"""The files tagger reads and writes, and the guarantees around them.

Inputs are read as lines of bounded length with universal line ends (LF, CRLF or a lone CR), gzip
transparently; no file makes tagger grow without bound. Outputs are checked, before anything is
opened for writing, to be none of the inputs and none of each other (symlinks, ``./`` and hard
links included) and to lie inside no input directory, then opened without truncating, locked for
the whole run so that a second run writing the same file fails at once, and only then emptied.
A directory (a model's, an export's) is made whole beside its target and exchanged with the old
one in one step; an npz is checked for what it would unpack to before it is unpacked.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import gzip
import hashlib
import io
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from ..errors import STDIN_NAME, InputError, TaggerError
from .packaged import gc_paused, package_dir

STDIO = "-"  # a file name that means stdin (for an input) or stdout (for an output)
MAX_LINE_BYTES = 64 * 1024 * 1024  # the longest line read; real papers are a few KB
_CHUNK = 1 << 16
_GZIP_MAGIC = b"\x1f\x8b"
_LINE_END = re.compile(rb"\r\n|\r|\n")


def is_stdio(path: str | Path | None) -> bool:
    return path is not None and str(path) == STDIO


def reads_once(source: str | Path) -> bool:
    """Whether ``source`` can be read only once: stdin, a pipe (``/dev/fd/63`` of ``<(zcat
    ...)``), a FIFO, a device. Its format is told from the bytes its reader goes on from, and
    nothing reads it beforehand (a check, a count for a progress bar). A regular file, a
    directory or a path that does not exist is not."""
    if is_stdio(source):
        return True
    try:
        mode = os.stat(source).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


Parsed = TypeVar("Parsed")


class ByContent(Generic[Parsed]):
    """What ``parse`` makes of a file's bytes, kept by their sha256 rather than by the file's
    path: a file rewritten in place (a model refitted into the same directory in a notebook) is
    parsed again, and the same bytes at two paths are parsed once. The KEPT last parsed are
    kept. ``parse`` raises ValueError for bytes that hold no such thing; the TaggerError says
    which file (``what``: "the weigher")."""

    KEPT = 8

    def __init__(self, parse: Callable[[bytes], Parsed], what: str) -> None:
        self.parse = parse
        self.what = what
        self._kept: OrderedDict[str, Parsed] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, path: str | Path) -> Parsed:
        """The file at ``path``, parsed."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise TaggerError(f"cannot read {self.what} {path}: {exc.strerror or exc}") from None
        return self.of(data, hashlib.sha256(data).hexdigest(), path)

    def of(self, data: bytes, digest: str, where: str | Path) -> Parsed:
        """``data``, whose sha256 is ``digest``, read from the file ``where``, parsed."""
        with self._lock:
            if digest in self._kept:
                self._kept.move_to_end(digest)
                return self._kept[digest]
        try:
            with gc_paused():
                parsed = self.parse(data)
        except ValueError as exc:
            raise TaggerError(f"cannot read {self.what} {where}: {exc}") from None
        with self._lock:
            self._kept[digest] = parsed
            while len(self._kept) > self.KEPT:
                self._kept.popitem(last=False)
        return parsed


# An npz part of a model (a neighbour index, an area model) unpacks to a few times its size:
# numbers and fixed-width text compress 1.7 to 4.5 times in the packaged models' parts. A part
# that would unpack to far more is no part tagger wrote, and is refused before it is unpacked (0.5
# MB of zeros can unpack to 480 MB, and take twice that while it is read): more than NPZ_RATIO
# times its size, ten times the most a real part shows, and never less than NPZ_FLOOR, so that a
# small part of long, fixed-width titles is never refused.
NPZ_RATIO = 50
NPZ_FLOOR = 64 * 2**20


def read_npz(data: bytes) -> dict[str, Any]:
    """The arrays of an npz file's bytes, by name, none of them pickled objects. Its zip
    directory is checked before a byte is unpacked: ValueError if its members would unpack to
    more than max(NPZ_FLOOR, NPZ_RATIO x its size) in all, or one's array declares more bytes
    than the member holds, or it is no npz file."""
    import numpy as np

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
        total = sum(member.file_size for member in members)
        bound = max(NPZ_FLOOR, NPZ_RATIO * len(data))
        if total > bound:
            raise ValueError(
                f"it unpacks to {total / 2**20:,.0f} MB, {total / max(len(data), 1):,.0f} times "
                f"its size (a model's parts unpack to a few times theirs, at most "
                f"{bound / 2**20:,.0f} MB here): it is no part tagger wrote"
            )
        for member in members:
            with archive.open(member) as stream:
                declared = _npy_bytes(np, stream, member.filename)
            if declared > member.file_size:
                raise ValueError(
                    f"its {member.filename} declares {declared:,} bytes of data, and holds "
                    f"{member.file_size:,}: it is no part tagger wrote"
                )
        with np.load(io.BytesIO(data), allow_pickle=False) as found:
            return {name: found[name] for name in found.files}
    except (zipfile.BadZipFile, OSError, EOFError, KeyError) as exc:
        raise ValueError(f"it is not an npz file tagger wrote ({exc})") from None


def _npy_bytes(np: Any, stream: IO[bytes], name: str) -> int:
    """The bytes of data the .npy array in ``stream`` declares (its header read alone)."""
    version = np.lib.format.read_magic(stream)
    read = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
    }.get(version)
    if read is None:
        raise ValueError(
            f"its {name} is an .npy file of version {version}, which tagger never writes"
        )
    shape, _, dtype = read(stream)
    if dtype.hasobject:
        raise ValueError(f"its {name} holds pickled objects, which tagger never writes nor reads")
    return math.prod(shape) * dtype.itemsize


def write_directory(
    out: Path, fill: Callable[[Path], dict], *, record: str, replace: bool = False
) -> dict:
    """Make the directory ``out`` whole: ``fill`` writes its files into a temporary directory
    beside it and returns its record, written there as ``record`` (JSON); then the directory is
    made readable to all and renamed into place, so a reader never sees half of it. An existing
    ``out`` is replaced with ``replace``: exchanged with the new one in one step
    (:func:`exchange`), so that a process killed at any point leaves the old directory or the
    new one at ``out``, whole, then removed; otherwise, if another process made it first, that
    one is kept and its record returned.

    Where the system cannot exchange two directories, the old one is moved aside (to
    ``.NAME.old.PID``) and the new one renamed in: a process killed between the two leaves none
    at ``out``. So the temporaries of dead processes beside ``out`` are cleaned first, and an
    old directory left aside by one is put back (:func:`left_aside`), before anything else.
    A symlink at ``out`` is followed: the directory it names is written, the link kept. A
    directory that replaces another keeps its mode (a private model stays private)."""
    if out.is_symlink():  # the directory it names is written, and the link stays a link
        out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    _clean_temporaries(out)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.{os.getpid()}.", dir=out.parent))
    try:
        made = fill(work)
        (work / record).write_text(json.dumps(made, indent=2) + "\n", encoding="utf-8")
        readable(work, stat.S_IMODE(out.stat().st_mode) if replace and out.is_dir() else 0o755)
        if replace and out.exists():
            _replace(work, out)
            return made
        try:
            os.replace(work, out)
        except OSError:
            if not (out / record).is_file():
                raise
            shutil.rmtree(work, ignore_errors=True)  # another process made it first
            return json.loads((out / record).read_text(encoding="utf-8"))
        return made
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _replace(new: Path, out: Path) -> None:
    """Put the directory ``new`` at ``out`` in the place of the one there, and remove that."""
    try:
        exchange(new, out)
    except OSError as exc:
        if exc.errno not in _NO_EXCHANGE:
            raise
    else:
        shutil.rmtree(new, ignore_errors=True)  # the old one, now under the temporary name
        return
    old = out.with_name(f".{out.name}.old.{os.getpid()}")
    os.replace(out, old)
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)


# what renameat2 fails with where the system, or the file system, cannot exchange two paths
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> None:
    """Swap the paths ``a`` and ``b`` (both existing) in one step: Linux's renameat2 with
    RENAME_EXCHANGE, through libc. OSError (errno ENOSYS where there is no such call, EINVAL
    or ENOTSUP where the file system has no such step) otherwise."""
    renameat2 = _renameat2()
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "this system cannot exchange two paths in one step")
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a), None, str(b))


@functools.cache
def _renameat2() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2  # glibc 2.28, musl 1.1.24
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


def _temporaries(out: Path) -> Iterator[tuple[Path, int, bool]]:
    """The temporaries write_directory leaves beside ``out`` if killed (directories named
    ``.NAME.PID.XXXXXXXX``, the new one being made, and ``.NAME.old.PID``, the old one moved
    aside): each path, the id of the process that made it, and whether it is an old one."""
    pattern = re.compile(rf"\.{re.escape(out.name)}\.(?:(old)\.(\d+)|(\d+)\.[^.]+)")
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return
    for path in entries:
        found = pattern.fullmatch(path.name)
        if found and path.is_dir() and not path.is_symlink():
            yield path, int(found[2] or found[3]), bool(found[1])


def _gone(pid: int) -> bool:
    """Whether no process ``pid`` runs (on this machine)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's: it runs
        return False
    return False


def left_aside(out: Path) -> Path | None:
    """The old directory a process killed while replacing ``out`` left aside (where the system
    could not exchange them in one step), if ``out`` is missing and a dead process's
    ``.NAME.old.PID`` is beside it."""
    if out.exists():
        return None
    for path, pid, old in _temporaries(out):
        if old and _gone(pid):
            return path
    return None


def _clean_temporaries(out: Path) -> None:
    """Put back an old directory left aside by a killed process (:func:`left_aside`), and
    remove what else dead processes left beside ``out``: the new directories they were
    making, and old ones they had already replaced."""
    aside = left_aside(out)
    if aside is not None:
        with contextlib.suppress(OSError):
            os.rename(aside, out)  # fails if another process made out meanwhile: it is kept
    for path, pid, _ in _temporaries(out):
        if _gone(pid):
            shutil.rmtree(path, ignore_errors=True)


def read_regular(path: str | Path, limit: int) -> bytes | None:
    """The bytes of the file at ``path`` if it is a regular file of at most ``limit`` bytes;
    None if it is something else (a FIFO, a device, a directory: never read, a FIFO would hang
    the reader) or larger. OSError if it cannot be opened (missing included)."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode) or status.st_size > limit:
            return None
        with os.fdopen(handle, "rb", closefd=False) as file:
            # its size and a byte more, then the rest only if it grew meanwhile: read(limit + 1)
            # would allocate limit + 1 bytes first (1 GiB for a cache entry of a few KB)
            data = file.read(status.st_size + 1)
            if len(data) > status.st_size:
                data += file.read(limit + 1 - len(data))
        return data if len(data) <= limit else None
    finally:
        os.close(handle)


def regular_sha256(path: str | Path) -> str | None:
    """The sha256 of the file at ``path``, read in blocks, if it is a regular file; None if it
    is something else (never read: see :func:`read_regular`). OSError if it cannot be opened."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        digest = hashlib.sha256()
        with os.fdopen(handle, "rb", closefd=False) as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    finally:
        os.close(handle)


def readable(directory: Path, mode: int = 0o755) -> None:
    """Give a directory made by mkdtemp (mode 700) ``mode``, and its files the same without
    execution: by default every user reads them, as a model directory others share (a cache, a
    package's data) must be; a directory that replaces a private one stays as private."""
    directory.chmod(mode)
    for path in directory.iterdir():
        path.chmod(mode if path.is_dir() else mode & 0o666)


# --- inputs ------------------------------------------------------------------------------------


def open_input(source: str | Path) -> tuple[IO[bytes], str]:
    """A binary stream of ``source`` (a path, or "-" for stdin), decompressed if it is gzip, and
    the name to use in messages. Raises InputError when it cannot be read."""
    if is_stdio(source):
        return _gunzipped(sys.stdin.buffer), STDIN_NAME
    path, name = Path(source), str(source)
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise InputError("is a directory, not a file of papers", source=name)
        handle = path.open("rb")
    except (FileNotFoundError, NotADirectoryError):
        raise InputError("no such file", source=name) from None
    except PermissionError:
        raise InputError("permission denied: the file is not readable", source=name) from None
    except OSError as exc:
        raise InputError(f"cannot read it: {exc.strerror or exc}", source=name) from None
    return _gunzipped(handle), name


def _gunzipped(stream: IO[bytes]) -> IO[bytes]:
    head = stream.peek(2)[:2] if hasattr(stream, "peek") else b""
    return gzip.GzipFile(fileobj=stream, mode="rb") if head == _GZIP_MAGIC else stream


def lines_of(stream: IO[bytes] | Iterable[bytes], source: str) -> Iterator[bytes]:
    """The lines of a binary stream, each ending in ``\\n`` (but perhaps the last): LF, CRLF and
    a lone CR all end a line. A line longer than MAX_LINE_BYTES is an InputError, so that
    ``/dev/zero`` or a file with no line ends cannot fill the memory. An iterable of byte
    strings is read as it comes, its pieces split at their line ends."""
    chunks = chunks_of(stream, source)
    parts: list[bytes] = []  # of the line being read
    size = number = 0
    after_cr = False  # the last chunk ended in '\r': a '\n' first in this one belongs to it
    for chunk in chunks:
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        after_cr = chunk.endswith(b"\r")
        start = 0
        for end in _LINE_END.finditer(chunk):
            parts.append(chunk[start : end.start()])
            yield b"".join(parts) + b"\n"
            parts, size, number, start = [], 0, number + 1, end.end()
        if start < len(chunk):
            parts.append(chunk[start:])
            size += len(chunk) - start
            if size > MAX_LINE_BYTES:
                raise InputError(
                    f"line {number + 1} is longer than {MAX_LINE_BYTES // 2**20} MB: this is not "
                    "a file of papers (or its lines have no ends)",
                    source=source,
                )
    if parts:
        yield b"".join(parts)


def chunks_of(stream: IO[bytes] | Iterable[bytes], source: str) -> Iterable[bytes]:
    """The bytes of a binary stream as they come, in chunks (an iterable of byte strings as it
    is): what :func:`lines_of` splits, and a library's reader (io.libraries) reads whole."""
    if hasattr(stream, "read"):
        return iter(lambda: _read_chunk(stream, source), b"")
    return stream


def _read_chunk(stream: Any, source: str) -> bytes:
    """Up to _CHUNK bytes, those at hand (``read1``): a stream that fails part way, such as a
    truncated gzip file, gives what came before the fault first, and its lines are read."""
    try:
        return (stream.read1 if hasattr(stream, "read1") else stream.read)(_CHUNK)
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read it: {reason}", source=source) from None


def read_lines(source: str | Path) -> Iterator[bytes]:
    """The lines of a file (or "-"), as :func:`lines_of` gives them; the file is opened now, so
    a missing one is an InputError at once."""
    stream, name = open_input(source)
    return _closing_lines(stream, name)


def _closing_lines(stream: IO[bytes], name: str) -> Iterator[bytes]:
    try:
        yield from lines_of(stream, name)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


# --- outputs -----------------------------------------------------------------------------------


def check_outputs(
    outputs: dict[str, str | Path | None],
    inputs: Iterable[str | Path],
    *,
    inside: Callable[[str], None] | None = None,
) -> None:
    """Refuse, before anything is opened for writing, an output that is an input or another
    output (the same path, or the same file through a symlink, ``./`` or a hard link), or that
    lies inside an input directory (a part directory of `tagger tag --cluster`: a new file there
    changes what is read). Standard output is checked too, when it is a file (``tagger tag
    p.jsonl >> p.jsonl``).

    ``outputs`` maps each output's option name (for the message) to its path, or None (unused)
    or "-" (stdout). No output may lie inside tagger's installed package (its packaged model,
    its data). Given ``inside``, an output inside an input directory is passed to it, in
    words, instead of refused: `tagger tag` reads a directory without tagger's own output
    (io.inputs.paper_inputs), so its output there is not read back, but other tools would.
    """
    seen: dict[Any, str] = {}
    directories: dict[Any, str] = {}  # the inputs that are directories
    for source in inputs:
        if not is_stdio(source):
            key = _identity(Path(source))
            seen.setdefault(key, f"the input {source}")
            if Path(source).is_dir():
                directories.setdefault(key, str(source))
    for option, path in outputs.items():
        if path is None:
            continue
        if is_stdio(path):
            key = _stdout_identity()
            if key is None:
                continue
            what, where = "standard output", _stdout_path()
        else:
            key, what, where = _identity(Path(path)), f"{option} {path}", Path(path)
        if key in seen:
            raise TaggerError(
                f"{what} is {seen[key]}: writing it would destroy what is read or written "
                "there; choose another file"
            )
        if where is not None and _in_package(where):
            raise TaggerError(
                f"{what} lies inside tagger's installed package ({package_dir()}), whose files "
                "tagger reads to tag: choose a file of your own"
            )
        directory = _directory_holding(where, directories) if where is not None else None
        if directory is not None and inside is not None:
            inside(
                f"{what} lies inside the input directory {directory}: `tagger tag {directory}` "
                "leaves tagger's own output out, but other tools read it all; write outputs "
                "outside the directories of papers"
            )
        elif directory is not None:
            raise TaggerError(
                f"{what} lies inside the input directory {directory}: writing there would "
                "change what is read; choose a file outside it"
            )
        seen[key] = what


def _in_package(path: Path) -> bool:
    """Whether ``path`` (symlinks resolved) lies inside tagger's installed package."""
    package = package_dir()
    found = path.resolve()
    return found == package or package in found.parents


def _identity(path: Path) -> Any:
    """What makes two paths one file: its device and inode when it exists, else the absolute
    path with symlinks resolved."""
    try:
        info = path.stat()
    except OSError:
        return ("path", str(path.resolve()))
    return ("file", info.st_dev, info.st_ino)


def _directory_holding(path: Path, directories: dict[Any, str]) -> str | None:
    """The one of ``directories`` (by identity) that ``path`` lies inside, at any depth, through
    symlinks or not; None if none."""
    if not directories:
        return None
    for ancestor in path.resolve().parents:
        found = directories.get(_identity(ancestor))
        if found is not None:
            return found
    return None


def _stdout_path() -> Path | None:
    """Where standard output goes, when the system says (Linux: /proc/self/fd/1)."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}"))
    except (OSError, ValueError, AttributeError):
        return None


def _stdout_identity() -> Any:
    try:
        info = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    return ("file", info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def open_output(path: str | Path, *, append: bool = False) -> IO[bytes]:
    """Open ``path`` for writing, unbuffered (each line reaches the file in one write), and take
    an exclusive lock on it for as long as it is open; then empty it, unless ``append``.
    Raises TaggerError if it cannot be opened or another run holds it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0), 0o644)
    except OSError as exc:
        raise TaggerError(f"cannot write {path}: {exc.strerror or exc}") from None
    handle = os.fdopen(fd, "ab" if append else "wb", buffering=0)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise TaggerError(
            f"{path} is being written by another tagger run (it holds a lock on it); wait for "
            "that run to end, or write to another file"
        ) from None
    except OSError:
        pass  # a file system without locks (some network mounts): go on unlocked
    if not append:
        with contextlib.suppress(OSError):  # a character device such as /dev/full
            os.ftruncate(fd, 0)
    return handle


def write_atomic(
    path: str | Path, data: bytes, *, temporary: str | Path | None = None
) -> os.stat_result:
    """Replace the file at ``path`` with ``data`` whole, or leave it as it was: written to a
    temporary file beside it, flushed to the disk, then renamed over it (and the rename flushed),
    so that a crash, a kill or a full disk at any moment leaves the old file or the new one,
    never a mix. The new file keeps the old one's mode (a private file stays private); a new
    one gets the mode a plain open gives (the umask's). Returns the written file's status, as it
    was renamed into place. Raises OSError (the temporary file removed) if it cannot be written.

    ``temporary`` names the temporary file, for a writer that holds the file's lock
    (:func:`lock_beside`): one name, so that one a kill left is overwritten by the next write,
    or removed by the next writer (:func:`temporary_beside`). Without it the name is the
    process's and thread's own.

    A symlink is written through: its target is replaced and the link kept. What is no regular
    file (a device such as ``/dev/stdout`` or ``/dev/null``, a FIFO) is written into as it
    is, not replaced: there is no file to swap, and a rename would put a file where the
    device was."""
    path = Path(path)
    try:
        found = os.stat(path)  # through a symlink
    except OSError:
        found = None
    if found is not None and not stat.S_ISREG(found.st_mode):
        return _write_through(path, data)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if temporary is None:
        temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(temporary, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
        with os.fdopen(handle, "wb") as stream:
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(handle, stat.S_IMODE(os.stat(path).st_mode))
            stream.write(data)
            stream.flush()
            os.fsync(handle)
            status = os.fstat(handle)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # the rename itself reaches the disk
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    return status


def _write_through(path: Path, data: bytes) -> os.stat_result:
    """Write ``data`` into what ``path`` opens (a device, a FIFO), as a plain open does."""
    with open(path, "wb") as stream:
        stream.write(data)
        stream.flush()
        with contextlib.suppress(OSError):  # a device or a pipe may not sync
            os.fsync(stream.fileno())
        return os.fstat(stream.fileno())


def temporary_beside(path: str | Path) -> Path:
    """The one temporary file of the writer that holds ``path``'s lock (:func:`lock_beside`):
    ``.NAME.tmp`` beside it, for :func:`write_atomic`."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp")


def kind_of(mode: int) -> str:
    """What a file whose ``st_mode`` is ``mode`` is, in words: "a regular file", "a FIFO" ..."""
    kinds = [
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((said for test, said in kinds if test(mode)), "not a file")


def lock_beside(path: str | Path, *, held_by: str) -> IO[bytes]:
    """Take the lock of a file that is replaced whole (:func:`write_atomic`), which a lock on the
    file itself cannot guard (each rename makes a new file): an exclusive lock on an empty
    ``.NAME.lock`` beside it, held until the returned handle is closed (or the process ends, a
    kill included). The lock file stays: removing it could let two writers lock two files.
    Raises TaggerError if another process holds it (``held_by`` names what it is)."""
    path = Path(path)
    lock = path.with_name(f".{path.name}.lock")
    try:
        handle = open(lock, "ab", buffering=0)  # noqa: SIM115 - held open: the lock lives with it
    except OSError as exc:
        raise TaggerError(f"cannot write beside {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise TaggerError(
            f"{path} is being written by {held_by} (it holds {lock.name}): stop that one "
            "first, or choose another file"
        ) from None
    except OSError:
        pass  # a file system without locks (some network mounts): go on unlocked
    return handle
