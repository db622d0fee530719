"""Reaching a Dask cluster (runs.connection): an address that is no address is a usage error
saying what to give instead, before anything is written; an address where no scheduler
answers (a web server, a port that says nothing, a closed port) fails within the connect
timeout, in one line saying what did answer."""

from __future__ import annotations

import http.server
import socket
import threading

import pytest

from ..conftest import MINI, error_line, papers, run
from .conftest import FOUR_ABSTRACTS, finish, start_tagger


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
    source = papers(tmp_path / "p.jsonl", FOUR_ABSTRACTS)
    result = run("tag", source, "-o", tmp_path / "out", "--cluster", address, *MINI)
    line = error_line(result, code=2)
    assert line.startswith(f"Error: Invalid value for '--cluster': {address!r}"), line
    assert says in line
    assert "tcp://HOST:PORT" in line or "local:N" in line  # and what to give instead
    assert not (tmp_path / "out").exists()


# --- an address where no scheduler answers: one error, within the timeout ------------------------


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
    source = papers(tmp_path / "p.jsonl", FOUR_ABSTRACTS)
    out = tmp_path / "out"
    process = start_tagger(
        "tag",
        str(source),
        "-o",
        str(out),
        "--cluster",
        address,
        *MINI,
        env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"},
    )
    code, stderr = finish(process, timeout=120)
    assert code == 1, stderr
    assert "Traceback" not in stderr
    [line] = stderr.splitlines()
    assert line.startswith(f"Error: cannot reach a Dask scheduler at {address} within 3 s: "), line
    assert says in line
    assert not out.exists()  # nothing was planned or written
