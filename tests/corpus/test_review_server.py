"""The review's server (corpus.review_server) takes changes from its own page only: the right
Host and the page's token, on the paths it serves."""

from __future__ import annotations

import http.client
import json
import threading

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


def test_the_server_takes_changes_from_its_page_only(tmp_path):
    tagged = write_tagged(tmp_path / "t.jsonl", review_records())
    review = Review.open(tagged, tmp_path / "j.jsonl", taxonomy=MINI_TAXONOMY)
    with review.serve() as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        status, headers, page = _request(server, "GET", "/")
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert server.token in page.decode() and ABSTRACT in page.decode()
        change = json.dumps({"id": "p1", "type": ["theory"], "done": True})
        ours = {"X-Review-Token": server.token, "Content-Type": "application/json"}
        # no token, or a name of this machine that is not the server's (DNS rebinding): refused
        for headers in ({}, {**ours, "Host": f"evil.example:{server.port}"}):
            status, _, body = _request(server, "POST", "/judgment", change, headers)
            assert (status, json.loads(body)) == (403, {"error": "changes come from the page only"})
        assert not (tmp_path / "j.jsonl").exists()
        assert _request(server, "GET", "/favicon.ico")[0] == 404
        status, _, body = _request(server, "POST", "/judgment", '{"id": "p1", "done": 1}', ours)
        assert status == 400
        assert json.loads(body) == {
            "error": "not saved: paper 'p1': 'done' must be true or false. Got 1 instead."
        }
        status, _, body = _request(server, "POST", "/judgment", change, ours)
        assert status == 200 and json.loads(body)["done"] == 1
        assert json.loads(body)["saved"]["areas"] == ["rl", "graphs.gnn"]
        assert judgments_in(tmp_path / "j.jsonl")[0]["judged"]["main"] == ["rl"]
