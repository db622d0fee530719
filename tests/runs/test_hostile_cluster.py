"""Careless and hostile cluster runs (issue 24): a resume over inputs edited in place, the same
input by another path, addresses that are no scheduler or no address at all, a tampered
manifest, Ctrl-C, and a real deployment (a `dask scheduler` and two `dask worker` processes, one
killed mid-run). Each ends in its own outcome and one `Error:` line at most, never a traceback."""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from ..conftest import EXAMPLES, MINI, ROOT, run

pytestmark = pytest.mark.cluster  # Dask clusters of processes, most tests here

ABSTRACTS = [
    "Multi-agent reinforcement learning (MARL) with graph neural networks.",
    "Graph neural networks (GNNs) with message passing for molecules.",
    "Policy gradient methods for reinforcement learning in robotics.",
    "Diffusion models for protein structure generation and design.",
]


def papers(path, abstracts=ABSTRACTS, prefix="p"):
    path.write_text(
        "".join(
            json.dumps({"id": f"{prefix}{i}", "abstract": a}) + "\n"
            for i, a in enumerate(abstracts)
        )
    )
    return path


def error_line(result, code=1):
    """The one line a failed command prints: its last, starting 'Error: '."""
    assert result.exit_code == code, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: ") and result.stderr.count("Error: ") == 1, result.stderr
    return last


def _cli(*args, cwd=None, env=None) -> subprocess.Popen:
    """`tagger ...` in a process group of its own (its LocalCluster's workers die with it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tagger", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )


def _finish(process: subprocess.Popen, timeout: float) -> tuple[int, str]:
    """The exit code and stderr of ``process``; killed (and the test failed) if it hangs."""
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"still running after {timeout} s: {process.args}")
    return process.returncode, stderr.decode()


# --- 12. addresses that are no address: usage errors -------------------------------------------


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("foo", "'foo' is not a scheduler's address (missing port number"),
        ("http://127.0.0.1:9", "a Dask scheduler is not reached by http://"),
        ("local:abc", "local:N starts N worker processes here, N a whole number >= 1"),
        ("local:0", "local:N starts N worker processes here, N a whole number >= 1"),
        ("inproc://x", "inproc:// names a scheduler inside another Python process"),
        ("tcp://[::1", "ipv6 needs brackets"),
        ("tcp://127.0.0.1:0", "it needs a host, and a port from 1 to 65535"),
        ("tcp//127.0.0.1:1", "'tcp//127.0.0.1' is neither a host name nor an IP address (a "),
        ("tcp://a b:8786", "'a b' is neither a host name nor an IP address;"),
    ],
)
def test_a_malformed_cluster_address_is_a_usage_error(tmp_path, address, says):
    source = papers(tmp_path / "p.jsonl")
    result = run("tag", source, "-o", tmp_path / "out", "--cluster", address, *MINI)
    line = error_line(result, code=2)
    assert line.startswith(f"Error: Invalid value for '--cluster': {address!r}"), line
    assert says in line
    assert "tcp://HOST:PORT" in line or "local:N" in line  # and what to give instead
    assert not (tmp_path / "out").exists()


# --- 10. an address where no scheduler answers: one error, within the timeout ------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def web_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_listener():
    """A port that accepts connections and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"


