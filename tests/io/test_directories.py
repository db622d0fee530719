"""A directory made whole (io.files.write_directory), under hostile use: a process killed while
it replaces one (SIGKILL, right after its first rename) leaves the old directory or the new one
at the target, whole, never none; where the system cannot exchange two directories in one step
and the old one was left aside, the next write puts it back first; and the temporaries of dead
processes beside the target are cleaned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tagger.io import files

from ..conftest import ROOT

RECORD = "record.json"

# A process that writes DIR anew and kills itself (SIGKILL: no cleanup runs) right after the
# first step that renames a directory: os.replace, or the exchange of two directories. With
# "--no-exchange", the system is taken to have no such exchange.
DYING = """\
import errno, json, os, signal, sys
from pathlib import Path
from tagger.io import files

def dying(step):
    def call(*args, **kwargs):
        result = step(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return result
    return call

def unavailable(*args, **kwargs):
    raise OSError(errno.EINVAL, "no exchange here")

exchange = getattr(files, "exchange", None)
if exchange is not None:
    files.exchange = unavailable if "--no-exchange" in sys.argv else dying(exchange)
os.replace = dying(os.replace)

def fill(work):
    (work / "a.txt").write_text("new")
    return {"version": "new"}

files.write_directory(Path(sys.argv[1]), fill, record="record.json", replace=True)
"""


def _write(out: Path, version: str) -> dict:
    def fill(work: Path) -> dict:
        (work / "a.txt").write_text(version)
        return {"version": version}

    return files.write_directory(out, fill, record=RECORD, replace=True)


def _whole(out: Path) -> str:
    """The version of the directory at ``out``, checked whole (its record and its file agree)."""
    version = json.loads((out / RECORD).read_text())["version"]
    assert (out / "a.txt").read_text() == version
    return version


def _killed(out: Path, *args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", DYING, str(out), *args], env=env, capture_output=True, text=True
    )
    assert done.returncode == -9, done.stderr  # killed where it was meant to be


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_a_replacement_killed_after_its_first_rename_leaves_a_whole_directory(tmp_path):
    out = tmp_path / "model"
    _write(out, "old")
    _killed(out)
    assert _whole(out) in ("old", "new")


def test_a_directory_left_aside_by_a_killed_replacement_is_put_back_first(tmp_path):
    """Without the exchange (another system), the old directory is moved aside and the new
    one renamed in: killed between the two, the target is missing and the old one aside,
    named with the dead process's id. The next write puts it back before it starts, and
    leaves nothing of the dead process beside the target."""
    out = tmp_path / "model"
    _write(out, "old")
    _killed(out, "--no-exchange")
    assert not out.exists()
    aside = [path.name for path in tmp_path.iterdir()]
    assert any(name.startswith(".model.old.") for name in aside), aside
    assert files.left_aside(out) == tmp_path / next(n for n in aside if ".old." in n)
    seen = []

    def fill(work: Path) -> dict:
        seen.append(_whole(out))  # the old one is back while the new one is made
        (work / "a.txt").write_text("newer")
        return {"version": "newer"}

    files.write_directory(out, fill, record=RECORD, replace=True)
    assert seen == ["old"] and _whole(out) == "newer"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model"]


def test_the_temporaries_of_dead_processes_are_cleaned_and_live_ones_kept(tmp_path):
    out = tmp_path / "model"
    _write(out, "old")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    for name in (f".model.{dead}.abc123", f".model.old.{dead}", f".model.{os.getpid()}.live"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.txt").write_text("x")
    (tmp_path / ".model.notes").mkdir()  # not a temporary of tagger's: never touched
    _write(out, "new")
    assert _whole(out) == "new"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        [".model.notes", f".model.{os.getpid()}.live", "model"]
    )


def test_a_replacement_leaves_nothing_beside_the_directory(tmp_path):
    out = tmp_path / "model"
    for version in ("one", "two", "three"):
        _write(out, version)
        assert _whole(out) == version
    assert [path.name for path in tmp_path.iterdir()] == ["model"]


def test_a_replacement_keeps_the_mode_of_the_directory_it_replaces(tmp_path):
    """A private model (700) stays private when it is fitted again; a new one is readable by
    all (755, its files 644)."""
    out = tmp_path / "model"
    _write(out, "one")
    assert (out.stat().st_mode & 0o777, (out / RECORD).stat().st_mode & 0o777) == (0o755, 0o644)
    out.chmod(0o700)
    _write(out, "two")
    assert _whole(out) == "two"
    assert (out.stat().st_mode & 0o777, (out / RECORD).stat().st_mode & 0o777) == (0o700, 0o600)
