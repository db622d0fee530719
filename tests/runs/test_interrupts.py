"""A run stopped from outside (Ctrl-C, SIGTERM, SIGKILL), here or on a cluster: its worker
processes end with it, it exits with one message (130 for Ctrl-C, 143 for SIGTERM) and no
traceback, and Ctrl-C pressed again while it stops changes nothing."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from ..conftest import ABSTRACTS, EXAMPLES, MINI, ROOT, alive, papers
from .conftest import finish, start_tagger


def _children(pid):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _cmdline(pid):
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.models
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_workers_end_when_the_parent_is_killed(tmp_path, how):
    # 479 papers, one a batch: still running when the signal comes, however fast the machine
    # (two example files were once done by then, and a SIGTERM after the end killed nothing)
    inputs = [str(ROOT / "data" / "iclr2026-dev.jsonl")]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tagger",
            "tag",
            *inputs,
            "-o",
            str(tmp_path / "out.jsonl"),
            "--workers",
            "2",
            "--batch-size",
            "1",
            *MINI,
        ],
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    workers = []
    while time.monotonic() < deadline and len(workers) < 2:
        workers = [c for c in _children(proc.pid) if "spawn_main" in _cmdline(c)]
        time.sleep(0.2)
    assert len(workers) == 2, "the workers did not start"
    out = tmp_path / "out.jsonl"
    while time.monotonic() < deadline and not (out.exists() and out.read_bytes().count(b"\n")):
        time.sleep(0.2)  # the workers have loaded their models and tag
    os.kill(proc.pid, how)
    proc.wait(timeout=60)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(alive(w) for w in workers):
        time.sleep(0.2)
    assert not any(alive(w) for w in workers)
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) < 479  # stopped mid-run
    if how == signal.SIGTERM:
        assert proc.returncode == 143
        assert proc.stderr.read().decode().splitlines()[-1].startswith("Terminated.")


# Every Python process started with this directory first on PYTHONPATH (the run and its spawned
# workers alike) embeds with the tests' HashEmbedder, each call announced by a file in $STARTED
# and then held for $HOLD seconds: workers busy for as long as a test needs.
_SLOW_EMBEDDER = f"""
import os, sys, time
sys.path.insert(0, {str(ROOT)!r})
from tests.conftest import HashEmbedder
import tagger.language.embedders as embedders


class Held(HashEmbedder):
    def embed(self, texts):
        open(os.path.join(os.environ["STARTED"], str(os.getpid())), "w").close()
        time.sleep(float(os.environ["HOLD"]))
        return super().embed(texts)


embedders.make_embedder = lambda *args, **kwargs: Held()
"""


def test_ctrl_c_stops_a_run_of_two_workers_once(tmp_path):
    """Ctrl-C during a two-worker directory run stops the workers at once (terminated after a
    short grace), without waiting for the batches they hold; the run exits 130 with one message
    and no multiprocessing traceback, and more Ctrl-C, pressed while it stops, change nothing."""
    hook, started, folder = tmp_path / "hook", tmp_path / "started", tmp_path / "papers"
    for directory in (hook, started, folder):
        directory.mkdir()
    (hook / "sitecustomize.py").write_text(_SLOW_EMBEDDER)
    for name in ("a", "b"):
        papers(folder / f"{name}.jsonl", [f"{ABSTRACTS[i % 3]} {name} {i}" for i in range(24)])
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "STARTED": str(started),
        "HOLD": "3600",  # a batch takes an hour: a run that waits for them never ends
    }
    command = [sys.executable, "-m", "tagger", "tag", str(folder), "-o", str(tmp_path / "o")]
    proc = subprocess.Popen(
        [*command, "--workers", "2", "--batch-size", "4", *MINI],
        stderr=subprocess.PIPE,
        env=environment,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(started.iterdir())) < 2:
            time.sleep(0.1)
        busy = [int(path.name) for path in started.iterdir()]
        assert len(busy) == 2, "the two workers did not start tagging"
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: to every process of the job
        for pause in (0.3, 0.5):  # and again, while it stops
            time.sleep(pause)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)  # it does not wait for the batches: they would take an hour
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stderr = proc.stderr.read().decode()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.count("Interrupted.") == 1, stderr
    assert stderr.splitlines()[-1] == (
        "Interrupted. JSON Lines already written are complete, and `tagger tag ... -o FILE "
        "--resume` continues the run; a Parquet file or a library is written whole at the end, "
        "so none was."
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(alive(w) for w in busy):
        time.sleep(0.1)
    assert not any(alive(w) for w in busy)


# --- on a cluster --------------------------------------------------------------------------------


def _group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.models
@pytest.mark.parametrize("presses", [1, 4], ids=["once", "four times"])
def test_ctrl_c_on_a_cluster_run_is_one_message_and_exit_130(tmp_path, presses):
    """Ctrl-C at a terminal signals the whole foreground process group: the client and its
    LocalCluster's worker processes. Only the client may answer; it stops the workers. Pressed
    again while the run winds down (an impatient user), it changes nothing: still one message,
    exit 130, no worker left, and nothing from Dask's logs."""
    out = tmp_path / "out"
    process = start_tagger(
        "tag", str(EXAMPLES / "icml2025-abstracts.txt"), "-o", str(out), "--cluster", "local:2",
        "--partition-size", "1",
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not list(out.glob("part-*.done.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(out.glob("part-*.done.json")), "no part was written"
        for press in range(presses):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
                time.sleep(0.15 * (press < presses - 1))
        code, stderr = finish(process, timeout=120)
        deadline = time.monotonic() + 60
        while _group_alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _group_alive(process.pid), "a worker outlived the run"
    finally:
        if process.poll() is None or _group_alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    assert code == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("Note: Dask dashboard: ")]
    assert lines == [
        "Note: tagging with the packaged taxonomy "
        + yaml.safe_load((ROOT / "taxonomy.yaml").read_text())["version"],
        "Interrupted. JSON Lines already written are complete, and `tagger tag ... -o FILE "
        "--resume` continues the run; a Parquet file or a library is written whole at the end, "
        "so none was.",
    ], stderr


@pytest.mark.parametrize(("name", "resumable"), [("tag", True), ("retag", False), ("fit", False)])
def test_only_a_command_that_can_resume_says_how(name, resumable):
    """`tagger fit` stopped leaves no half model to continue, `retag` has no --resume: they say
    they stopped, no more."""
    from click.testing import CliRunner

    from tagger.cli import _Commands

    group = _Commands()

    @group.command(name)
    def stopped():
        raise KeyboardInterrupt

    result = CliRunner().invoke(group, [name])
    assert result.exit_code == 130
    assert ("--resume" in result.stderr) == resumable and result.stderr.startswith("Interrupted.")
