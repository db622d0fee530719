"""Hostile checks of `tagger review`, `tagger fit` and `--model` (tag, eval, retag).

Each check plays a careless or hostile user and prints ``PASS name`` or ``FAIL name: what
happened``; the last line counts them. A traceback on stderr is always a FAIL, and every
command runs under a timeout (a hang is a FAIL, never a stuck script).

Usage (as root: some checks make a device node and a second user, and run commands as it), from
a clone, with tagger installed in the interpreter that runs it (or named by $TAGGER_PYTHON):

    python tests/hostile/review_fit_model.py [REPO] [--only NAME,NAME...]

REPO is the clone to run tagger from (default: the one this file is in), as ``cd REPO &&
$TAGGER_PYTHON -m tagger ...`` (python -m from the clone imports the clone's code). The few model
files it rewrites (an area model of another width, a zip bomb) are made with that interpreter's
numpy, in a child process. Fits are kept small: 50 papers of data/iclr2026-dev.jsonl,
examples/iclr-areas.yaml, --labels primary_area --folds 2 -w 1. Issue 45's hostile pass: 61
checks, every one holds on the merged main (about 4 minutes on two cores).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import queue
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zipfile
from pathlib import Path

PY = os.environ.get("TAGGER_PYTHON", sys.executable)  # an interpreter tagger is installed in
ARGS = sys.argv[1:]
ONLY = None
if "--only" in ARGS:
    at = ARGS.index("--only")
    ONLY = set(ARGS[at + 1].split(","))
    del ARGS[at : at + 2]
REPO = Path(ARGS[0] if ARGS else Path(__file__).resolve().parents[2]).resolve()
WORK = Path(tempfile.mkdtemp(prefix="hostile45-"))
IRIS = ["--taxonomy", "examples/iclr-areas.yaml"]  # the small taxonomy of one's own
SMALL = ["--labels", "primary_area", "--folds", "2", "-w", "1"]
OTHER_USER = "hostile45u"
TRACEBACK = "Traceback (most recent call last)"

CHECKS: list = []
RESULTS: list[tuple[str, bool, str]] = []


class Fail(Exception):
    """A check's finding: the message is what happened."""


def check(function):
    """Register a check; its name is the function's, without ``check_``."""
    CHECKS.append(function)
    return function


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Fail(message)


# ---------------------------------------------------------------- running tagger -----------


class Ran:
    def __init__(self, rc, out, err, seconds, timed_out=False, maxrss_kb=0):
        self.rc, self.out, self.err, self.seconds = rc, out, err, seconds
        self.timed_out, self.maxrss_kb = timed_out, maxrss_kb

    def brief(self) -> str:
        tail = " | ".join(self.err.strip().splitlines()[-3:])
        hung = " (TIMED OUT)" if self.timed_out else ""
        return f"rc={self.rc}{hung} in {self.seconds:.1f}s; stderr: {tail[:600]!r}"


def run(cmd, *, timeout=180, env=None, stdin_data=None, cwd=None) -> Ran:
    """Run ``cmd`` in its own process group, killed whole at ``timeout``; the max RSS of the
    process (and its waited children) in KB, from wait4."""
    full_env = dict(os.environ, **(env or {}))
    full_env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    out_f = tempfile.TemporaryFile()  # noqa: SIM115 - read after the child ends, then closed
    err_f = tempfile.TemporaryFile()  # noqa: SIM115 - read after the child ends, then closed
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd or REPO,
        env=full_env,
        stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
        stdout=out_f,
        stderr=err_f,
        start_new_session=True,
    )
    if stdin_data is not None:
        try:
            proc.stdin.write(stdin_data)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    timed_out, status, usage = False, None, None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            timed_out = True
            kill_group(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - start
    out_f.seek(0)
    err_f.seek(0)
    return Ran(
        proc.returncode,
        out_f.read().decode("utf-8", "replace"),
        err_f.read().decode("utf-8", "replace"),
        seconds,
        timed_out,
        usage.ru_maxrss if usage else 0,
    )


def tagger(*args, **kwargs) -> Ran:
    return run([PY, "-m", "tagger", *map(str, args)], **kwargs)


def kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


def no_traceback(ran: Ran, what: str = "") -> None:
    expect(TRACEBACK not in ran.err, f"{what} traceback on stderr: {ran.err.strip()[-800:]!r}")
    expect(not ran.timed_out, f"{what} hung: {ran.brief()}")


def refused(ran: Ran, what: str = "", *, words: tuple[str, ...] = ()) -> None:
    """A one-line refusal: exit code 1 (or 2, a usage error), 'Error:' on stderr, no traceback."""
    no_traceback(ran, what)
    expect(ran.rc in (1, 2), f"{what} not refused: {ran.brief()}")
    errors = [line for line in ran.err.splitlines() if line.startswith("Error")]
    expect(errors, f"{what} no 'Error:' line: {ran.brief()}")
    said = " ".join(errors).lower()
    for word in words:
        expect(word.lower() in said, f"{what} the error does not say {word!r}: {errors}")


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_digest(directory) -> dict[str, str]:
    return {p.name: sha(p) for p in sorted(Path(directory).iterdir()) if p.is_file()}


# ---------------------------------------------------------------- fixtures ------------------

_cache: dict = {}


def once(function):
    def wrapper():
        if function.__name__ not in _cache:
            _cache[function.__name__] = function()
        return _cache[function.__name__]

    wrapper.__name__ = function.__name__
    return wrapper


def lines_of(path, count=None) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return lines[:count] if count else lines


def write_lines(path, lines) -> Path:
    path = Path(path)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@once
def dev50() -> Path:
    """50 labelled ICLR 2026 papers: the data of the small fits."""
    return write_lines(WORK / "dev50.jsonl", lines_of(REPO / "data/iclr2026-dev.jsonl", 50))


@once
def three() -> Path:
    return write_lines(WORK / "three.jsonl", lines_of(REPO / "data/iclr2026-dev.jsonl")[100:103])


def fit_small(out=None, *extra, judged=None, timeout=240) -> Ran:
    args = ["fit", *IRIS, "--judged", judged or dev50(), *SMALL, *extra]
    if out is not None:
        args += ["-o", out]
    return tagger(*args, timeout=timeout)


@once
def base_model() -> Path:
    """A model of examples/iclr-areas.yaml fitted on dev50 (and how long the fit took)."""
    out = WORK / "base-model"
    ran = fit_small(out)
    if ran.rc != 0 or not (out / "model.json").is_file():
        raise Fail(f"the base fit failed: {ran.brief()}")
    _cache["fit_seconds"] = ran.seconds
    return out


@once
def static_model() -> Path:
    out = WORK / "static-model"
    ran = fit_small(out, "--embedding-backend", "static")
    if ran.rc != 0 or not (out / "model.json").is_file():
        raise Fail(f"the static fit failed: {ran.brief()}")
    return out


def copy_model(name: str, source: Path | None = None) -> Path:
    target = WORK / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source or base_model(), target)
    return target


def edit_record(model: Path, change) -> None:
    record = json.loads((model / "model.json").read_text())
    change(record)
    (model / "model.json").write_text(json.dumps(record, indent=2))


def reseal(model: Path, name: str) -> None:
    """Make model.json's sha256 of ``name`` match the file again (a forged part)."""
    edit_record(model, lambda r: r["files"].__setitem__(name, sha(model / name)))


