"""The review's server (corpus.review_server) answers its own page only: the page to a browser
let in by the printed URL's secret, changes with that secret, from its origin, to a Host of this
machine, on the paths it serves; and a change made on a judgment another page saved over is
refused with the judgment as it is now."""

from __future__ import annotations

import http.client
import json
import threading

import pytest

from tagger.corpus.review import Review

from ..conftest import MINI_TAXONOMY, write_tagged
from .conftest import ABSTRACT, judgments_in, review_records


def _request(server, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    answer = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return answer


@pytest.fixture
def served(tmp_path):
    tagged = write_tagged(tmp_path / "t.jsonl", review_records())
    review = Review.open(tagged, tmp_path / "j.jsonl", taxonomy=MINI_TAXONOMY)
    with review.serve() as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield server


def test_the_page_is_served_to_a_browser_with_the_secret_only(served):
    server = served
    assert server.url == f"http://127.0.0.1:{server.port}/?token={server.token}"
    assert len(server.token) >= 32
    # Another user of the machine, or a page elsewhere: no secret, a wrong one, a wrong cookie.
    cookie = f"tagger-review-{server.port}"
    for path, headers in [
        ("/", {}),
        ("/?token=nope", {}),
        ("/", {"Cookie": f"{cookie}=nope"}),
        ("/", {"Cookie": f"tagger-review-1={server.token}"}),
    ]:
        status, _, body = _request(server, "GET", path, headers=headers)
        assert status == 403 and server.token not in body.decode()
        assert body.decode().startswith("This review page is open only through the URL")
    # The printed URL: a cookie for this port's server, and on to the bare address.
    status, headers, _ = _request(server, "GET", f"/?token={server.token}")
    assert status == 303 and headers["Location"] == "/"
    assert headers["Set-Cookie"] == (f"{cookie}={server.token}; HttpOnly; SameSite=Strict; Path=/")
    status, headers, page = _request(
        server, "GET", "/", headers={"Cookie": f"{cookie}={server.token}"}
    )
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert server.token in page.decode() and ABSTRACT not in page.decode()  # fetched: below
    status, _, _ = _request(
        server, "GET", "/", headers={"Cookie": f"{cookie}={server.token}", "Host": "evil.example"}
    )
    assert status == 403


def test_the_server_takes_changes_from_its_page_only(served, tmp_path):
    server = served
    change = json.dumps({"id": "p1", "type": ["theory"], "done": True, "revision": ""})
    ours = {"X-Review-Token": server.token, "Content-Type": "application/json"}
    # no token, a wrong one, a name of this machine that is not the server's (DNS rebinding),
    # another origin (a page elsewhere that learnt the token): refused
    for headers in (
        {},
        {**ours, "X-Review-Token": "nope"},
        {**ours, "Host": f"evil.example:{server.port}"},
        {**ours, "Origin": "http://evil.example"},
        {**ours, "Origin": f"http://127.0.0.1:{server.port + 1}"},
    ):
        status, _, body = _request(server, "POST", "/judgment", change, headers)
        assert (status, json.loads(body)) == (403, {"error": "changes come from the page only"})
    assert not (tmp_path / "j.jsonl").exists()
    assert _request(server, "GET", "/favicon.ico")[0] == 404
    bad = '{"id": "p1", "done": 1, "revision": ""}'
    status, _, body = _request(server, "POST", "/judgment", bad, ours)
    assert status == 400
    assert json.loads(body) == {
        "error": "not saved: paper 'p1': 'done' must be true or false. Got 1 instead."
    }
    status, _, body = _request(server, "POST", "/judgment", '{"id": "p1", "done": false}', ours)
    assert (status, json.loads(body)) == (
        400,
        {"error": "not saved: a change names the 'revision' it was made on"},
    )
    origin = {**ours, "Origin": f"http://localhost:{server.port}"}
    status, _, body = _request(server, "POST", "/judgment", change, origin)
    assert status == 200 and json.loads(body)["done"] == 1
    assert json.loads(body)["saved"]["areas"] == ["rl", "graphs.gnn"]
    assert judgments_in(tmp_path / "j.jsonl")[0]["judged"]["main"] == ["rl"]


def test_a_change_made_on_an_older_revision_is_refused_with_the_current_view(served, tmp_path):
    """Two pages of one review: the page that saves second, on the revision both read, is
    told (409) and given the paper's judgment as the file holds it; the file keeps the first."""
    server = served
    ours = {"X-Review-Token": server.token, "Content-Type": "application/json"}
    first = {"id": "p1", "type": ["theory"], "notes": "newer", "done": True, "revision": ""}
    status, _, body = _request(server, "POST", "/judgment", json.dumps(first), ours)
    assert status == 200
    saved = json.loads(body)["saved"]
    second = {"id": "p1", "type": ["method"], "revision": ""}
    status, _, body = _request(server, "POST", "/judgment", json.dumps(second), ours)
    assert (status, json.loads(body)) == (
        409,
        {
            "error": "not saved: paper 'p1' was changed in another page since this one read it: "
            "not saved",
            "current": saved,
            "done": 1,
        },
    )
    assert judgments_in(tmp_path / "j.jsonl")[0]["judged"]["notes"] == "newer"
    second["revision"] = saved["revision"]  # made on what the file holds: saved
    status, _, body = _request(server, "POST", "/judgment", json.dumps(second), ours)
    assert status == 200 and json.loads(body)["saved"]["type"] == ["method"]


def test_the_page_fetches_its_papers_in_blocks(served):
    """``GET /papers``: a block of papers from a position, or the block that holds a paper, as
    the page shows them, with their judgments, every paper's state and the number done; with
    the page's secret only."""
    server = served
    ours = {"X-Review-Token": server.token}
    change = json.dumps({"id": "p2", "areas": ["graphs"], "type": ["method"], "revision": ""})
    assert _request(server, "POST", "/judgment", change, ours)[0] == 200
    status, _, body = _request(server, "GET", "/papers?start=1&count=1", headers=ours)
    block = json.loads(body)
    assert status == 200 and (block["start"], block["states"], block["done"]) == (1, "tb", 0)
    assert [paper["id"] for paper in block["papers"]] == ["p2"]
    assert block["papers"][0]["abstract"] == "Graphs." and block["papers"][0]["threshold"] == 0.7
    assert block["views"]["p2"]["areas"] == ["graphs"]
    status, _, body = _request(server, "GET", "/papers?id=p1&count=1", headers=ours)
    block = json.loads(body)
    assert (block["index"], block["start"], block["views"]) == (0, 0, {})
    assert block["papers"][0]["abstract"] == ABSTRACT
    status, _, body = _request(server, "GET", "/papers?id=nope", headers=ours)
    assert (status, json.loads(body)) == (200, {"index": -1})
    status, _, body = _request(server, "GET", "/papers?start=x", headers=ours)
    assert (status, json.loads(body)) == (400, {"error": "start and count are numbers"})
    status, _, body = _request(server, "GET", "/papers?start=0")  # no secret
    assert (status, json.loads(body)) == (403, {"error": "changes come from the page only"})


def test_a_hand_edit_that_breaks_the_file_is_said_and_nothing_is_written(served, tmp_path):
    """The page is made, and a change saved, from the file as it is now: an edit by hand that
    breaks it is said, with its line, and the file is left as the edit left it."""
    server = served
    ours = {"X-Review-Token": server.token}
    change = {"id": "p2", "areas": ["graphs"], "type": ["method"], "revision": ""}
    assert _request(server, "POST", "/judgment", json.dumps(change), ours)[0] == 200
    path = tmp_path / "j.jsonl"
    broken = path.read_text() + "{\n"
    path.write_text(broken)
    cookie = {"Cookie": f"tagger-review-{server.port}={server.token}"}
    status, headers, body = _request(server, "GET", "/", headers=cookie)
    assert status == 409 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert body.decode().startswith(f"Error: {path} line 2: not a line of JSON (")
    status, _, body = _request(server, "GET", "/papers?id=p2", headers=ours)
    assert status == 409 and json.loads(body)["error"].startswith(f"{path} line 2: not a line")
    status, _, body = _request(server, "POST", "/judgment", json.dumps(change), ours)
    assert status == 400 and json.loads(body)["error"].startswith(
        f"not saved: {path} line 2: not a line of JSON ("
    )
    assert json.loads(body)["error"].endswith(
        "the file was changed while the review runs; mend that line and save again (nothing "
        "was written)"
    )
    assert path.read_text() == broken
    path.write_text(broken[: -len("{\n")])  # mended: saved again
    block = json.loads(_request(server, "GET", "/papers?id=p2", headers=ours)[2])
    change["revision"] = block["views"]["p2"]["revision"]  # the page, reloaded, saves
    assert _request(server, "POST", "/judgment", json.dumps(change), ours)[0] == 200


def test_a_browser_that_leaves_mid_answer_is_no_error_to_print(served, capfd):
    """A tab closed while a block of papers is sent (the connection reset), or a change whose
    body never comes: the server answers the next request, and prints no traceback."""
    import socket
    import struct

    for request in (
        f"GET /papers?start=0&count=50 HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
        f"X-Review-Token: {served.token}\r\n\r\n",
        f"POST /judgment HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
        f"X-Review-Token: {served.token}\r\nContent-Length: 1000\r\n\r\n{{",
    ):
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", served.port))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.sendall(request.encode())
            if request.startswith("POST"):
                sock.shutdown(socket.SHUT_WR)  # the body ends short: the answer meets a reset
            sock.close()  # a reset, as a closed tab sends
    status, _, _ = _request(served, "GET", f"/?token={served.token}")
    assert status == 303
    assert "Traceback" not in capfd.readouterr().err
