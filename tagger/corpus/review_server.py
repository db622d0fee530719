"""The review page and its judgments over HTTP, on 127.0.0.1 only (`tagger review`): the page,
made afresh on each request, and each change the page sends, saved to the judgments file
(corpus.judgments) before it is answered.

The server answers its own page only. 127.0.0.1 is open to every user of the machine and to any
web page the browser shows, so the URL `tagger review` prints carries a secret, as Jupyter's
does: the first request with it sets a cookie (HttpOnly, SameSite=Strict) and is sent on to the
bare URL; the page is served only with the cookie, and a change only with the secret in a header
the page adds, from this server's origin, to a Host of this machine."""

from __future__ import annotations

import secrets
import sys
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from ..config import REVIEW_BLOCK, REVIEW_PORT
from ..errors import TaggerError
from ..io.jsonl import dumps, parse_json
from .judgments import JudgmentStore, StaleJudgment

HOST = "127.0.0.1"  # loopback only: the page is served to this machine and no other
MAX_BODY = 1 << 20  # bytes of one change sent by the page
FORBIDDEN_PAGE = (  # what a browser without the secret is told
    "This review page is open only through the URL `tagger review` printed (it carries the "
    "review's secret, ?token=...): open that one.\n"
)
CSP = (  # the page loads nothing and talks only to its server
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'"
)


class Reviewed(Protocol):
    """What the server serves (corpus.review.Review): the page, the papers in blocks, and the
    judgments file."""

    store: JudgmentStore

    def page(self, token: str = "") -> str: ...

    def papers_from(self, start: int, count: int) -> dict[str, Any]: ...

    def block_of(self, paper_id: str, count: int) -> dict[str, Any]: ...

    def close(self) -> None: ...


class ReviewServer:
    """A review's page and its judgments over HTTP, on 127.0.0.1 only, until :meth:`close`
    (a context manager closes it too). ``GET /`` is the page, made afresh (so a reload shows
    what the file holds); ``GET /papers?start=K&count=N`` (or ``?id=ID&count=N``: the block
    that holds it) is a block of papers as the page shows them, with their judgments;
    ``POST /judgment`` saves one paper's judgment (a JSON object: ``id``,
    the ``revision`` it was made on, and JudgmentStore.save's other keywords) and answers, once
    the file holds it, with its view and the number of papers done; a change made on a revision
    another page has saved over is refused (409) with the paper's view now. :attr:`url` is the
    page's address with the secret (see the module's docstring): no other user of the machine,
    no other web page, and no name that resolves here can read the page or change the file."""

    def __init__(self, review: Reviewed, *, port: int = REVIEW_PORT) -> None:
        self.review = review
        self.port = port
        self.token = ""
        self._server: _Server | None = None
        self._serving = False

    def start(self) -> ReviewServer:
        """Listen on ``port`` (0: a free one); TaggerError if it cannot."""
        if self._server is None:
            self.token = secrets.token_urlsafe(24)
            try:
                self._server = _Server((HOST, self.port), _handler(self))
            except OSError as exc:
                raise TaggerError(
                    f"cannot serve on {HOST} port {self.port}: {exc.strerror or exc}; pass "
                    "another --port, or none for a free one"
                ) from None
            self.port = self._server.server_address[1]
        return self

    @property
    def address(self) -> str:
        """The page's bare address, as the browser shows it once let in."""
        return f"http://{HOST}:{self.port}/"

    @property
    def url(self) -> str:
        """The page's address with the secret, to open in a browser."""
        return f"{self.address}?token={self.token}"

    @property
    def cookie(self) -> str:
        """The name of the cookie that lets a browser in (one per port, as cookies are)."""
        return f"tagger-review-{self.port}"

    def serve_forever(self) -> None:
        """Answer requests until :meth:`close` (from another thread) or Ctrl-C."""
        assert self._server is not None, "start() first"
        self._serving = True
        self._server.serve_forever(poll_interval=0.2)

    def close(self) -> None:
        """Stop answering, let a write under way finish, and close the review (the judgments
        file released)."""
        if self._server is not None:
            if self._serving:
                self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.review.close()

    def __enter__(self) -> ReviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    """The HTTP server of a review: a browser that leaves mid-answer (a tab closed or reloaded
    while a block of papers is sent) is no error to print, and a burst of connections (a page's
    fetches, a reload) waits in a queue longer than the five socketserver keeps."""

    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # reset, broken pipe, aborted
            super().handle_error(request, client_address)


