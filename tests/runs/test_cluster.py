"""`tagger tag --cluster`: partitions planned record by record, each named by its content (an
edit in place changes the hash of its own partition alone; a worker refuses a partition whose
file changed since the plan); on a real Dask LocalCluster (two worker processes, one thread
each), parts that concatenate to the local output, a worker or the client killed mid-run, and
--resume; Dask logging nothing below a warning; and a real deployment (a `dask scheduler` and
two `dask worker` processes, one killed mid-run) that loses no part. The planning and Parquet
tests need no model."""

from __future__ import annotations

import hashlib
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

from ..conftest import EXAMPLES, MINI, MINI_TAXONOMY, ROOT, alive, papers
from .conftest import FOUR_ABSTRACTS, finish, same_length_edit, start_tagger

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


def _csv(path: Path, abstracts=FOUR_ABSTRACTS) -> Path:
    import csv

    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "abstract"])
        for i, abstract in enumerate(abstracts):
            writer.writerow([f"c{i}", abstract])
    return path


def _parquet(path: Path, abstracts=FOUR_ABSTRACTS) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": [f"q{i}" for i in range(len(abstracts))], "abstract": abstracts})
    pq.write_table(table, path, row_group_size=2)
    return path


@pytest.mark.parametrize(
    "make",
    [
        lambda d: papers(d / "p.jsonl", FOUR_ABSTRACTS),
        lambda d: _csv(d / "p.csv"),
        lambda d: _parquet(d / "p.parquet"),
        lambda d: Path(
            __import__("shutil").copy(EXAMPLES / "icml2025-abstracts.txt", d / "icml.txt")
        ),
    ],
    ids=["jsonl", "csv", "parquet", "paper-list"],
)
def test_each_partition_is_named_by_its_content(tmp_path, make):
    """An edit of one record at the same length changes the hash of its partition alone; the
    same file by a relative path plans the same partitions; a worker reads each partition, as
    planned, to the records of the whole file."""
    from tagger.io.readers import iter_records
    from tagger.runs.cluster import plan
    from tagger.runs.partitions import read_partition

    source = make(tmp_path)
    before = plan([str(source)], size=2)
    assert len(before) >= 2 and all(len(p.sha256) == 64 for p in before)
    assert len({p.sha256 for p in before}) == len(before)
    read = [str(r) for p in before for r in read_partition(p)]
    assert read == [str(r) for r in iter_records(source, notices=True)]
    os.chdir(tmp_path)
    try:
        relative = plan([source.name], size=2)
    finally:
        os.chdir(Path(__file__).parent)
    assert [(p.path, p.sha256) for p in relative] == [(p.path, p.sha256) for p in before]
    assert relative[0].source == source.name and before[0].path == str(source)
    if source.suffix == ".parquet":  # rewritten, as a changed Parquet file would be
        _parquet(source, [*FOUR_ABSTRACTS[:3], FOUR_ABSTRACTS[3].replace("protein", "nucleic")])
    elif source.suffix == ".txt":
        same_length_edit(source, "Maximal Update", "Minimal Update")
    else:
        same_length_edit(source, "molecules", "proteins!")
    after = plan([str(source)], size=2)
    assert [(p.first, p.stop) for p in after] == [(p.first, p.stop) for p in before]
    changed = [p.index for p, q in zip(before, after, strict=True) if p.sha256 != q.sha256]
    assert len(changed) == 1


def test_a_partition_whose_file_changed_since_the_plan_is_not_read(tmp_path):
    """A worker reads a partition by its absolute path, whatever its working directory, names
    it as it was given, and refuses it when the file no longer holds the planned records."""
    from tagger.errors import InputError
    from tagger.runs.partitions import plan, read_partition

    source = papers(tmp_path / "p.jsonl", [*FOUR_ABSTRACTS, "x"])
    (tmp_path / "p.jsonl").open("a").write('{"id": "bad"}\n')
    os.chdir(tmp_path)
    try:
        partitions = plan(["p.jsonl"], size=2)
    finally:
        os.chdir(Path(__file__).parent)
    *_, last = partitions
    errors = [r for r in read_partition(last) if isinstance(r, InputError)]
    assert [str(e) for e in errors] == ["p.jsonl line 6: 'abstract': field required"]
    same_length_edit(source, "molecules", "proteins!")
    assert [r.id for r in read_partition(partitions[0])] == ["p0"]  # unchanged partitions read
    with pytest.raises(InputError) as caught:
        list(read_partition(partitions[1]))
    assert str(caught.value) == (
        "p.jsonl: changed while the run read it: lines 2-3 (part-00001) are not what the run "
        "planned; tag the changed file into a new directory"
    )


