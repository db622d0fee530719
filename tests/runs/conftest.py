"""What the tests of whole runs share: the papers of a cluster run, the command line started
as a process of its own and waited for, and the processes' state."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# the three abstracts of tests/conftest.py, and one the mini taxonomy has no area for
FOUR_ABSTRACTS = [
    "Multi-agent reinforcement learning (MARL) with graph neural networks.",
    "Graph neural networks (GNNs) with message passing for molecules.",
    "Policy gradient methods for reinforcement learning in robotics.",
    "Diffusion models for protein structure generation and design.",
]


def start_tagger(*args, cwd=None, env=None) -> subprocess.Popen:
    """`tagger ...` in a process group of its own (its LocalCluster's workers die with it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tagger", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )


def finish(process: subprocess.Popen, timeout: float) -> tuple[int, str]:
    """The exit code and stderr of ``process``; killed (and the test failed) if it hangs."""
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"still running after {timeout} s: {process.args}")
    return process.returncode, stderr.decode()


def same_length_edit(path: Path, old: str, new: str) -> None:
    """Replace the one ``old`` in ``path`` with ``new``, of the same length: an edit in place
    that keeps every offset."""
    assert len(old) == len(new)
    data = path.read_bytes()
    assert data.count(old.encode()) == 1
    path.write_bytes(data.replace(old.encode(), new.encode()))
