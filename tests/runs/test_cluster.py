"""`tagger tag --cluster`: partitions on a real Dask LocalCluster (two worker processes, one
thread each), parts that concatenate to the local output, a worker or the client killed mid-run,
and --resume. The planning and Parquet tests need no model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger import Tagger, tag_files
from tagger.io.readers import iter_records, read_line_range
from tagger.io.tagged import part_files, read_tagged
from tagger.runs.cluster import plan, tag_on_cluster

from ..conftest import EXAMPLES, MINI_TAXONOMY

pytestmark = pytest.mark.cluster  # Dask clusters of processes, most tests here

ABSTRACTS = [p.abstract for p in iter_records(EXAMPLES / "icml2025-abstracts.txt")]


def _inputs(directory: Path) -> list[str]:
    """A paper list, a JSONL file with CRLF line ends, a bad record and a blank line, and a
    JSONL file of 30 papers: partitions of 4 cut them in many places."""
    crlf = directory / "crlf.jsonl"
    lines = [json.dumps({"id": f"c{i}", "abstract": a}) for i, a in enumerate(ABSTRACTS[:7])]
    lines.insert(3, '{"id": "broken", "abstract": ')
    lines.insert(5, "")
    crlf.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    many = directory / "many.jsonl"
    many.write_text(
        "".join(
            json.dumps({"id": f"m{i}", "title": f"Paper {i}", "abstract": ABSTRACTS[i % 19]}) + "\n"
            for i in range(30)
        )
    )
    return [str(EXAMPLES / "icml2025-abstracts.txt"), str(crlf), str(many)]


# --- planning and Parquet (no model) -----------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["{}", '{"abstract": "x"}', "", "not json"]), max_size=30),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.booleans(),
    st.integers(min_value=1, max_value=7),
)
def test_line_ranges_read_each_record_once_with_its_line(lines, end, last_end, size):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.jsonl"
        data = end.join(line.encode() for line in lines)
        path.write_bytes(data + (end if last_end and lines else b""))
        whole = [(str(r), getattr(r, "line", None)) for r in iter_records(path, format="jsonl")]
        parts = plan([str(path)], size=size, format="jsonl")
        pieces = [
            (str(r), getattr(r, "line", None))
            for p in parts
            for r in read_line_range(p.source, p.start, p.end, p.first_line)
        ]
        assert pieces == whole
        assert all(p.stop - p.first <= size for p in parts)


def test_a_paper_list_is_split_by_records_and_keeps_its_header(tmp_path):
    """By record index; the very first partition is a quarter of the others, so that the first
    part comes soon; a second file starts at full size."""
    icml = str(EXAMPLES / "icml2025-abstracts.txt")
    parts = plan([icml], size=8)
    assert [(p.first, p.stop) for p in parts] == [(0, 2), (2, 10), (10, 18), (18, 19)]
    parts = plan([icml, icml], size=8)
    assert [(p.first, p.stop) for p in parts[4:]] == [(0, 8), (8, 16), (16, 19)]


def test_parquet_output_reads_back_as_the_jsonl_records(tmp_path):
    papers = tmp_path / "p.jsonl"
    papers.write_text(
        "".join(json.dumps({"id": f"p{i}", "abstract": a}) + "\n" for i, a in enumerate(ABSTRACTS))
    )
    with Tagger.from_taxonomy(MINI_TAXONOMY) as tagger:
        tag_files(tagger, [papers], tmp_path / "t.jsonl")
        tag_files(tagger, [papers], tmp_path / "t.parquet")
    assert list(read_tagged(tmp_path / "t.parquet")) == list(read_tagged(tmp_path / "t.jsonl"))
    assert not list(tmp_path.glob(".*.tmp"))
    import duckdb

    query = f"select count(*) from '{tmp_path / 't.parquet'}' where list_contains(areas, 'rl')"
    [(rl,)] = duckdb.sql(query).fetchall()
    expected = sum(any("rl" in t.path for t in r.tags) for r in read_tagged(tmp_path / "t.jsonl"))
    assert rl == expected


def test_parquet_papers_are_read_as_input(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": ["a", "b"], "abstract": [ABSTRACTS[0], ""], "year": [2025, 2024]})
    pq.write_table(table, tmp_path / "papers.parquet")
    records = list(iter_records(tmp_path / "papers.parquet"))
    assert records[0].id == "a" and records[0].year == 2025
    assert "record 2" in str(records[1])  # an empty abstract, named by its row


# --- on a LocalCluster (real models) -----------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def local_run(tmp_path_factory, tagger):
    directory = tmp_path_factory.mktemp("local")
    inputs = _inputs(directory)
    out = directory / "local.jsonl"
    summary = tag_files(tagger, inputs, out, warn=lambda message: None)
    return inputs, out.read_bytes(), summary


def _concatenated(directory: Path) -> bytes:
    return b"".join(part.read_bytes() for part in part_files(directory))


@pytest.mark.slow
def test_the_parts_concatenated_are_the_local_output(client, local_run, tagger, tmp_path):
    inputs, local, local_summary = local_run
    summary = tag_on_cluster(
        tagger, inputs, tmp_path / "out", size=4, client=client, warn=lambda m: None
    )
    assert _concatenated(tmp_path / "out") == local
    assert (summary.tagged, summary.rejected) == (local_summary.tagged, local_summary.rejected)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["complete"] and len(manifest["parts"]) == summary.partitions > 10
    errors = b"".join(p.read_bytes() for p in sorted((tmp_path / "out").glob("*.errors.jsonl")))
    assert [json.loads(line)["line"] for line in errors.splitlines()] == [4]
    assert not list((tmp_path / "out").glob(".*"))  # no temporary file left
    # filter reads the part directory as it reads a file
    from click.testing import CliRunner

    from tagger.cli import main

    result = CliRunner().invoke(main, ["filter", str(tmp_path / "out"), "--output-format", "ids"])
    assert result.exit_code == 0 and len(result.output.split()) == summary.tagged


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(client, local_run, tagger, tmp_path):
    inputs, local, _ = local_run
    out = tmp_path / "out"
    done: dict = {}

    def run() -> None:
        done["summary"] = tag_on_cluster(
            tagger, inputs, out, size=2, client=client, warn=lambda m: None
        )

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 300
    while not list(out.glob("part-*.done.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = client.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)  # one worker process, mid-run
    thread.join(timeout=600)
    assert "summary" in done, "the run did not complete"
    assert _concatenated(out) == local
    assert len(part_files(out)) == done["summary"].partitions


def _cli(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tagger", "tag", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its LocalCluster's workers die with it
        **kwargs,
    )


@pytest.mark.slow
@pytest.mark.models
def test_the_client_killed_then_resume_runs_only_the_missing_parts(local_run, tmp_path):
    inputs, local, _ = local_run
    out = tmp_path / "out"
    command = [*inputs, "-o", str(out), "--cluster", "local:2", "--partition-size", "2"]
    first = _cli(*command)
    deadline = time.monotonic() + 300
    while len(list(out.glob("part-*.done.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    kept = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in part_files(out)}
    assert (
        3
        <= len(kept)
        < len(json.loads((out / "manifest.json").read_text())["fingerprint"]["partitions"])
    )
    again = _cli(*command, "--resume")
    _, stderr = again.communicate(timeout=600)
    assert again.returncode == 1, stderr.decode()  # 1: a record was rejected, as locally
    assert _concatenated(out) == local
    for name, stamp in kept.items():  # a complete part was not written again
        if (out / name.replace(".jsonl", ".done.json")).exists():
            path = out / name
            assert (path.stat().st_ino, path.stat().st_mtime_ns) == stamp, name
    refused = _cli(*command, "--resume", "--max-tags", "3")
    _, stderr = refused.communicate(timeout=300)
    assert refused.returncode == 1
    assert b"cannot resume" in stderr and b"settings" in stderr, stderr.decode()