def _handler(server: ReviewServer) -> type[BaseHTTPRequestHandler]:
    review = server.review

    class Handler(BaseHTTPRequestHandler):
        server_version = "tagger-review"
        timeout = 30  # a connection that says nothing is closed, not waited on for ever

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the terminal shows the URL and how the review ended, not each request

        def do_GET(self) -> None:
            if urlsplit(self.path).path == "/papers":
                self._papers()
                return
            if self._refused("/", "/index.html"):
                return
            given = parse_qs(urlsplit(self.path).query).get("token", [""])[0]
            if given and _same(given, server.token):  # the printed URL: let the browser in
                self.send_response(HTTPStatus.SEE_OTHER)
                self.send_header("Location", "/")
                self.send_header(
                    "Set-Cookie",
                    f"{server.cookie}={server.token}; HttpOnly; SameSite=Strict; Path=/",
                )
                self.send_header("Content-Length", "0")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                return
            if not _same(self._cookie(), server.token):
                self._send(HTTPStatus.FORBIDDEN, FORBIDDEN_PAGE.encode(), "text/plain")
                return
            try:
                page = review.page(server.token)
            except TaggerError as exc:  # the judgments file, edited into one it cannot read
                self._send(HTTPStatus.CONFLICT, f"Error: {exc}\n".encode(), "text/plain")
                return
            self._send(HTTPStatus.OK, page.encode(), "text/html")

        def _papers(self) -> None:
            """A block of papers, from a position or the one that holds a paper's id."""
            if self._refused("/papers", change=True):
                return
            query = parse_qs(urlsplit(self.path).query)
            try:
                count = int(query.get("count", [str(REVIEW_BLOCK)])[0])
                if "id" in query:
                    block = review.block_of(query["id"][0], count)
                else:
                    block = review.papers_from(int(query.get("start", ["0"])[0]), count)
            except ValueError:
                self._send(HTTPStatus.BAD_REQUEST, {"error": "start and count are numbers"})
            except TaggerError as exc:  # the judgments file, edited into one it cannot read
                self._send(HTTPStatus.CONFLICT, {"error": str(exc)})
            else:
                self._send(HTTPStatus.OK, block)

        def do_POST(self) -> None:
            if self._refused("/judgment", change=True):
                return
            try:
                length = int(self.headers.get("Content-Length") or -1)
                if not 0 <= length <= MAX_BODY:
                    raise ValueError(f"a change is a JSON object of up to {MAX_BODY:,} bytes")
                change = parse_json(self.rfile.read(length).decode("utf-8"))
                if not isinstance(change, dict) or not isinstance(change.get("id"), str):
                    raise ValueError("a change is a JSON object with the paper's 'id'")
                if not isinstance(change.get("revision"), str):
                    raise ValueError("a change names the 'revision' it was made on")
                saved = review.store.save(change.pop("id"), **change)
            except StaleJudgment as exc:
                done = len(review.store.done)
                stale = {"error": f"not saved: {exc}", "current": exc.current, "done": done}
                self._send(HTTPStatus.CONFLICT, stale)
            except (TaggerError, ValueError, TypeError) as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": f"not saved: {exc}"})
            except OSError as exc:
                where, why = review.store.path, exc.strerror or exc
                failed = {"error": f"not saved: cannot write {where}: {why}"}
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, failed)
            else:
                self._send(HTTPStatus.OK, {"saved": saved, "done": len(review.store.done)})

        def _refused(self, *paths: str, change: bool = False) -> bool:
            """Refuse (and say so) a request that does not name this machine (a page elsewhere
            cannot, even through a name that resolves here); a ``change`` (or a fetch of
            papers) without the page's secret in its header, or sent from another origin; and a
            path not among ``paths``."""
            hosts = {f"{HOST}:{server.port}", f"localhost:{server.port}"}
            ours = self.headers.get("Host") in hosts
            if change:
                origin = self.headers.get("Origin")
                ours = ours and (origin is None or origin in {f"http://{h}" for h in hosts})
                ours = ours and _same(self.headers.get("X-Review-Token") or "", server.token)
            if not ours:
                self._send(HTTPStatus.FORBIDDEN, {"error": "changes come from the page only"})
            elif urlsplit(self.path).path not in paths:
                self._send(HTTPStatus.NOT_FOUND, {"error": "no such page"})
            else:
                return False
            return True

        def _cookie(self) -> str:
            """The value of this server's cookie in the request, "" if none."""
            try:
                cookies = SimpleCookie(self.headers.get("Cookie") or "")
            except CookieError:
                return ""
            morsel = cookies.get(server.cookie)
            return morsel.value if morsel is not None else ""

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


def _same(given: str, secret: str) -> bool:
    """Whether ``given`` is the secret, compared in a time that does not tell how much of it
    matched."""
    return secrets.compare_digest(given.encode(), secret.encode())