def tag_with(model, *extra, timeout=120) -> Ran:
    return tagger("tag", three(), *IRIS, "--model", model, "-w", "1", *extra, timeout=timeout)


def model_is_whole(model: Path) -> str | None:
    """None if ``model`` is a whole model directory (its record and every file it lists, at
    the sha256 it records), else what is wrong."""
    try:
        record = json.loads((model / "model.json").read_text())
    except (OSError, ValueError) as exc:
        return f"no readable model.json ({exc})"
    for name, digest in record.get("files", {}).items():
        if not (model / name).is_file():
            return f"{name} missing"
        if sha(model / name) != digest:
            return f"{name} differs from its sha256"
    return None


@once
def tagged_small() -> Path:
    """The 19 shipped tagged papers (packaged taxonomy): what the reviews judge."""
    target = WORK / "tagged19.jsonl"
    shutil.copyfile(REPO / "examples/tagged/icml2025-abstracts.jsonl", target)
    return target


def tagged_ids() -> list[str]:
    return [json.loads(line)["paper"]["id"] for line in lines_of(tagged_small())]


# ---------------------------------------------------------------- the review server ---------


class Reviewing:
    """`tagger review` running in the background: its URL, token and port, and requests to it
    as the page makes them (the cookie set by the printed URL, the X-Review-Token header)."""

    def __init__(self, tagged, judgments, *extra, timeout=90, expect_url=True):
        self.proc = subprocess.Popen(
            [PY, "-m", "tagger", "review", str(tagged), "--judgments", str(judgments), *extra],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.lines: queue.Queue = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self.token = ""
        self.port = 0
        self.cookie = ""
        if expect_url:
            self._wait_url(timeout)

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace")
            self.err.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _wait_url(self, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if line is None:
                raise Fail(f"review ended before serving: {''.join(self.err)[-600:]!r}")
            found = re.search(r"(http://127\.0\.0\.1:(\d+)/\?token=([\w-]+))", line)
            if found:
                self.url, self.port, self.token = found[1], int(found[2]), found[3]
                return
        self.stop(signal.SIGKILL)
        raise Fail(f"review printed no URL in {timeout}s: {''.join(self.err)[-600:]!r}")

    def wait(self, timeout) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    @property
    def stderr(self) -> str:
        time.sleep(0.2)
        return "".join(self.err)

    def request(
        self, method, path, body=None, headers=None, *, token=True, cookie=True, timeout=20
    ):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        sent = dict(headers or {})
        if token:
            sent.setdefault("X-Review-Token", self.token)
        if cookie and self.cookie:
            sent.setdefault("Cookie", self.cookie)
        data = body if isinstance(body, bytes | type(None)) else json.dumps(body).encode()
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        return response.status, dict(response.getheaders()), payload

    def login(self):
        status, headers, _ = self.request("GET", f"/?token={self.token}", token=False, cookie=False)
        expect(status == 303, f"the printed URL answered {status}, not 303")
        self.cookie = headers.get("Set-Cookie", "").split(";")[0]
        expect(self.cookie, "the printed URL set no cookie")

    def papers(self, start=0, count=50) -> dict:
        status, _, body = self.request("GET", f"/papers?start={start}&count={count}")
        expect(status == 200, f"GET /papers answered {status}: {body[:200]!r}")
        return json.loads(body)

    def save(self, paper_id, revision="", **fields):
        change = {"id": paper_id, "revision": revision, **fields}
        status, _, body = self.request("POST", "/judgment", change)
        try:
            answer = json.loads(body)
        except ValueError:
            answer = {"raw": body[:300]}
        return status, answer

    def stop(self, sig=signal.SIGINT, timeout=30) -> int | None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, sig)
        rc = self.wait(timeout)
        if rc is None:
            kill_group(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        return rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def review_traceback(reviewing: Reviewing, what="review") -> None:
    expect(TRACEBACK not in reviewing.stderr, f"{what}: traceback: {reviewing.stderr[-800:]!r}")


def judgments_path(name: str) -> Path:
    directory = WORK / f"j-{name}"
    directory.mkdir(exist_ok=True)
    return directory / "judgments.jsonl"


def judged_line_ids(path) -> list[str]:
    return [json.loads(line)["id"] for line in lines_of(path) if line.strip()]


# ================================================================= the faults re-checked =====


@check
def check_fit_report_over_judged():
    """`fit --report FILE` where FILE is the --judged file: refused, the file unchanged."""
    judged = write_lines(WORK / "report-judged.jsonl", lines_of(dev50()))
    before = sha(judged)
    ran = fit_small(None, "--report", judged, judged=judged)
    refused(ran, "--report over --judged:")
    expect(sha(judged) == before, "the --judged file was changed")


@check
def check_fit_o_keeps_notes():
    """`fit -o DIR` over a model directory that also holds NOTES.txt: NOTES.txt survives."""
    model = copy_model("notes-model")
    (model / "NOTES.txt").write_text("my notes\n")
    ran = fit_small(model)
    no_traceback(ran)
    expect((model / "NOTES.txt").is_file(), f"NOTES.txt is gone: {ran.brief()}")
    expect((model / "NOTES.txt").read_text() == "my notes\n", "NOTES.txt changed")


@check
def check_fit_kill9_refit_always_whole():
    """kill -9 of a refit replacing a model, at several moments: a whole model stays at -o."""
    model = copy_model("kill-model")
    took = _cache.get("fit_seconds", 25.0)
    for fraction in (0.1, 0.6, 0.9, 0.97, 1.0):
        delay = took * fraction
        proc = subprocess.Popen(
            [PY, "-m", "tagger", "fit", *IRIS, "--judged", str(dev50()), *SMALL, "-o", str(model)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(delay)
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait(30)
        problem = model_is_whole(model)
        expect(problem is None, f"after kill -9 at {delay:.1f}s: {problem}")
    ran = tag_with(model)
    expect(ran.rc == 0, f"tag --model after the kills: {ran.brief()}")
    no_traceback(ran)


@check
def check_fit_o_packaged_model_refused():
    """`fit -o <clone>/tagger/data/model`: refused, the packaged model unchanged."""
    packaged = REPO / "tagger/data/model"
    before = tree_digest(packaged)
    ran = fit_small(packaged)
    refused(ran, "-o the packaged model:")
    expect(tree_digest(packaged) == before, "the packaged model changed")


@check
def check_review_two_pages_stale():
    """Two pages of one review save the same paper: the older page's save is refused (409)."""
    judgments = judgments_path("two-pages")
    with Reviewing(tagged_small(), judgments) as r:
        r.login()
        paper = r.papers()["papers"][0]["id"]
        # both pages read the paper not begun (revision ""); page A saves first
        a, answer_a = r.save(paper, "", notes="page A")
        expect(a == 200, f"page A's save answered {a}: {answer_a}")
        b, answer_b = r.save(paper, "", notes="page B")
        expect(b == 409, f"page B's stale save answered {b}: {answer_b}")
        line = [json.loads(x) for x in lines_of(judgments) if json.loads(x)["id"] == paper][0]
        expect(line["draft"]["notes"] == "page A", f"the file holds {line['draft']['notes']!r}")
        review_traceback(r)


@check
def check_review_second_through_symlink():
    """A second review of one judgments file through a symlink: refused while the first runs;
    the link stays a link and its target gets the changes."""
    judgments = judgments_path("symlink")
    link = judgments.with_name("link.jsonl")
    judgments.write_text("")
    link.symlink_to(judgments)
    with Reviewing(tagged_small(), link) as first:
        first.login()
        second = run(
            [PY, "-m", "tagger", "review", str(tagged_small()), "--judgments", str(judgments)],
            timeout=40,
        )
        expect(
            second.rc == 1 and not second.timed_out,
            f"a second review (by the target's path) was not refused: {second.brief()}",
        )
        third = run(
            [PY, "-m", "tagger", "review", str(tagged_small()), "--judgments", str(link)],
            timeout=40,
        )
        expect(
            third.rc == 1 and not third.timed_out,
            f"a second review (through the link) was not refused: {third.brief()}",
        )
        no_traceback(second)
        no_traceback(third)
        status, answer = first.save(tagged_ids()[0], "", notes="through the link")
        expect(status == 200, f"save answered {status}: {answer}")
    expect(link.is_symlink(), "the link is no longer a symlink")
    expect("through the link" in judgments.read_text(), "the target did not get the change")


@check
def check_review_hand_edit_kept():
    """The judgments file edited by hand during a review: the edit kept and shown on reload."""
    judgments = judgments_path("hand-edit")
    ids = tagged_ids()
    with Reviewing(tagged_small(), judgments, "--order", "file") as r:
        r.login()
        status, answer = r.save(ids[0], "", notes="by the page")
        expect(status == 200, f"save answered {status}: {answer}")
        time.sleep(0.05)
        lines = [json.loads(x) for x in lines_of(judgments)]
        lines[0]["draft"]["notes"] = "edited by hand"
        judgments.write_text("".join(json.dumps(x) + "\n" for x in lines))
        views = r.papers()["views"]
        expect(
            views.get(ids[0], {}).get("notes") == "edited by hand",
            f"a reload shows {views.get(ids[0], {}).get('notes')!r}",
        )
        status, answer = r.save(ids[1], "", notes="another paper")
        expect(status == 200, f"the next save answered {status}: {answer}")
        expect("edited by hand" in judgments.read_text(), "the next save lost the hand edit")
        status, page, _ = r.request("GET", "/")
        expect(status == 200, f"GET / answered {status}")


@check
def check_review_kill9_no_temp_files():
    """kill -9 during saves: the next open leaves no temporary file beside the judgments."""
    judgments = judgments_path("kill9")
    ids = tagged_ids()
    r = Reviewing(tagged_small(), judgments, "--order", "file")
    r.login()
    stop = threading.Event()

    def hammer():
        k = 0
        revisions: dict[str, str] = {}
        while not stop.is_set():
            paper = ids[k % len(ids)]
            try:
                status, answer = r.save(paper, revisions.get(paper, ""), notes="x" * 5000 + str(k))
                if status == 200:
                    revisions[paper] = answer["saved"]["revision"]
            except (OSError, http.client.HTTPException, Fail, ValueError):
                pass
            k += 1

    workers = [threading.Thread(target=hammer, daemon=True) for _ in range(3)]
    for w in workers:
        w.start()
    time.sleep(1.5)
    kill_group(r.proc.pid, signal.SIGKILL)
    stop.set()
    r.proc.wait(10)
    again = Reviewing(tagged_small(), judgments, "--order", "file")
    again.stop()
    review_traceback(again, "the review opened after the kill")
    left = [
        p.name
        for p in judgments.parent.iterdir()
        if p.name.startswith(".") and not p.name.endswith(".lock")
    ]
    expect(not left, f"temporary files left: {left}")
    for line in lines_of(judgments):
        json.loads(line)


@check
def check_review_mode_0600_kept():
    """A judgments file of mode 0600 stays 0600 after a save."""
    judgments = judgments_path("mode")
    judgments.write_text("")
    os.chmod(judgments, 0o600)
    with Reviewing(tagged_small(), judgments) as r:
        r.login()
        status, answer = r.save(tagged_ids()[2], "", notes="private")
        expect(status == 200, f"save answered {status}: {answer}")
    mode = stat.S_IMODE(os.stat(judgments).st_mode)
    expect(mode == 0o600, f"mode after a save: {oct(mode)}")


@check
def check_review_readonly_refused():
    """A judgments file of mode 0444: refused before anything is served."""
    judgments = judgments_path("readonly")
    judgments.write_text("")
    os.chmod(judgments, 0o444)
    ran = tagger("review", tagged_small(), "--judgments", judgments, timeout=40)
    refused(ran, "0444 judgments:")
    expect("Open http" not in ran.err, "it served the page")


def ensure_other_user() -> None:
    if subprocess.run(["id", OTHER_USER], capture_output=True).returncode != 0:
        subprocess.run(
            ["useradd", "-M", "-s", "/bin/sh", OTHER_USER], check=True, capture_output=True
        )


@check
def check_review_other_user_locked_out():
    """Another local user can neither GET the page nor POST a judgment without the secret."""
    ensure_other_user()
    judgments = judgments_path("other-user")
    with Reviewing(tagged_small(), judgments) as r:
        base = f"http://127.0.0.1:{r.port}"
        paper = tagged_ids()[0]
        body = json.dumps({"id": paper, "revision": "", "notes": "intruder"})
        attempts = {
            "GET /": ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", base + "/"],
            "GET /?token=wrong": [
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                base + "/?token=wrong",
            ],
            "GET /papers": [
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                base + "/papers?start=0",
            ],
            "POST /judgment": [
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-d",
                body,
                base + "/judgment",
            ],
        }
        for what, cmd in attempts.items():
            done = subprocess.run(
                ["runuser", "-u", OTHER_USER, "--", *cmd],
                capture_output=True,
                text=True,
                timeout=30,
            )
            expect(
                done.stdout.strip() in ("403", "404"),
                f"{what} as {OTHER_USER} answered {done.stdout.strip()!r} {done.stderr!r}",
            )
    expect(
        not judgments.exists() or "intruder" not in judgments.read_text(),
        "the other user's judgment was saved",
    )


@check
def check_review_device_node_refused():
    """--judgments a device node (a mknod copy of /dev/null): refused, and kept."""
    device = judgments_path("device").with_name("null-copy")
    if device.exists():
        device.unlink()
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    ran = tagger("review", tagged_small(), "--judgments", device, timeout=40)
    refused(ran, "a device node:")
    expect(stat.S_ISCHR(os.lstat(device).st_mode), "the device node was replaced")


@check
def check_review_fifo_refused_promptly():
    """--judgments a FIFO: refused promptly, no hang."""
    fifo = judgments_path("fifo").with_name("fifo")
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    ran = tagger("review", tagged_small(), "--judgments", fifo, timeout=40)
    refused(ran, "a FIFO:")
    expect(ran.seconds < 30, f"took {ran.seconds:.0f}s")
    expect(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")


@check
def check_fit_exclude_judged():
    """--exclude of papers also in --judged: the model is not fitted on them."""
    excluded = write_lines(WORK / "exclude10.jsonl", lines_of(dev50(), 10))
    out = WORK / "exclude-model"
    ran = fit_small(out, "--exclude", excluded)
    no_traceback(ran)
    expect(ran.rc == 0, f"the fit failed: {ran.brief()}")
    record = json.loads((out / "model.json").read_text())
    fitted = record["fitted_on"]
    expect(fitted.get("papers") == 40, f"the record says it was fitted on {fitted.get('papers')}")
    expect(
        fitted.get("judged_excluded") == 10,
        f"the record counts {fitted.get('judged_excluded')} judged papers excluded",
    )
    probe = (
        "import json,sys\nfrom tagger.tagging.model import FittedModel\n"
        "m=FittedModel.load(sys.argv[1])\n"
        "abstracts=[json.loads(l)['abstract'] for l in open(sys.argv[2])]\n"
        "print(json.dumps(m.known(abstracts)))"
    )
    known = run([PY, "-c", probe, str(out), str(excluded)], timeout=120)
    expect(known.rc == 0, f"could not read the model: {known.brief()}")
    kinds = json.loads(known.out)
    expect(not any(kinds), f"the model knows excluded papers as {kinds}")


@check
def check_fit_duplicate_id_judged_differently():
    """One paper id twice, judged differently: refused."""
    lines = lines_of(dev50())
    copy = json.loads(lines[0])
    copy["primary_area"] = "reinforcement learning"
    judged = write_lines(WORK / "dupe.jsonl", lines + [json.dumps(copy)])
    refused(fit_small(None, judged=judged), "a paper id twice:", words=("comes again",))
    other = write_lines(WORK / "dupe-other.jsonl", [json.dumps(copy)])
    ran = tagger("fit", *IRIS, "--judged", dev50(), "--judged", other, *SMALL, timeout=120)
    refused(ran, "a paper id twice in two files:")


@check
def check_fit_copies_held_out_together():
    """The same paper in two judged files under two sources: its copies are held out together
    (the fold split of tagger.fitting.folds, on the papers as the fit reads them)."""
    lines = [json.loads(x) for x in lines_of(REPO / "judged/judged.jsonl", 60)]
    copies = []
    for k, line in enumerate(lines[:20]):
        twin = dict(line, id=f"copy-{k}", source="second-review/2026")
        copies.append(json.dumps(twin))
    first = write_lines(WORK / "copies-a.jsonl", [json.dumps(x) for x in lines])
    second = write_lines(WORK / "copies-b.jsonl", copies)
    probe = (
        "import sys,json\nfrom types import SimpleNamespace as NS\n"
        "from tagger.io.readers import read_papers\n"
        "from tagger.fitting.papers import group_of\n"
        "from tagger.fitting.folds import split\n"
        "items=[NS(paper=p, group=group_of(p)) for f in sys.argv[1:] for p in read_papers(f)]\n"
        "folds=split(items, 2)\n"
        "where={}\n"
        "for k,fold in enumerate(folds):\n"
        "    for i in fold: where[items[i].paper.id]=k\n"
        "print(json.dumps(where))"
    )
    ran = run([PY, "-c", probe, str(first), str(second)], timeout=120)
    if ran.rc != 0 and "read_papers" in ran.err:
        raise Fail(f"probe could not import the reader: {ran.brief()}")
    expect(ran.rc == 0, f"probe failed: {ran.brief()}")
    where = json.loads(ran.out)
    apart = [
        f"copy-{k}" for k, line in enumerate(lines[:20]) if where[f"copy-{k}"] != where[line["id"]]
    ]
    expect(not apart, f"copies held out in another fold than their originals: {apart[:5]}")
    expect(len(set(where.values())) == 2, "the split made one fold: nothing is measured")


@check
def check_fit_every_paper_one_label():
    """Every judged paper with one label: refused."""
    lines = []
    for line in lines_of(dev50()):
        value = json.loads(line)
        value["primary_area"] = "learning theory"
        lines.append(json.dumps(value))
    judged = write_lines(WORK / "one-label.jsonl", lines)
    ran = fit_small(None, judged=judged, timeout=120)
    refused(ran, "one label:")


@check
def check_tag_model_static_space_refused():
    """tag --model with a model fitted with --embedding-backend static, tagging with the
    default backend: refused, naming the backend."""
    ran = tag_with(static_model())
    refused(ran, "a static model with the default backend:", words=("static",))
    ok = tag_with(static_model(), "--embedding-backend", "static")
    no_traceback(ok)
    expect(ok.rc == 0, f"the static model with --embedding-backend static: {ok.brief()}")


@check
def check_eval_model_static_space_refused():
    """eval --model with a static model and the default backend: refused, naming it."""
    ran = tagger("eval", three(), "--scheme", "iclr", *IRIS, "--model", static_model(), timeout=120)
    refused(ran, "eval with a static model:", words=("static",))


@check
def check_tag_model_newer_version_refused():
    """A model whose model.json says tagger_version 99.0.0: refused."""
    model = copy_model("newer-model")
    edit_record(model, lambda r: r.__setitem__("tagger_version", "99.0.0"))
    refused(tag_with(model), "tagger_version 99.0.0:", words=("99.0.0",))


def judged_of_five_sources(each=12) -> list[str]:
    """``each`` papers of five sources of judged/judged.jsonl (the packaged model's own)."""
    sources = [
        "iclr2024-topics",
        "corpus-2020-2023/icml2023",
        "corpus-2020-2023/neurips2020",
        "corpus-2020-2023/iclr2023",
        "corpus-2020-2023/icml2022",
    ]
    taken: dict[str, list[str]] = {name: [] for name in sources}
    for line in lines_of(REPO / "judged/judged.jsonl"):
        source = json.loads(line)["source"]
        if source in taken and len(taken[source]) < each:
            taken[source].append(line)
    return [line for name in sources for line in taken[name]]


@check
def check_fit_before_row_in_sample():
    """A fit on the packaged model's own judged papers (judged/judged.jsonl): the "before" row
    says in sample."""
    judged = write_lines(WORK / "judged60.jsonl", judged_of_five_sources())
    ran = tagger("fit", "--judged", judged, "--folds", "2", "-w", "1", timeout=400)
    no_traceback(ran)
    expect(ran.rc == 0, f"the fit failed: {ran.brief()}")
    before = [line for line in ran.out.splitlines() if line.startswith("| before")]
    expect(before and "in sample" in before[0], f"the before row: {before}")


@check
def check_fit_first_judged_lines_no_traceback():
    """A fit on the first 50 lines of judged/judged.jsonl (three sources, two of them copies
    of one paper list): measured, or refused in one line; never a traceback."""
    judged = write_lines(WORK / "judged-head50.jsonl", lines_of(REPO / "judged/judged.jsonl", 50))
    ran = tagger("fit", "--judged", judged, "--folds", "2", "-w", "1", timeout=400)
    no_traceback(ran)
    expect(ran.rc in (0, 1), f"rc {ran.rc}: {ran.brief()}")


@check
def check_fit_one_review_refused():
    """A fit on one review's judgments (every line one source): refused in one line."""
    lines = []
    for line in lines_of(REPO / "judged/judged.jsonl", 60):
        value = json.loads(line)
        value["source"] = "my-review"
        lines.append(json.dumps(value))
    judged = write_lines(WORK / "one-review.jsonl", lines)
    ran = tagger("fit", "--judged", judged, "--folds", "2", "-w", "1", timeout=300)
    refused(ran, "one source:")
    errors = [line for line in ran.err.splitlines() if line.startswith("Error")]
    expect(len(errors) == 1, f"{len(errors)} error lines: {errors}")


def small_taxonomy(count: int) -> Path:
    names = ["reinforcement learning", "learning theory", "optimization"][:count]
    body = 'version: "1.0.0"\nareas:\n' + "".join(
        f'  - id: a{k}\n    name: "{name}"\n    description: "Papers on {name}."\n'
        for k, name in enumerate(names)
    )
    path = WORK / f"taxonomy-{count}.yaml"
    path.write_text(body)
    return path


@check
def check_fit_taxonomy_of_one_and_two_areas():
    """A taxonomy of one area, and of two: refused, no traceback."""
    for count in (1, 2):
        ran = tagger(
            "fit", "--taxonomy", small_taxonomy(count), "--judged", dev50(), *SMALL, timeout=120
        )
        refused(ran, f"a taxonomy of {count}:", words=("at least 3",))


@check
def check_fit_curve_without_matplotlib():
    """--curve without matplotlib: refused before the fit, no model written."""
    broken = WORK / "no-matplotlib" / "matplotlib"
    broken.mkdir(parents=True, exist_ok=True)
    (broken / "__init__.py").write_text("raise ImportError('no matplotlib here (hostile test)')\n")
    out = WORK / "curve-model"
    ran = tagger(
        "fit",
        *IRIS,
        "--judged",
        dev50(),
        *SMALL,
        "-o",
        out,
        "--curve",
        WORK / "curve.png",
        env={"PYTHONPATH": str(broken.parent)},
        timeout=240,
    )
    refused(ran, "--curve without matplotlib:")
    expect("held out" not in ran.err, f"it fitted first: {ran.err[-400:]!r}")
    expect(not out.exists(), "a model was written")


@check
def check_tag_model_taxonomy_null():
    """A model.json with "taxonomy": null: refused in one line."""
    model = copy_model("null-taxonomy")
    edit_record(model, lambda r: r.__setitem__("taxonomy", None))
    refused(tag_with(model), "taxonomy null:")


NUMPY_EDIT = r"""
import sys, numpy as np
path, width = sys.argv[1], int(sys.argv[2])
data = dict(np.load(path, allow_pickle=False))
rows = data["weights"].shape[0]
data["weights"] = np.zeros((rows, width), dtype=data["weights"].dtype)
np.savez_compressed(path, **data)
"""


@check
def check_tag_model_area_width_wrong():
    """An area model of the wrong width (sha256 resealed): refused in one line."""
    model = copy_model("width-model")
    done = run([PY, "-c", NUMPY_EDIT, str(model / "areas.npz"), "100"], timeout=60)
    expect(done.rc == 0, f"could not rewrite areas.npz: {done.brief()}")
    reseal(model, "areas.npz")
    refused(tag_with(model), "an area model of width 100:")


def npy_header(shape, descr="<i2") -> bytes:
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()


def zip_bomb(model: Path, megabytes=480) -> int:
    """Rewrite ``model``'s areas.npz with 'weights' of ``megabytes`` MB of zeros (compressing
    to about 0.5 MB); its sha256 resealed. The size of the file written."""
    source = model / "areas.npz"
    original = zipfile.ZipFile(source)
    entries = {name: original.read(name) for name in original.namelist()}
    original.close()
    rows = 2
    columns = megabytes * 1_000_000 // (2 * rows)
    target = model / "areas.npz.new"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bomb:
        for name, data in entries.items():
            if name != "weights.npy":
                bomb.writestr(name, data)
        with bomb.open("weights.npy", "w", force_zip64=True) as member:
            member.write(npy_header((rows, columns)))
            block = bytes(1 << 20)
            left = rows * columns * 2
            while left > 0:
                member.write(block[: min(left, len(block))])
                left -= len(block)
    target.replace(source)
    reseal(model, "areas.npz")
    return source.stat().st_size


@check
def check_tag_model_zip_bomb():
    """An areas.npz zip bomb (~0.5 MB unpacking to ~480 MB): refused without the memory."""
    baseline = tag_with(base_model())
    expect(baseline.rc == 0, f"tagging with the base model failed: {baseline.brief()}")
    model = copy_model("bomb-model")
    size = zip_bomb(model)
    ran = tag_with(model)
    refused(ran, f"a zip bomb of {size / 1e6:.1f} MB:")
    grew = (ran.maxrss_kb - baseline.maxrss_kb) / 1024
    expect(grew < 150, f"max RSS {ran.maxrss_kb / 1024:.0f} MB, {grew:.0f} MB above a plain tag")


def tagged_with_min_score(value) -> Path:
    lines = []
    for line in lines_of(tagged_small()):
        record = json.loads(line)
        record["provenance"]["settings"]["min_score"] = value
        lines.append(json.dumps(record))
    return write_lines(WORK / f"min-score-{value}.jsonl", lines)


@check
def check_review_min_score_high():
    """A tagged line whose provenance's min_score is "high", given to review: refused."""
    ran = tagger(
        "review", tagged_with_min_score("high"), "--judgments", judgments_path("high"), timeout=60
    )
    refused(ran, 'min_score "high":')
    expect("Open http" not in ran.err, "it served the page")


@check
def check_review_fragment_malformed():
    """A malformed #fragment (#%E0%A4%A): the page's JS catches decodeURIComponent's URIError
    (read from review.html; no browser here)."""
    html = (REPO / "tagger/data/review.html").read_text()
    calls = [m.start() for m in re.finditer(r"decodeURIComponent\(", html)]
    expect(calls, "the page decodes no fragment")
    for at in calls:
        line = html[html.rfind("\n", 0, at) + 1 : html.find("\n", at)]
        expect(
            re.search(r"\btry\s*\{", line) and "catch" in line,
            f"decodeURIComponent outside try/catch: {line.strip()!r}",
        )


def interrupted(cmd, sig, delay, *, ready=None, timeout=60) -> Ran:
    """Run ``cmd``, send ``sig`` after ``delay`` s (or once stderr holds ``ready``)."""
    err = tempfile.TemporaryFile()  # noqa: SIM115 - read after the child ends, then closed
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
    )
    while time.monotonic() - start < delay + 60:
        if proc.poll() is not None:
            break
        err.seek(0)
        seen = err.read().decode("utf-8", "replace")
        if (ready and ready in seen) or (not ready and time.monotonic() - start >= delay):
            time.sleep(0.3)
            os.kill(proc.pid, sig)
            break
        time.sleep(0.1)
    timed_out = False
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
    err.seek(0)
    return Ran(
        proc.returncode,
        "",
        err.read().decode("utf-8", "replace"),
        time.monotonic() - start,
        timed_out,
    )


@check
def check_fit_interrupt_messages():
    """Ctrl-C and SIGTERM during `fit`: the fit's own message, no --resume hint."""
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        out = WORK / f"interrupted-{sig}"
        cmd = [PY, "-m", "tagger", "fit", *IRIS, "--judged", str(dev50()), *SMALL, "-o", str(out)]
        ran = interrupted(cmd, sig, 6)
        no_traceback(ran, f"signal {sig}:")
        expect(ran.rc == code, f"signal {sig}: rc {ran.rc}, not {code}: {ran.brief()}")
        expect("--resume" not in ran.err, f"signal {sig}: a tagging run's hint: {ran.err[-300:]!r}")
        expect("fit stopped" in ran.err.lower(), f"signal {sig}: {ran.err[-300:]!r}")


@check
def check_review_interrupt_messages():
    """Ctrl-C and SIGTERM during `review`: the review's own message, no --resume hint."""
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        r = Reviewing(tagged_small(), judgments_path(f"signal-{sig}"))
        rc = r.stop(sig)
        err = r.stderr
        expect(TRACEBACK not in err, f"signal {sig}: traceback {err[-600:]!r}")
        expect(rc == code, f"signal {sig}: rc {rc}, not {code}")
        expect("--resume" not in err, f"signal {sig}: a tagging run's hint: {err[-300:]!r}")
        expect("Stopped:" in err, f"signal {sig}: {err[-300:]!r}")


def vm_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):  # the peak resident size
            return int(line.split()[1]) / 1024
    return 0.0


@check
def check_review_10000_papers():
    """A review of 10,000 tagged papers: server RSS well under 200 MB, GET / small and fast."""
    source = lines_of(tagged_small())
    big = WORK / "tagged-10000.jsonl"
    with big.open("w") as out:
        for k in range(10_000):
            record = json.loads(source[k % len(source)])
            record["paper"]["id"] = f"many-{k:05d}"
            out.write(json.dumps(record) + "\n")
    with Reviewing(big, judgments_path("10000"), timeout=240) as r:
        r.login()
        start = time.monotonic()
        status, _, page = r.request("GET", "/")
        took = time.monotonic() - start
        expect(status == 200, f"GET / answered {status}")
        r.papers(9_950)
        rss = vm_rss_mb(r.proc.pid)
        expect(rss < 150, f"peak RSS {rss:.0f} MB")
        expect(len(page) < 400_000, f"the page is {len(page):,} bytes")
        expect(took < 2, f"GET / took {took:.1f}s")
        review_traceback(r)


# ================================================================= further checks ============


@check
def check_fit_report_over_model_json():
    """`fit -o M --report M/model.json` (an old model's own record): refused, or the model at M
    still whole and usable."""
    model = copy_model("report-record")
    ran = fit_small(model, "--report", model / "model.json")
    no_traceback(ran)
    problem = model_is_whole(model)
    expect(problem is None, f"the model at -o is broken: {problem} ({ran.brief()})")
    tagged = tag_with(model)
    expect(tagged.rc == 0, f"tag --model afterwards: {tagged.brief()}")


@check
def check_fit_report_inside_new_model():
    """`fit -o M --report M/figures.md`: refused, or M stays a model tag --model takes and a
    refit into M is not then refused."""
    model = WORK / "report-inside"
    ran = fit_small(model, "--report", model / "figures.md")
    no_traceback(ran)
    if ran.rc != 0:
        refused(ran, "a report inside -o:")
        return
    tagged = tag_with(model)
    expect(tagged.rc == 0, f"tag --model with a report inside: {tagged.brief()}")
    again = fit_small(model)
    expect(
        again.rc == 0,
        f"the fit wrote {model / 'figures.md'}, and then a refit into "
        f"its own model is refused: {again.brief()}",
    )


@check
def check_fit_report_into_package():
    """`fit --report <clone>/tagger/data/model/weigher.json`: refused; the package unchanged."""
    packaged = REPO / "tagger/data/model"
    before = tree_digest(packaged)
    ran = fit_small(None, "--report", packaged / "weigher.json")
    no_traceback(ran)
    after = tree_digest(packaged)
    subprocess.run(["git", "checkout", "--", "tagger/data/model"], cwd=REPO, capture_output=True)
    expect(after == before, f"the packaged model was overwritten ({ran.brief()})")
    refused(ran, "--report into the package:")


@check
def check_fit_o_symlink_to_model():
    """`fit -o LINK` where LINK is a symlink to a model directory: the link stays a link, its
    target gets the new model, and nothing is left beside it."""
    target = copy_model("linked-model")
    link = WORK / "links" / "model-link"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(target)
    before = sha(target / "model.json")
    judged = write_lines(WORK / "dev45.jsonl", lines_of(dev50(), 45))
    ran = fit_small(link, judged=judged)
    no_traceback(ran)
    if ran.rc != 0:
        refused(ran, "-o a symlink:")
        return
    stray = [p.name for p in link.parent.iterdir() if p.name != link.name]
    expect(link.is_symlink(), f"the link was replaced by a directory; beside it: {stray}")
    expect(sha(target / "model.json") != before, "the link's target still holds the old model")
    expect(not stray, f"left beside the link: {stray}")


@check
def check_fit_o_symlink_into_package():
    """`fit -o LINK` where LINK points into the package's model: refused, unchanged."""
    packaged = REPO / "tagger/data/model"
    link = WORK / "package-link"
    if not link.is_symlink():
        link.symlink_to(packaged)
    before = tree_digest(packaged)
    ran = fit_small(link)
    refused(ran, "-o a link to the package:")
    expect(tree_digest(packaged) == before, "the packaged model changed")
    expect(link.is_symlink(), "the link was replaced")


@check
def check_fit_o_existing_file():
    """`fit -o FILE` where FILE is a file of the user's: refused, the file unchanged."""
    victim = write_lines(WORK / "victim.txt", ["precious"])
    ran = fit_small(victim)
    refused(ran, "-o a file:")
    expect(victim.read_text() == "precious\n", "the file changed")


@check
def check_fit_judged_fifo_no_hang():
    """`fit --judged FIFO` (no writer): refused promptly, no hang."""
    fifo = WORK / "judged-fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    ran = tagger("fit", *IRIS, "--judged", fifo, *SMALL, timeout=40)
    refused(ran, "--judged a FIFO:")


@check
def check_fit_judged_empty():
    """`fit --judged` an empty file, and one with a broken line: one-line refusals."""
    empty = write_lines(WORK / "empty.jsonl", [])
    refused(fit_small(None, judged=empty, timeout=120), "an empty --judged:")
    broken = write_lines(WORK / "broken.jsonl", lines_of(dev50(), 40) + ['{"id": "x", '])
    ran = fit_small(None, judged=broken, timeout=120)
    no_traceback(ran)
    expect(
        ran.rc != 0 or "line 41" in ran.err or "record 41" in ran.err,
        f"a broken line 41 was passed over silently: {ran.brief()}",
    )


@check
def check_fit_labels_missing_field():
    """--labels naming a field no paper has: refused in one line."""
    ran = tagger(
        "fit",
        *IRIS,
        "--judged",
        dev50(),
        "--labels",
        "no_such_field",
        "--folds",
        "2",
        "-w",
        "1",
        timeout=120,
    )
    refused(ran, "--labels of a missing field:")


@check
def check_fit_labels_not_areas():
    """--labels whose values are no area of the taxonomy: refused, naming one."""
    lines = []
    for line in lines_of(dev50()):
        value = json.loads(line)
        value["bogus"] = "quantum basket weaving"
        lines.append(json.dumps(value))
    judged = write_lines(WORK / "bogus-labels.jsonl", lines)
    ran = tagger(
        "fit",
        *IRIS,
        "--judged",
        judged,
        "--labels",
        "bogus",
        "--folds",
        "2",
        "-w",
        "1",
        timeout=120,
    )
    refused(ran, "labels that are no area:", words=("quantum basket weaving",))


@check
def check_fit_exclude_everything():
    """--exclude the --judged file itself (every judged paper excluded): refused in one line."""
    ran = fit_small(None, "--exclude", dev50(), timeout=120)
    refused(ran, "everything excluded:")


@check
def check_fit_more_folds_than_groups():
    """--folds 100 on 50 papers: refused or measured, never a traceback."""
    ran = tagger(
        "fit",
        *IRIS,
        "--judged",
        dev50(),
        "--labels",
        "primary_area",
        "--folds",
        "100",
        "-w",
        "1",
        timeout=300,
    )
    no_traceback(ran)
    expect(ran.rc in (0, 1), f"rc {ran.rc}: {ran.brief()}")


@check
def check_tag_model_part_missing():
    """tag --model with weigher.json deleted: refused in one line naming the file."""
    model = copy_model("missing-part")
    (model / "weigher.json").unlink()
    refused(tag_with(model), "a missing part:", words=("weigher.json",))


@check
def check_tag_model_part_is_fifo():
    """tag --model with weigher.json replaced by a FIFO (no writer): refused, no hang."""
    model = copy_model("fifo-part")
    (model / "weigher.json").unlink()
    os.mkfifo(model / "weigher.json")
    refused(tag_with(model, timeout=60), "a FIFO part:")


@check
def check_tag_model_part_huge_sparse():
    """tag --model with areas.npz replaced by a 2 GB sparse file: refused without reading it
    into memory."""
    baseline = tag_with(base_model())
    model = copy_model("sparse-part")
    with (model / "areas.npz").open("r+b") as file:
        file.truncate(2 << 30)
    ran = tag_with(model, timeout=120)
    refused(ran, "a 2 GB part:")
    grew = (ran.maxrss_kb - baseline.maxrss_kb) / 1024
    expect(grew < 300, f"max RSS {ran.maxrss_kb / 1024:.0f} MB, {grew:.0f} MB above a plain tag")


@check
def check_tag_model_record_garbage():
    """tag --model whose model.json is not JSON, a list, or says format 99: one-line refusals."""
    for name, text in (
        ("notjson", "{nope"),
        ("list", "[1, 2]"),
        ("format", json.dumps({"format": 99, "files": {}})),
    ):
        model = copy_model(f"garbage-{name}")
        (model / "model.json").write_text(text)
        refused(tag_with(model), f"model.json {name}:")


@check
def check_tag_model_other_taxonomy_said():
    """tag --model M (fitted for examples/iclr-areas.yaml) with the packaged taxonomy: refused,
    or it says the model does not serve it (not a silent tag by another taxonomy's model)."""
    ran = tagger("tag", three(), "--model", base_model(), "-w", "1", timeout=120)
    no_traceback(ran)
    said = ran.err.lower()
    expect(
        ran.rc != 0 or "model" in said and ("not" in said or "other" in said),
        f"tagged silently with another taxonomy's model: {ran.brief()}",
    )


@check
def check_retag_model_static_refused():
    """retag --model with a static model, lines tagged with the default backend: refused."""
    tagged = WORK / "three-tagged.jsonl"
    ran = tagger("tag", three(), *IRIS, "--model", base_model(), "-w", "1", "-o", tagged)
    expect(ran.rc == 0, f"could not tag: {ran.brief()}")
    out = WORK / "retagged-static.jsonl"
    ran = tagger("retag", tagged, *IRIS, "--model", static_model(), "-o", out, timeout=120)
    no_traceback(ran)
    expect(ran.rc != 0, f"retag with a static model was accepted: {ran.brief()}")
    expect("static" in ran.err, f"the refusal does not name the backend: {ran.brief()}")


@check
def check_retag_model_newer_refused():
    """retag --model with a model of tagger_version 99.0.0: refused; eval likewise."""
    model = copy_model("newer-retag")
    edit_record(model, lambda r: r.__setitem__("tagger_version", "99.0.0"))
    tagged = WORK / "three-tagged.jsonl"
    if not tagged.exists():
        tagger("tag", three(), *IRIS, "--model", base_model(), "-w", "1", "-o", tagged)
    refused(tagger("retag", tagged, *IRIS, "--model", model, timeout=120), "retag 99.0.0:")
    refused(
        tagger("eval", three(), "--scheme", "iclr", *IRIS, "--model", model, timeout=120),
        "eval 99.0.0:",
    )


@check
def check_review_csrf_and_rebinding():
    """The review server refuses a POST without the page's header (a form elsewhere, with the
    cookie), from another Origin, and any request naming another Host (DNS rebinding)."""
    judgments = judgments_path("csrf")
    paper = tagged_ids()[0]
    with Reviewing(tagged_small(), judgments) as r:
        r.login()
        change = {"id": paper, "revision": "", "notes": "forged"}
        tries = {
            "no X-Review-Token": dict(token=False),
            "Origin evil": dict(headers={"Origin": "http://evil.example"}),
            "Origin null": dict(headers={"Origin": "null"}),
            "Host evil": dict(headers={"Host": f"evil.example:{r.port}"}),
        }
        for what, how in tries.items():
            status, _, body = r.request("POST", "/judgment", change, **how)
            expect(status == 403, f"POST with {what} answered {status}: {body[:200]!r}")
        status, _, _ = r.request("GET", "/", headers={"Host": f"evil.example:{r.port}"})
        expect(status == 403, f"GET / with Host evil answered {status}")
        status, _, _ = r.request("GET", "/papers?start=0", token=False)
        expect(status == 403, f"GET /papers without the header answered {status}")
        status, _, _ = r.request("GET", "/", cookie=False, token=False)
        expect(status == 403, f"GET / without the cookie answered {status}")
        review_traceback(r)
    expect(not judgments.exists() or "forged" not in judgments.read_text(), "a forged save")


@check
def check_review_bad_bodies():
    """Hostile bodies to /judgment (deep nesting, wrong types, unknown keys, notes too long,
    an unknown area, another paper, no Content-Length, bad numbers to /papers): 4xx, no
    traceback, file unchanged, server alive."""
    judgments = judgments_path("bodies")
    paper = tagged_ids()[0]
    with Reviewing(tagged_small(), judgments) as r:
        r.login()
        bodies = {
            "deep": b"[" * 200_000 + b"]" * 200_000,
            "list": [1, 2],
            "areas string": {"id": paper, "revision": "", "areas": "rl"},
            "unknown key": {"id": paper, "revision": "", "evil": 1},
            "notes long": {"id": paper, "revision": "", "notes": "n" * 20_000},
            "unknown area": {"id": paper, "revision": "", "areas": ["no.such.area"]},
            "other paper": {"id": "not-a-paper", "revision": ""},
            "revision int": {"id": paper, "revision": 5},
            "done string": {"id": paper, "revision": "", "done": "yes"},
            "bad utf-8": b'{"id": "\xff\xfe", "revision": ""}',
        }
        for what, body in bodies.items():
            status, _, answer = r.request("POST", "/judgment", body)
            expect(400 <= status < 500, f"{what}: answered {status}: {answer[:200]!r}")
        for query in ("start=abc", "count=-5", "start=99999999999999999999999", "id=&count=0"):
            status, _, answer = r.request("GET", f"/papers?{query}")
            expect(status in (200, 400), f"/papers?{query}: answered {status}: {answer[:200]!r}")
        conn = socket.create_connection(("127.0.0.1", r.port), timeout=10)
        conn.sendall(
            f"POST /judgment HTTP/1.1\r\nHost: 127.0.0.1:{r.port}\r\n"
            f"X-Review-Token: {r.token}\r\n\r\n".encode()
        )
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
        conn.close()
        expect(b" 400 " in reply or b" 411 " in reply, f"no Content-Length: {reply[:80]!r}")
        status, _, _ = r.request("GET", "/../../etc/passwd")
        expect(status in (403, 404), f"GET /../../etc/passwd answered {status}")
        r.papers()
        review_traceback(r)
    held = judgments.read_text() if judgments.exists() else ""
    expect(not held.strip(), f"a refused body was saved: {held[:200]!r}")


@check
def check_review_slow_clients():
    """A POST that never sends its body, and 100 idle connections: the page still answers at
    once, and the server stays small."""
    with Reviewing(tagged_small(), judgments_path("slow")) as r:
        r.login()
        slow = socket.create_connection(("127.0.0.1", r.port), timeout=10)
        slow.sendall(
            f"POST /judgment HTTP/1.1\r\nHost: 127.0.0.1:{r.port}\r\n"
            f"X-Review-Token: {r.token}\r\nContent-Length: 1000\r\n\r\n".encode()
        )
        idle = []
        for _ in range(100):
            try:
                idle.append(socket.create_connection(("127.0.0.1", r.port), timeout=10))
            except OSError:
                break
        start = time.monotonic()
        status, answer = r.save(tagged_ids()[3], "", notes="while others wait")
        took = time.monotonic() - start
        expect(status == 200, f"a save among idle connections answered {status}: {answer}")
        expect(took < 3, f"a save took {took:.1f}s among idle connections")
        rss = vm_rss_mb(r.proc.pid)
        expect(rss < 200, f"peak RSS {rss:.0f} MB with 100 idle connections")
        for sock in [slow, *idle]:
            sock.close()
        review_traceback(r)
        start = time.monotonic()
        rc = r.stop(signal.SIGINT, timeout=60)
        took = time.monotonic() - start
        expect(rc == 130 and took < 5, f"Ctrl-C after 100 connections: rc {rc} in {took:.0f}s")


@check
def check_review_client_disconnect_no_traceback():
    """A browser that drops its connection before the answer (a tab closed during a fetch):
    no traceback in the review's terminal, and the server goes on."""
    with Reviewing(tagged_small(), judgments_path("disconnect")) as r:
        r.login()
        for _ in range(5):
            sock = socket.create_connection(("127.0.0.1", r.port), timeout=10)
            sock.sendall(
                f"GET /papers?start=0&count=500 HTTP/1.1\r\nHost: 127.0.0.1:{r.port}\r\n"
                f"X-Review-Token: {r.token}\r\n\r\n".encode()
            )
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()  # a reset, as a closed tab sends
        time.sleep(1)
        r.papers()
        review_traceback(r)


@check
def check_review_stops_promptly_with_open_connections():
    """Ctrl-C while a POST waits for its body and a connection idles: the review stops at once
    with its own message, not after the connections time out."""
    with Reviewing(tagged_small(), judgments_path("stop-open")) as r:
        r.login()
        slow = socket.create_connection(("127.0.0.1", r.port), timeout=10)
        slow.sendall(
            f"POST /judgment HTTP/1.1\r\nHost: 127.0.0.1:{r.port}\r\n"
            f"X-Review-Token: {r.token}\r\nContent-Length: 1000\r\n\r\n".encode()
        )
        idle = socket.create_connection(("127.0.0.1", r.port), timeout=10)
        time.sleep(0.5)
        start = time.monotonic()
        rc = r.stop(signal.SIGINT, timeout=40)
        took = time.monotonic() - start
        slow.close()
        idle.close()
        expect(rc == 130, f"rc {rc} after Ctrl-C ({took:.0f}s)")
        expect(took < 5, f"Ctrl-C took {took:.0f}s to stop the review")
        expect("Stopped:" in r.stderr, f"no 'Stopped:' line: {r.stderr[-300:]!r}")
        review_traceback(r)


@check
def check_review_judgments_is_the_input():
    """review FILE --judgments FILE (the tagged file itself, or a link to it): refused, FILE
    unchanged."""
    tagged = WORK / "self-tagged.jsonl"
    shutil.copyfile(tagged_small(), tagged)
    before = sha(tagged)
    refused(tagger("review", tagged, "--judgments", tagged, timeout=60), "--judgments = FILE:")
    link = WORK / "self-link.jsonl"
    if not link.is_symlink():
        link.symlink_to(tagged)
    refused(tagger("review", tagged, "--judgments", link, timeout=60), "--judgments -> FILE:")
    expect(sha(tagged) == before, "the tagged file changed")


@check
def check_review_other_files_judgments():
    """--judgments a judgments file of another tagged file (judged/judged.jsonl's lines):
    refused before serving, the file unchanged."""
    other = write_lines(
        WORK / "other-judgments.jsonl", lines_of(REPO / "judged/judged.jsonl")[100:110]
    )
    before = sha(other)
    ran = tagger("review", tagged_small(), "--judgments", other, timeout=60)
    refused(ran, "judgments of other papers:")
    expect(sha(other) == before, "the other judgments file changed")


@check
def check_review_port_in_use():
    """--port of a port in use: one line, no traceback."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        ran = tagger(
            "review",
            tagged_small(),
            "--judgments",
            judgments_path("port"),
            "--port",
            port,
            timeout=60,
        )
    finally:
        holder.close()
    refused(ran, "a port in use:", words=(str(port),))


@check
def check_review_broken_hand_edit_refuses_saves():
    """A hand edit that breaks the judgments file: saves refused (409, naming the line), the
    broken file not overwritten, no traceback."""
    judgments = judgments_path("broken-edit")
    ids = tagged_ids()
    with Reviewing(tagged_small(), judgments) as r:
        r.login()
        status, _ = r.save(ids[0], "", notes="first")
        expect(status == 200, f"the first save answered {status}")
        with judgments.open("a") as file:
            file.write('{"id": "half a line\n')
        broken = judgments.read_bytes()
        status, answer = r.save(ids[1], "", notes="second")
        expect(status in (400, 409), f"a save over a broken file answered {status}: {answer}")
        expect("line 2" in json.dumps(answer), f"the answer names no line: {answer}")
        expect(judgments.read_bytes() == broken, "the broken file was overwritten")
        status, _, _ = r.request("GET", "/")
        expect(status == 409, f"GET / over a broken file answered {status}")
        review_traceback(r)


# ================================================================= main =====================


def main() -> int:
    print(f"# tagger at {REPO}; scratch in {WORK}", flush=True)
    started = time.monotonic()
    for function in CHECKS:
        name = function.__name__.removeprefix("check_")
        if ONLY and name not in ONLY:
            continue
        t0 = time.monotonic()
        try:
            function()
        except Fail as exc:
            RESULTS.append((name, False, str(exc)))
            print(f"FAIL {name}: {exc}  [{time.monotonic() - t0:.0f}s]", flush=True)
        except Exception as exc:  # the check itself broke: a FAIL that says so
            where = traceback.format_exc().strip().splitlines()[-3:]
            RESULTS.append((name, False, f"{type(exc).__name__}: {exc}"))
            print(
                f"FAIL {name}: the check broke: {type(exc).__name__}: {exc} {where}  "
                f"[{time.monotonic() - t0:.0f}s]",
                flush=True,
            )
        else:
            RESULTS.append((name, True, ""))
            print(f"PASS {name}  [{time.monotonic() - t0:.0f}s]", flush=True)
    passed = sum(ok for _, ok, _ in RESULTS)
    print(
        f"\n{passed} passed, {len(RESULTS) - passed} failed of {len(RESULTS)} checks "
        f"in {time.monotonic() - started:.0f}s",
        flush=True,
    )
    return 0 if passed == len(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