@pytest.mark.parametrize("end", [b"\r\n", b"\r"], ids=["CRLF", "CR"])
def test_line_partitions_hash_exactly_their_bytes_across_read_blocks(tmp_path, end):
    """The planner reads a JSON Lines file in blocks of 1 MiB and hashes each partition as it
    goes: here the first partition's last line ends with a CR that is the first block's last
    byte (its LF, if any, the next block's first)."""
    from tagger.runs.cluster import plan

    block, first_size, width = 1 << 20, 1000, 1000
    line = b'{"abstract": "' + b"a" * width + b'"}' + end
    first_length = block - 1 + len(end) - (first_size - 1) * len(line)
    first = b'{"abstract": "' + b"b" * (first_length - len(line) + width) + b'"}' + end
    data = first + line * 2599
    path = tmp_path / "big.jsonl"
    path.write_bytes(data)
    partitions = plan([str(path)], size=4 * first_size)
    assert partitions[0].end == block - 1 + len(end) and data[block - 1 : block] == b"\r"
    assert [(p.first, p.stop) for p in partitions] == [(0, 1000), (1000, 2600)]
    assert [p.start for p in partitions[1:]] == [p.end for p in partitions[:-1]]
    assert partitions[-1].end == len(data)
    for p in partitions:
        assert p.sha256 == hashlib.sha256(data[p.start : p.end]).hexdigest(), p.index


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


@pytest.mark.slow
@pytest.mark.models
def test_the_client_killed_then_resume_runs_only_the_missing_parts(local_run, tmp_path):
    inputs, local, _ = local_run
    out = tmp_path / "out"
    command = [*inputs, "-o", str(out), "--cluster", "local:2", "--partition-size", "2"]
    first = start_tagger("tag", *command)
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
    again = start_tagger("tag", *command, "--resume")
    _, stderr = again.communicate(timeout=600)
    assert again.returncode == 1, stderr.decode()  # 1: a record was rejected, as locally
    assert _concatenated(out) == local
    for name, stamp in kept.items():  # a complete part was not written again
        if (out / name.replace(".jsonl", ".done.json")).exists():
            path = out / name
            assert (path.stat().st_ino, path.stat().st_mtime_ns) == stamp, name
    refused = start_tagger("tag", *command, "--resume", "--max-tags", "3")
    _, stderr = refused.communicate(timeout=300)
    assert refused.returncode == 1
    assert b"cannot resume" in stderr and b"settings" in stderr, stderr.decode()


@pytest.mark.slow
@pytest.mark.models
def test_dask_logs_nothing_below_a_warning_during_a_run(tmp_path):
    """A LocalCluster's scheduler runs in this process and logs every worker and client that
    comes and goes at INFO: during a run, none of it is even made; after it, Dask's loggers are
    as they were."""
    import logging

    from tagger import Tagger
    from tagger.runs.cluster import tag_on_cluster

    papers = tmp_path / "papers.jsonl"
    papers.write_text("".join(json.dumps({"abstract": a}) + "\n" for a in FOUR_ABSTRACTS[:2]))
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    import distributed  # noqa: F401  (its import sets its loggers' levels)

    dask = logging.getLogger("distributed")
    before = dask.level
    keep = Keep(logging.NOTSET)
    dask.addHandler(keep)
    try:
        tagger = Tagger.from_taxonomy(MINI[1])
        summary = tag_on_cluster(
            tagger, [str(papers)], tmp_path / "out", cluster="local:1", warn=print, note=print
        )
    finally:
        dask.removeHandler(keep)
    assert summary.tagged == 2
    quiet = [f"{r.name} {r.levelname}: {r.getMessage()}" for r in records if r.levelno < 30]
    assert quiet == []
    assert dask.level == before


# --- a real deployment: `dask scheduler` and `dask worker` processes -----------------------------


def _parts(directory: Path) -> list[Path]:
    return sorted(directory.glob("part-?????.jsonl"))


def _dask(*args: str, cwd: Path, log: Path) -> subprocess.Popen:
    """A `dask` command in a process group of its own, as a batch job would start it."""
    with open(log, "wb") as stream:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            stdout=stream,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
        )