@pytest.fixture
def closed_port():
    """A port that refuses connections: bound, never listening, held for the whole test (a port
    closed before the test runs may be taken by another process meanwhile)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        yield f"tcp://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("web_server", "an HTTP server answered (HTTP/1.0 200 OK), not a Dask scheduler"),
        ("silent_listener", "something accepts connections there but answers nothing"),
        ("closed_port", "cannot connect (Connection refused)"),
    ],
)
def test_an_address_where_no_scheduler_answers_fails_saying_what_did(
    request, tmp_path, where, says
):
    """Dask's client waits for a handshake without limit; the run must not. Its connect timeout
    is set to 3 s here; the process is given 120 s before the test calls it hung."""
    address = request.getfixturevalue(where)
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out"
    process = _cli(
        "tag",
        str(source),
        "-o",
        str(out),
        "--cluster",
        address,
        *MINI,
        env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"},
    )
    code, stderr = _finish(process, timeout=120)
    assert code == 1, stderr
    assert "Traceback" not in stderr
    [line] = stderr.splitlines()
    assert line.startswith(f"Error: cannot reach a Dask scheduler at {address} within 3 s: "), line
    assert says in line
    assert not out.exists()  # nothing was planned or written


# --- 11. a tampered manifest: one error line -----------------------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{", "manifest.json is not JSON (Expecting property name"),
        (b"\xff\xfe not text", "manifest.json is not JSON ("),
        (b"[]", "manifest.json holds a JSON list, not a manifest's object"),
        (b'"fingerprint"', "manifest.json holds a JSON str, not a manifest's object"),
        (b"[" * 100_000 + b"]" * 100_000, "manifest.json is not JSON ("),
        (b'{"fingerprint": "x"}', "manifest.json has no fingerprint"),
        (b'{"fingerprint": null}', "manifest.json has no fingerprint"),
    ],
)
def test_a_tampered_manifest_is_one_error_on_resume(tmp_path, content, says):
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_bytes(content)
    result = run("tag", source, "-o", out, "--cluster", "local:1", "--resume", *MINI)
    line = error_line(result)
    assert line.startswith(f"Error: cannot resume: {out / 'manifest.json'} "), line
    assert says in line and line.endswith("tag into a new directory")
    assert (out / "manifest.json").read_bytes() == content  # left as it was


@pytest.mark.parametrize(
    "fingerprint",
    [
        {"provenance": "x"},
        {"provenance": None, "inputs": 3},
        {"inputs": "x", "partitions": {"a": 1}},
        {"inputs": [1, "x", None], "partitions": [[], "x"]},
    ],
)
def test_a_manifest_of_another_shape_is_refused_as_another_run(tmp_path, hash_tagger, fingerprint):
    """Edited into another shape, a manifest is another run's: refused with what differs."""
    from tagger.runs.cluster import fingerprint as fingerprint_of
    from tagger.runs.cluster import plan

    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    real = fingerprint_of(hash_tagger, plan([str(source)]), "jsonl")
    tampered = {**real, **fingerprint}
    (out / "manifest.json").write_text(json.dumps({"fingerprint": tampered}))
    result = run("tag", source, "-o", out, "--cluster", "local:1", "--resume", *MINI)
    line = error_line(result)
    assert line.startswith(f"Error: cannot resume {out}: "), line
    assert line.endswith("run with the same inputs and options, or into another directory")


# --- 2. resume proves the inputs are the same records -------------------------------------------


def _same_length_edit(path: Path, old: str, new: str) -> None:
    assert len(old) == len(new)
    data = path.read_bytes()
    assert data.count(old.encode()) == 1
    path.write_bytes(data.replace(old.encode(), new.encode()))


def _csv(path: Path, abstracts=ABSTRACTS) -> Path:
    import csv

    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "abstract"])
        for i, abstract in enumerate(abstracts):
            writer.writerow([f"c{i}", abstract])
    return path


def _parquet(path: Path, abstracts=ABSTRACTS) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": [f"q{i}" for i in range(len(abstracts))], "abstract": abstracts})
    pq.write_table(table, path, row_group_size=2)
    return path


