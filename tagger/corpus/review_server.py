"""The review page and its judgments over HTTP, on 127.0.0.1 only (`tagger review`): the page,
made afresh on each request, and each change the page sends, saved to the judgments file
(corpus.judgments) before it is answered."""

from __future__ import annotations

import secrets
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..config import REVIEW_PORT
from ..errors import TaggerError
from ..io.jsonl import dumps, parse_json
from .judgments import JudgmentStore

HOST = "127.0.0.1"  # loopback only: the page is served to this machine and no other
MAX_BODY = 1 << 20  # bytes of one change sent by the page
CSP = (  # the page loads nothing and talks only to its server
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'"
)


class Reviewed(Protocol):
    """What the server serves (corpus.review.Review): the page, and the judgments file."""

    store: JudgmentStore

    def page(self, token: str = "") -> str: ...


class ReviewServer:
    """A review's page and its judgments over HTTP, on 127.0.0.1 only, until :meth:`close`
    (a context manager closes it too). ``GET /`` is the page, made afresh (so a reload shows
    what the file holds); ``POST /judgment`` saves one paper's judgment (a JSON object: ``id``
    and JudgmentStore.save's keywords) and answers, once the file holds it, with its view and
    the number of papers done. A change must carry the page's token and a Host header of this
    machine: no other web page, and no name that resolves here, can change the file."""

    def __init__(self, review: Reviewed, *, port: int = REVIEW_PORT) -> None:
        self.review = review
        self.port = port
        self.token = ""
        self._server: ThreadingHTTPServer | None = None
        self._serving = False

    def start(self) -> ReviewServer:
        """Listen on ``port`` (0: a free one); TaggerError if it cannot."""
        if self._server is None:
            self.token = secrets.token_urlsafe(24)
            try:
                self._server = ThreadingHTTPServer((HOST, self.port), _handler(self))
            except OSError as exc:
                raise TaggerError(
                    f"cannot serve on {HOST} port {self.port}: {exc.strerror or exc}; pass "
                    "another --port, or none for a free one"
                ) from None
            self.port = self._server.server_address[1]
        return self

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def serve_forever(self) -> None:
        """Answer requests until :meth:`close` (from another thread) or Ctrl-C."""
        assert self._server is not None, "start() first"
        self._serving = True
        self._server.serve_forever(poll_interval=0.2)

    def close(self) -> None:
        """Stop answering, let a write under way finish, and release the judgments file."""
        if self._server is not None:
            if self._serving:
                self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.review.store.close()

    def __enter__(self) -> ReviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _handler(server: ReviewServer) -> type[BaseHTTPRequestHandler]:
    review = server.review

    class Handler(BaseHTTPRequestHandler):
        server_version = "tagger-review"
        timeout = 30  # a connection that says nothing is closed, not waited on for ever

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the terminal shows the URL and how the review ended, not each request

        def do_GET(self) -> None:
            if self._refused("/", "/index.html"):
                return
            self._send(HTTPStatus.OK, review.page(server.token).encode(), "text/html")

        def do_POST(self) -> None:
            if self._refused("/judgment"):
                return
            try:
                length = int(self.headers.get("Content-Length") or -1)
                if not 0 <= length <= MAX_BODY:
                    raise ValueError(f"a change is a JSON object of up to {MAX_BODY:,} bytes")
                change = parse_json(self.rfile.read(length).decode("utf-8"))
                if not isinstance(change, dict) or not isinstance(change.get("id"), str):
                    raise ValueError("a change is a JSON object with the paper's 'id'")
                saved = review.store.save(change.pop("id"), **change)
            except (TaggerError, ValueError, TypeError) as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": f"not saved: {exc}"})
            except OSError as exc:
                where, why = review.store.path, exc.strerror or exc
                failed = {"error": f"not saved: cannot write {where}: {why}"}
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, failed)
            else:
                self._send(HTTPStatus.OK, {"saved": saved, "done": len(review.store.done)})

        def _refused(self, *paths: str) -> bool:
            """Refuse (and say so) a request that does not name this machine (a page elsewhere
            cannot, even through a name that resolves here), a change without the page's
            token, and a path not among ``paths``."""
            hosts = {f"{HOST}:{server.port}", f"localhost:{server.port}"}
            token = self.command == "GET" or self.headers.get("X-Review-Token") == server.token
            if self.headers.get("Host") not in hosts or not token:
                self._send(HTTPStatus.FORBIDDEN, {"error": "changes come from the page only"})
            elif urlsplit(self.path).path not in paths:
                self._send(HTTPStatus.NOT_FOUND, {"error": "no such page"})
            else:
                return False
            return True

        def _send(self, status: HTTPStatus, body: Any, kind: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else dumps(body)
            self.send_response(status)
            for name, value in (
                ("Content-Type", f"{kind}; charset=utf-8"),
                ("Content-Length", str(len(data))),
                ("Cache-Control", "no-store"),
                ("X-Content-Type-Options", "nosniff"),
                ("Content-Security-Policy", CSP),
            ):
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
