"""tagger review: the judgments store worked out by hand (drafts and judged lines, what it refuses,
a failed write, a file of other papers, reopening), the order of papers, the server's refusals;
and, in a real headless Chromium (Debian's package), ten papers judged by keyboard, a server
killed mid-review that loses nothing, and a review resumed."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from tagger.cli import main
from tagger.corpus.judged import Judgment, judgments_of
from tagger.corpus.judgments import TYPES, JudgmentStore
from tagger.corpus.review import Review, review_order, uncertainty
from tagger.errors import InputError, TaggerError
from tagger.io.readers import read_papers
from tagger.io.tagged import read_tagged
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import DATA, MINI_TAXONOMY, ROOT, tagged_record, write_tagged
from .test_report import CHROMIUM_FLAGS
from .test_report import chromium_path as chromium_path  # the fixture, shared

SAMPLE = DATA / "suggest" / "iclr2024-sample.jsonl"  # 30 papers as `tagger tag` wrote them
MINI = load_taxonomy(MINI_TAXONOMY)
ABSTRACT = "Multi-agent reinforcement learning on graphs."


def _records():
    return [
        tagged_record(
            "p1",
            [(["rl"], 0.9), (["graphs", "graphs.gnn"], 0.72)],
            abstract=ABSTRACT,
            title="One",
            venue="ICLR",
            year=2025,
            facets=[["type", "type.theory"]],
        ),
        tagged_record("p2", [(["graphs"], 0.5)], abstract="Graphs.", source="lab/2025"),
    ]


def _store(tmp_path, records=None):
    return JudgmentStore.open(tmp_path / "j.jsonl", records or _records(), MINI, source="mine")


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---- the store ------------------------------------------------------------------------------


def test_the_store_writes_drafts_and_judgments_in_the_judged_format(tmp_path):
    store = _store(tmp_path)
    path = store.path
    # A paper begun: a draft, which eval and the fit skip; notes exactly as given.
    view = store.save("p1", rejected=["graphs.gnn"], type=["theory"], notes=" hard <b>call</b>\n")
    assert view == {
        "areas": [],
        "acceptable": [],
        "rejected": ["graphs.gnn"],
        "main": [],
        "type": ["theory"],
        "notes": " hard <b>call</b>\n",
        "done": False,
    }
    paper = {"id": "p1", "source": "mine", "venue": "ICLR", "year": 2025, "title": "One"}
    assert _lines(path) == [
        {
            **paper,
            "abstract": ABSTRACT,
            "draft": {
                "areas": [],
                "main": [],
                "acceptable": [],
                "type": ["theory"],
                "rejected": ["graphs.gnn"],
                "notes": " hard <b>call</b>\n",
            },
        }
    ]
    assert Judgment.of_paper(next(iter(read_papers(path)))) is None
    # Done: the rejected tag left out, the main area the first accepted in the tagger's order.
    store.save("p1", rejected=["graphs.gnn"], type=["theory"], notes="n", done=True)
    # Done with an area added and one tag undecided: the tag is accepted, and is the main one.
    view = store.save("p2", areas=["rl.multi-agent"], type=["method", "dataset"], done=True)
    assert view["areas"] == ["rl.multi-agent", "graphs"] and view["main"] == ["graphs"]
    lines = _lines(path)
    assert [list(line) for line in lines] == [
        ["id", "source", "venue", "year", "title", "abstract", "judged"]
    ] * 2
    assert [line["judged"] for line in lines] == [
        {"areas": ["rl"], "main": ["rl"], "acceptable": [], "type": ["theory"], "notes": "n"},
        {
            "areas": ["rl.multi-agent", "graphs"],
            "main": ["graphs"],
            "acceptable": [],
            "type": ["method", "dataset"],
            "notes": "",
        },
    ]
    assert lines[1]["source"] == "lab/2025"  # a paper's own source is kept
    # What eval and the fit read.
    read = judgments_of(read_papers(path), str(path))
    assert read["p2"] == Judgment(
        areas=("rl.multi-agent", "graphs"), main=("graphs",), types=("method", "dataset")
    )
    # Rewriting a paper rewrites its line in place; nothing but the file and its lock is left.
    store.save("p1", areas=["rl", "graphs.gnn"], main=["graphs.gnn"], type=["theory"], done=True)
    assert [line["id"] for line in _lines(path)] == ["p1", "p2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".j.jsonl.lock", "j.jsonl"]
    views = store.views()
    store.close()
    # Reopened: the same views, done papers done.
    again = _store(tmp_path)
    assert again.views() == views and again.done == {"p1", "p2"}
    assert again.view("p1")["rejected"] == [] and again.view("p2")["rejected"] == []
    again.close()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"areas": ["nope"]}, "paper 'p1': area 'nope' is not in "),
        (
            {"areas": ["type.theory"]},
            "paper 'p1': 'type.theory' is a contribution type: see 'type'",
        ),
        ({"areas": ["rl"], "rejected": ["rl"]}, "paper 'p1': area 'rl' is both in 'areas' and"),
        ({"rejected": ["graphs"]}, "paper 'p1': only a tag can be rejected; 'graphs' is not one"),
        ({"main": ["rl"]}, "paper 'p1': 'main' must be one or two of its areas. Got ['rl']"),
        ({"type": ["novelty"]}, "paper 'p1': 'novelty' is no contribution type; they are method,"),
        ({"areas": "rl"}, "paper 'p1': 'areas' must be a list of names. Got 'rl' instead."),
        ({"notes": 3}, "paper 'p1': 'notes' must be text of up to 10,000 characters"),
        (
            {"rejected": ["rl", "graphs.gnn"], "type": ["theory"], "done": True},
            "paper 'p1' cannot be done with no area: accept a tag, or add the area it is about",
        ),
        ({"done": True}, "paper 'p1' cannot be done with no contribution type: mark one of"),
        ({"id": "p9"}, "paper 'p9' is not one of the papers under review"),
    ],
)
def test_what_the_store_refuses(tmp_path, change, message):
    store = _store(tmp_path)
    with pytest.raises(TaggerError) as refused:
        store.save(change.pop("id", "p1"), **change)
    assert str(refused.value).startswith(message)
    assert not store.path.exists() and store.views() == {}
    store.close()


def test_a_write_that_fails_changes_nothing(tmp_path, monkeypatch):
    store = _store(tmp_path)
    store.save("p1", type=["theory"])
    before = store.path.read_bytes()

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        store.save("p1", type=["theory"], done=True)
    assert store.path.read_bytes() == before and store.done == set()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".j.jsonl.lock", "j.jsonl"]
    store.close()


def _line(paper_id="p1", abstract=ABSTRACT, **judged):
    judged = {"areas": ["rl"], "main": ["rl"], "type": ["theory"], **judged}
    return json.dumps({"id": paper_id, "abstract": abstract, "judged": judged})


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [_line("x1"), _line(), _line("x2")],
            "j.jsonl: 2 of its lines judge papers that mine does not hold (the first on line 1: "
            "'x1'): it holds judgments of other papers; give --judgments a new file, or review "
            "the tagged file they were judged from",
        ),
        (
            [_line(abstract="Another version.")],
            "j.jsonl line 1: paper 'p1': its abstract is not the one in mine: these are "
            "judgments of another version of the paper; give --judgments a new file",
        ),
        (
            [_line(), "", _line()],
            "j.jsonl line 3: paper 'p1' comes again: `tagger review` writes one line a paper; "
            "keep the one to go on with",
        ),
        (["[1, 2]"], "j.jsonl line 1: not a judged paper: a line is an object with an 'id'"),
        (["{"], "j.jsonl line 1: not a line of JSON ("),
        (
            [_line(areas="rl")],
            "j.jsonl line 1: paper 'p1': 'judged.areas': must be a list (judged/README.md",
        ),
        (
            [_line(areas=["rl"], main=["graphs"])],
            "j.jsonl line 1: paper 'p1': 'main' must be one or two of its areas. Got ['graphs']",
        ),
        (
            [json.dumps({"id": "p1", "abstract": ABSTRACT})],
            "j.jsonl line 1: neither 'judged' nor 'draft' holds a judgment (judged/README.md",
        ),
    ],
)
def test_a_judgments_file_that_is_not_this_reviews_is_refused(tmp_path, lines, message):
    path = tmp_path / "j.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as refused:
        _store(tmp_path)
    assert str(refused.value).replace(str(tmp_path) + "/", "").startswith(message)
    assert path.read_text() == "\n".join(lines) + "\n"
    path.write_text("")
    _store(tmp_path).close()  # the refusal let go of the file's lock


def test_two_reviews_cannot_write_one_file(tmp_path):
    first = _store(tmp_path)
    with pytest.raises(TaggerError) as refused:
        _store(tmp_path)
    assert str(refused.value) == (
        f"{tmp_path / 'j.jsonl'} is being written by another `tagger review` (it holds "
        ".j.jsonl.lock): stop that one first, or choose another file"
    )
    first.close()
    _store(tmp_path).close()


def test_the_least_certain_papers_come_first():
    """Distance of the score nearest the run's threshold (0.7 unless its lines say otherwise);
    ties in file order; a paper with no tag first."""
    records = [
        tagged_record("far", [(["rl"], 0.99)]),
        tagged_record("near", [(["rl"], 0.99), (["graphs"], 0.68)]),
        tagged_record("none", []),
        tagged_record("also-far", [(["rl"], 0.4)], facets=[(["type", "type.theory"], 0.99)]),
        tagged_record("own-threshold", [(["rl"], 0.52)]),
    ]
    records[4].provenance = records[4].provenance.model_copy(
        update={"settings": {"min_score": 0.5}}
    )
    assert [round(uncertainty(r), 2) for r in records] == [0.29, 0.02, 0.0, 0.29, 0.02]
    assert review_order(records) == [2, 1, 4, 0, 3]
    assert review_order(records, "file") == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match=r"must be one of uncertain, file. Got 'x' instead."):
        review_order(records, "x")


# ---- the server -----------------------------------------------------------------------------


def _request(server, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    answer = response.status, dict(response.getheaders()), response.read()
    connection.close()
    return answer


def test_the_server_takes_changes_from_its_page_only(tmp_path):
    tagged = write_tagged(tmp_path / "t.jsonl", _records())
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
        assert _lines(tmp_path / "j.jsonl")[0]["judged"]["main"] == ["rl"]


def test_review_command_errors(tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(json.dumps({"id": "a", "abstract": "Some words."}) + "\n")
    tagged = write_tagged(tmp_path / "t.jsonl", _records())
    other = tmp_path / "other.jsonl"
    other.write_text(_line("zz") + "\n")
    runner = CliRunner()

    def run(*args):
        return runner.invoke(main, ["review", *map(str, args), "--taxonomy", str(MINI_TAXONOMY)])

    result = run(papers, "--judgments", tmp_path / "j.jsonl")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {papers} line 1: not a line of tagged JSONL")
    result = run(tagged, "--judgments", other)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {other}: a line judges papers that t does not hold (the first on line 1: 'zz'): "
        "it holds judgments of other papers; give --judgments a new file, or review the tagged "
        "file they were judged from\n",
    )
    result = run(tagged, "--judgments", tagged)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: --judgments {tagged} is the input {tagged}: writing it would destroy what is "
        "read or written there; choose another file\n",
    )
    assert run(tagged).exit_code == 2  # --judgments is required


# ---- in a real browser ----------------------------------------------------------------------


def _browser(sync_api, pw, chromium_path):
    browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_FLAGS)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems, requests = [], []
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    return browser, page, problems, requests


def _types_after(facets, toggled):
    proposed = {f.id.removeprefix("type.") for f in facets}
    return [t for t in TYPES if (t in proposed) != (t in toggled)]


@pytest.mark.slow
def test_judging_ten_papers_by_keyboard(tmp_path, chromium_path):
    """j/k, a, r, m, 1-6, / to add an area, e for notes, d for done: ten papers judged, ten lines
    in the judged format, read back as the fit reads them; least certain first."""
    sync_api = pytest.importorskip("playwright.sync_api")
    records = {r.paper.id: r for r in read_tagged(SAMPLE)}
    path = tmp_path / "judged.jsonl"
    review = Review.open(SAMPLE, path)
    expected = {}
    with review.serve() as server, sync_api.sync_playwright() as pw:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        browser, page, problems, requests = _browser(sync_api, pw, chromium_path)
        page.goto(server.url)
        page.wait_for_selector("body[data-ready=true]")
        order = page.locator("#list li").evaluate_all("els => els.map(e => e.dataset.id)")
        distances = [uncertainty(records[paper_id]) for paper_id in order]
        assert len(order) == 30 and distances == sorted(distances)
        for n in range(10):
            paper_id = page.get_attribute("body", "data-paper")
            assert paper_id == order[n]
            record = records[paper_id]
            tags = [t.id for t in record.tags]
            assert tags, paper_id
            # The first tag is selected: its evidence is marked as such, and is the paper's text.
            marked = page.locator("#abstract mark.sel, #title mark.sel").all_text_contents()
            said = {e.text for e in record.tags[0].evidence}
            assert bool(marked) == bool(said)
            assert all(any(m in text for text in said) for m in marked)
            page.keyboard.press("a")
            page.keyboard.press("m")
            if len(tags) > 1:
                page.keyboard.press("j")
                page.keyboard.press("r")
            added = []
            if n == 0:  # an area the tagger missed, found by words of its name
                page.keyboard.press("/")
                page.keyboard.type("offline reinforce")
                first = page.locator("#suggestions li").first
                sync_api.expect(first).to_have_attribute("data-area", "rl.offline")
                page.keyboard.press("Enter")
                added = ["rl.offline"]
            notes = ""
            if n == 1:
                notes = 'a hard call: "</script>" is text'
                page.keyboard.press("e")
                page.keyboard.type(notes)
                page.keyboard.press("Escape")
            toggled = {"dataset"} | ({"survey"} if n % 2 else set())
            for name in toggled:
                page.keyboard.press(str(TYPES.index(name) + 1))
            page.keyboard.press("d")
            sync_api.expect(page.locator("body")).not_to_have_attribute("data-paper", paper_id)
            rejected = tags[1:2]
            accepted = [tags[0], *added]
            expected[paper_id] = {
                "areas": accepted + [t for t in tags if t not in accepted + rejected],
                "main": [tags[0]],
                "acceptable": [],
                "type": _types_after(record.facets, toggled),
                "notes": notes,
            }
        sync_api.expect(page.locator("#progress")).to_have_text("10 of 30 done")
        sync_api.expect(page.locator("#status")).to_have_attribute("data-state", "saved")
        assert page.locator('#list li[data-state="done"]').count() == 10
        assert problems == []
        assert {url.split("/")[3] for url in requests} == {"", "judgment"}
        assert all(url.startswith(server.url) for url in requests)
        browser.close()
    lines = _lines(path)
    assert len(lines) == 10 and all(
        list(line) == ["id", "source", "venue", "year", "title", "abstract", "judged"]
        for line in lines
    )
    assert {line["id"]: line["judged"] for line in lines} == expected
    for line in lines:
        assert line["abstract"] == records[line["id"]].paper.abstract
        assert line["source"] == "iclr2024-sample"
    # Read back as the fit and eval read a judged file.
    for paper in read_papers(path):
        judgment = Judgment.of_paper(paper, source=str(path))
        want = expected[paper.id]
        assert judgment == Judgment(
            areas=tuple(want["areas"]), main=tuple(want["main"]), types=tuple(want["type"])
        )
        assert paper.model_extra["judged"]["notes"] == want["notes"]


def _start(judgments, *args):
    command = [sys.executable, "-m", "tagger", "review", str(SAMPLE), "--judgments"]
    process = subprocess.Popen(
        [*command, str(judgments), "--order", "file", *args],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    said = process.stderr.readline() + process.stderr.readline()
    url = re.search(r"Open (http://127\.0\.0\.1:\d+/) in a browser", said)
    assert url, said
    return process, url.group(1), said


@pytest.mark.slow
def test_a_killed_server_loses_nothing_and_the_review_resumes(tmp_path, chromium_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    records = list(read_tagged(SAMPLE))
    path = tmp_path / "judged.jsonl"
    process, url, said = _start(path)
    assert said.startswith("Reviewing 30 papers (0 done) against the packaged taxonomy")
    with sync_api.sync_playwright() as pw:
        browser, page, problems, _ = _browser(sync_api, pw, chromium_path)
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]")
        for record in records[:3]:
            assert page.get_attribute("body", "data-paper") == record.paper.id
            if not record.facets:
                page.keyboard.press("1")
            page.keyboard.press("d")
            sync_api.expect(page.locator("body")).not_to_have_attribute(
                "data-paper", record.paper.id
            )
        fourth = records[3]
        page.keyboard.press("a")  # its first tag accepted, theory marked: a draft, saved
        page.keyboard.press("2")
        sync_api.expect(page.locator("#status")).to_have_attribute("data-state", "saved")
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        lines = _lines(path)
        assert [line["id"] for line in lines] == [r.paper.id for r in records[:4]]
        assert ["judged" in line for line in lines] == [True, True, True, False]
        draft = lines[3]["draft"]
        assert draft["areas"] == [fourth.tags[0].id] and draft["rejected"] == []
        assert draft["type"] == _types_after(fourth.facets, {"theory"})
        assert sorted(p.name for p in tmp_path.iterdir()) == [".judged.jsonl.lock", "judged.jsonl"]

        # Opened again: three done, the fourth as left, and the page starts there.
        process, url, said = _start(path)
        assert said.startswith("Reviewing 30 papers (3 done)")
        page.goto(url)
        page.wait_for_selector("body[data-ready=true]")
        assert page.get_attribute("body", "data-paper") == fourth.paper.id
        assert page.text_content("#progress") == "3 of 30 done"
        states = page.locator("#list li").evaluate_all("els => els.map(e => e.dataset.state)")
        assert states == ["done"] * 3 + ["draft"] + ["todo"] * 26
        row = page.locator(f'.tag[data-area="{fourth.tags[0].id}"]')
        assert row.get_attribute("data-state") == "accept"
        pressed = page.locator('#types button[aria-pressed="true"]')
        assert pressed.evaluate_all("els => els.map(e => e.dataset.type)") == draft["type"]
        page.keyboard.press("d")
        sync_api.expect(page.locator("#progress")).to_have_text("4 of 30 done")
        assert problems == []
        browser.close()
    process.send_signal(signal.SIGINT)  # Ctrl-C: one line, exit code 130
    assert process.wait(10) == 130
    assert process.stderr.read() == (
        f"Stopped: 4 of 30 papers done, every change saved in {path}; the same command goes on.\n"
    )
    judged = judgments_of(read_papers(path), str(path))
    assert list(judged) == [r.paper.id for r in records[:4]]
    assert judged[fourth.paper.id].areas[0] == fourth.tags[0].id