@pytest.mark.parametrize(
    "make",
    [
        lambda d: papers(d / "p.jsonl"),
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
        _parquet(source, [*ABSTRACTS[:3], ABSTRACTS[3].replace("protein", "nucleic")])
    elif source.suffix == ".txt":
        _same_length_edit(source, "Maximal Update", "Minimal Update")
    else:
        _same_length_edit(source, "molecules", "proteins!")
    after = plan([str(source)], size=2)
    assert [(p.first, p.stop) for p in after] == [(p.first, p.stop) for p in before]
    changed = [p.index for p, q in zip(before, after, strict=True) if p.sha256 != q.sha256]
    assert len(changed) == 1


def test_a_partition_whose_file_changed_since_the_plan_is_not_read(tmp_path):
    """A worker reads a partition by its absolute path, whatever its working directory, names
    it as it was given, and refuses it when the file no longer holds the planned records."""
    from tagger.errors import InputError
    from tagger.runs.partitions import plan, read_partition

    source = papers(tmp_path / "p.jsonl", [*ABSTRACTS, "x"])
    (tmp_path / "p.jsonl").open("a").write('{"id": "bad"}\n')
    os.chdir(tmp_path)
    try:
        partitions = plan(["p.jsonl"], size=2)
    finally:
        os.chdir(Path(__file__).parent)
    *_, last = partitions
    errors = [r for r in read_partition(last) if isinstance(r, InputError)]
    assert [str(e) for e in errors] == ["p.jsonl line 6: 'abstract': field required"]
    _same_length_edit(source, "molecules", "proteins!")
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


# --- on a real cluster (real models) ------------------------------------------------------------


def _parts(directory: Path) -> list[Path]:
    return sorted(directory.glob("part-?????.jsonl"))


def _stamps(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


@pytest.mark.slow
@pytest.mark.models
def test_resume_proves_the_inputs_are_the_records_tagged(tmp_path):
    """Given by a relative path, then by an absolute one, the same file is the same input; an
    abstract edited in place at the same length is named, and nothing is tagged again."""
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out"
    first = _cli(
        "tag", "p.jsonl", "-o", "out", "--cluster", "local:1", "--partition-size", "2",
        *MINI, cwd=tmp_path,
    )  # fmt: skip
    code, stderr = _finish(first, timeout=600)
    assert code == 0, stderr
    assert stderr.splitlines()[-1] == "tagged 4 papers to out in 3 parts", stderr
    written = _stamps(out)
    again = _cli(
        "tag", str(source), "-o", str(out), "--cluster", "local:1", "--partition-size", "2",
        "--resume", *MINI,
    )  # fmt: skip
    code, stderr = _finish(again, timeout=600)
    assert code == 0, stderr
    assert stderr.splitlines()[-1] == f"tagged 4 papers to {out} in 3 parts (0 run now)"
    parts = {name: stamp for name, stamp in written.items() if name.startswith("part-")}
    assert {name: _stamps(out)[name] for name in parts} == parts  # no part written again
    _same_length_edit(source, "molecules", "proteins!")
    before = _stamps(out)
    edited = _cli(
        "tag", "p.jsonl", "-o", "out", "--cluster", "local:1", "--partition-size", "2",
        "--resume", *MINI, cwd=tmp_path,
    )  # fmt: skip
    code, stderr = _finish(edited, timeout=600)
    assert "Traceback" not in stderr
    assert code == 1 and stderr.splitlines() == [
        f"Error: cannot resume out: {source} has changed since: its lines 2-3 (part-00001) are "
        "not the records tagged there; run with the same inputs and options, or into another "
        "directory"
    ], stderr
    assert _stamps(out) == before  # the directory is left as it was


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


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


@pytest.mark.slow
@pytest.mark.models
@pytest.mark.parametrize("presses", [1, 4], ids=["once", "four times"])
def test_ctrl_c_on_a_cluster_run_is_one_message_and_exit_130(tmp_path, presses):
    """Ctrl-C at a terminal signals the whole foreground process group: the client and its
    LocalCluster's worker processes. Only the client may answer; it stops the workers. Pressed
    again while the run winds down (an impatient user), it changes nothing: still one message,
    exit 130, no worker left, and nothing from Dask's logs."""
    out = tmp_path / "out"
    process = _cli(
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
        code, stderr = _finish(process, timeout=120)
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
        "Interrupted. Lines already written are complete; `tagger tag ... -o FILE --resume` "
        "continues a run.",
    ], stderr


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
    papers.write_text("".join(json.dumps({"abstract": a}) + "\n" for a in ABSTRACTS[:2]))
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


# --- a real deployment: `dask scheduler` and `dask worker` processes ----------------------------


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
    tagging = _cli(
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
        code, stderr = _finish(tagging, timeout=600)
    finally:
        if tagging.poll() is None:
            os.killpg(tagging.pid, signal.SIGKILL)
            tagging.wait()
    assert processes["w0"].wait() == -signal.SIGKILL and not _alive(pids["w0"])
    assert processes["w1"].poll() is None and _alive(pids["w1"])
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


def test_the_dashboard_dependency_is_an_extra():
    """`pip install "tagger[cluster]"` installs what distributed needs for the dashboard (issue
    25, item 10); without it, the run says nothing of a dashboard (cluster._dashboard)."""
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
