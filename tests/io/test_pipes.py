"""Inputs that can be read only once: a pipe by its /dev/fd path (`tagger tag <(zcat
papers.jsonl.gz)`), a FIFO made with mkfifo, stdin. Each is read to its end exactly once: its
format is told from the bytes the reader then goes on from, and a progress bar does not count it
beforehand (a second reading would find the pipe empty: of 60 papers, 1 would be tagged and the
rest lost without a word)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path

import pytest

from ..conftest import ABSTRACTS, MINI, run

PAPERS = "".join(
    json.dumps({"id": f"p{i}", "abstract": f"{ABSTRACTS[i % 3]} Case {i}."}) + "\n"
    for i in range(60)
).encode()


def _feed(target, data):
    """Write ``data`` in a thread into ``target`` (a FIFO's path, or a pipe's write end), then
    close it. A second reader of a FIFO (the fault) would wait for a writer for ever: a few
    seconds after the data is written, a writer comes and goes now and then, so that it reads the
    end instead."""

    def write():
        with open(target, "wb") as end:
            end.write(data)
        while isinstance(target, Path) and target.exists():
            time.sleep(3)
            with contextlib.suppress(OSError):  # ENXIO: nobody is reading it
                os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


@pytest.fixture(params=["dev-fd", "fifo"])
def pipe(request, tmp_path):
    """The path of a pipe that 60 papers of JSON Lines come through."""
    if request.param == "fifo":
        path = tmp_path / "papers"
        os.mkfifo(path)
        thread = _feed(path, PAPERS)
        yield path
        path.unlink()
    else:
        read, write = os.pipe()
        thread = _feed(write, PAPERS)
        yield f"/dev/fd/{read}"
        os.close(read)
    thread.join(timeout=1)


@pytest.mark.parametrize("progress", ["--no-progress", "--progress"])
def test_a_pipe_is_read_to_its_end_once(pipe, progress):
    result = run("tag", pipe, progress, *MINI)
    assert result.exit_code == 0, result.stderr
    ids = [json.loads(line)["paper"]["id"] for line in result.stdout.splitlines()]
    assert ids == [f"p{i}" for i in range(60)]
    assert result.stderr.splitlines()[-1] == "tagged 60 papers"


def test_a_fifo_of_tagged_output_is_read_once_by_its_readers(tmp_path):
    """The readers of tagged output tell Parquet from JSON Lines without reading a pipe twice."""
    from tagger.io.tagged import count_lines, read_tagged

    from ..conftest import tagged_record, write_tagged

    lines = write_tagged(tmp_path / "t.jsonl", [tagged_record(f"p{i}") for i in range(50)])
    path = tmp_path / "tagged"
    os.mkfifo(path)
    _feed(path, lines.read_bytes())
    assert count_lines(path) is None  # not counted: that would be a second reading
    assert [record.paper.id for record in read_tagged(path)] == [f"p{i}" for i in range(50)]
    path.unlink()


def test_eval_reads_a_pipe_of_papers_once(tmp_path):
    """`tagger eval` tells tagged output from papers by the first line, then reads on from it."""
    from tagger.corpus.evaluate import papers_of

    path = tmp_path / "papers"
    os.mkfifo(path)
    _feed(path, PAPERS)
    assert [paper.id for paper in papers_of(path)] == [f"p{i}" for i in range(60)]
    path.unlink()