@pytest.fixture
def deployment(tmp_path):
    """A scheduler and two single-thread workers on 127.0.0.1, each its own process (a nanny
    and its worker), started in a directory of their own, as on another node; all stopped at
    the end, however the test ends."""
    home = tmp_path / "nodes"
    home.mkdir()
    started: list[subprocess.Popen] = []
    try:
        scheduler_file = home / "scheduler.json"
        started.append(
            _dask(
                "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                "--scheduler-file", str(scheduler_file), cwd=home, log=home / "scheduler.log",
            )
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not scheduler_file.exists() and time.monotonic() < deadline:
            assert started[0].poll() is None, (home / "scheduler.log").read_text()
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        for name in ("w0", "w1"):
            started.append(
                _dask(
                    "worker", address, "--name", name, "--nthreads", "1", "--nworkers", "1",
                    "--no-dashboard", "--local-directory", str(home / name), cwd=home,
                    log=home / f"{name}.log",
                )
            )  # fmt: skip
        from dask.distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            names = {a: w["name"] for a, w in client.scheduler_info()["workers"].items()}
            workers = {names[a]: pid for a, pid in client.run(os.getpid).items()}
        yield address, dict(zip(["w0", "w1"], started[1:], strict=True)), workers
    finally:
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
@pytest.mark.models
def test_a_real_deployment_loses_a_worker_and_no_part(tmp_path, deployment, tagger):
    """`tagger tag --cluster tcp://...` on separate scheduler and worker processes, with
    relative paths (the workers run elsewhere): one worker killed with SIGKILL mid-run, the
    parts still concatenate to the local output byte for byte, each exactly once."""
    from tagger import read_papers, tag_files

    address, processes, pids = deployment
    abstracts = [p.abstract for p in read_papers(EXAMPLES / "icml2025-abstracts.txt")]
    source = tmp_path / "papers.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": f"m{i}", "abstract": abstracts[i % len(abstracts)]}) + "\n"
            for i in range(60)
        )
    )
    local = tmp_path / "local.jsonl"
    tag_files(tagger, [source], local)
    out = tmp_path / "out"
    tagging = start_tagger(
        "tag", "papers.jsonl", "-o", "out", "--cluster", address, "--partition-size", "2",
        cwd=tmp_path,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not list(out.glob("part-*.done.json")) and time.monotonic() < deadline:
            assert tagging.poll() is None, tagging.communicate()[1].decode()
            time.sleep(0.05)
        os.killpg(processes["w0"].pid, signal.SIGKILL)  # the node of worker w0 is lost
        done_when_killed = len(list(out.glob("part-*.done.json")))
        code, stderr = finish(tagging, timeout=600)
    finally:
        if tagging.poll() is None:
            os.killpg(tagging.pid, signal.SIGKILL)
            tagging.wait()
    assert processes["w0"].wait() == -signal.SIGKILL and not alive(pids["w0"])
    assert processes["w1"].poll() is None and alive(pids["w1"])
    manifest = json.loads((out / "manifest.json").read_text())
    count = len(manifest["fingerprint"]["partitions"])
    assert 0 < done_when_killed < count, "the worker was not killed mid-run"
    assert code == 0, stderr
    assert stderr.splitlines()[-1] == f"tagged 60 papers to out in {count} parts", stderr
    names = [p.name for p in _parts(out)]
    assert names == [f"part-{i:05d}.jsonl" for i in range(count)]  # none lost, none twice
    assert b"".join(p.read_bytes() for p in _parts(out)) == local.read_bytes()
    assert manifest["complete"] and [p["index"] for p in manifest["parts"]] == list(range(count))
    for part, path in zip(manifest["parts"], _parts(out), strict=True):
        assert part["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert not list(out.glob(".*"))  # no temporary file left


# --- what it installs ----------------------------------------------------------------------------


def test_the_dashboard_dependency_is_an_extra():
    """`pip install "tagger[cluster]"` installs what distributed needs for the dashboard, at a
    version distributed accepts; without it, the run says nothing of a dashboard
    (cluster._dashboard)."""
    import tomllib

    from distributed.versions import BOKEH_REQUIREMENT
    from packaging.requirements import Requirement

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # the extra also holds DuckDB, for the cluster how-to's query over the parts
    [wanted] = [
        r
        for r in map(Requirement, extras["optional-dependencies"]["cluster"])
        if r.name == BOKEH_REQUIREMENT.name
    ]
    assert wanted.name == BOKEH_REQUIREMENT.name == "bokeh"
    floor = next(spec.version for spec in wanted.specifier if spec.operator == ">=")
    assert BOKEH_REQUIREMENT.specifier.contains(floor)
