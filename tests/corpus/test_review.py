"""`tagger review` as a person uses it: the papers in the order to review them (least certain
first), the command's errors, and, in a real headless Chromium (Debian's package), ten papers
judged by keyboard, a server killed mid-review that loses nothing, and a review resumed."""

from __future__ import annotations

import gzip
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
from tagger.corpus.judgments import TYPES
from tagger.corpus.review import Review, review_order, uncertainty
from tagger.io.readers import read_papers
from tagger.io.tagged import read_tagged

from ..conftest import DATA, MINI, MINI_TAXONOMY, ROOT, tagged_record, write_tagged
from .conftest import judged_line, judgments_in, review_records
from .test_report import CHROMIUM_FLAGS
from .test_report import chromium_path as chromium_path  # the fixture, shared

SAMPLE = DATA / "suggest" / "iclr2024-sample.jsonl"  # 30 papers as `tagger tag` wrote them


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


def test_review_command_errors(tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(json.dumps({"id": "a", "abstract": "Some words."}) + "\n")
    tagged = write_tagged(tmp_path / "t.jsonl", review_records())
    other = tmp_path / "other.jsonl"
    other.write_text(judged_line("zz") + "\n")
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
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # read, it would hang the review
    result = run(tagged, "--judgments", fifo)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {fifo} is a FIFO, not a file: give --judgments a regular file (or a new one)\n",
    )
    other.chmod(0o444)
    result = run(tagged, "--judgments", other)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {other} is read-only: make it writable (chmod u+w {other}) or give another file\n",
    )


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
        assert {url.split("/")[3].split("?")[0] for url in requests} == {"", "papers", "judgment"}
        assert all(url.startswith(server.address) for url in requests)
        browser.close()
    lines = judgments_in(path)
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
    url = re.search(r"Open (http://127\.0\.0\.1:\d+/\?token=[\w-]{32,}) in a browser", said)
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
        lines = judgments_in(path)
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


def test_sigterm_says_where_the_review_stands(tmp_path):
    """SIGTERM (a service manager, `kill`) ends a review as Ctrl-C does: review's own message,
    how many papers are done and where every change is, and exit code 143."""
    path = tmp_path / "judged.jsonl"
    process, _, said = _start(path)
    assert said.startswith("Reviewing 30 papers (0 done)")
    process.send_signal(signal.SIGTERM)
    assert process.wait(10) == 143
    assert process.stderr.read() == (
        f"Stopped: 0 of 30 papers done, every change saved in {path}; the same command goes on.\n"
    )


def test_a_threshold_that_is_not_a_number_is_an_input_error(tmp_path):
    records = review_records()
    records[1].provenance = records[1].provenance.model_copy(
        update={"settings": {"min_score": "high"}}
    )
    tagged = write_tagged(tmp_path / "t.jsonl", records)
    result = CliRunner().invoke(
        main,
        ["review", str(tagged), "--judgments", str(tmp_path / "j.jsonl"), *MINI],
    )
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {tagged} line 2: its provenance's min_score is 'high', not a number: this is "
        "not a line `tagger tag` wrote; tag the papers again\n",
    )
    assert not (tmp_path / "j.jsonl").exists()


@pytest.mark.slow
def test_two_pages_of_one_review_and_a_malformed_address(tmp_path, chromium_path):
    """The printed URL lets the browser in (a cookie), the bare address does not let another
    in; an address whose fragment is not a paper's, or not even well formed, opens the first
    paper; and a change in a page older than the last save of the paper is not saved over it:
    the page says so and shows the paper's judgment as the other page saved it."""
    sync_api = pytest.importorskip("playwright.sync_api")
    tagged = write_tagged(tmp_path / "t.jsonl", review_records())
    path = tmp_path / "j.jsonl"
    review = Review.open(tagged, path, taxonomy=MINI_TAXONOMY)
    with review.serve() as server, sync_api.sync_playwright() as pw:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_FLAGS)
        stranger = browser.new_page()  # no secret: no page
        assert stranger.goto(server.address).status == 403
        context = browser.new_context()
        older, newer = context.new_page(), context.new_page()  # two tabs
        problems = []
        for page in (older, newer):
            page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
        older.goto(server.url + "#%E0%A4%A")
        older.wait_for_selector("body[data-ready=true]")
        assert older.url == server.address + "#p1"  # the paper shown, in the address
        assert older.get_attribute("body", "data-paper") == "p1"
        newer.goto(server.address + "#p1")
        newer.wait_for_selector("body[data-ready=true]")
        newer.keyboard.press("e")
        newer.keyboard.type("from the newer page")
        newer.keyboard.press("Escape")
        newer.keyboard.press("d")
        sync_api.expect(newer.locator("#progress")).to_have_text("1 of 2 done")
        older.keyboard.press("1")  # made on the paper as it was before the newer page's save
        sync_api.expect(older.locator("#message")).to_have_text(
            "changed in another page: reloaded it"
        )
        assert older.input_value("#notes") == "from the newer page"
        assert older.text_content("#done-badge") == "done ✓"
        assert older.text_content("#progress") == "1 of 2 done"
        line = judgments_in(path)[0]
        assert line["judged"]["notes"] == "from the newer page"
        assert line["judged"]["type"] == ["theory"]
        assert problems == []
        browser.close()


def test_a_review_holds_an_index_of_its_papers_not_the_papers(tmp_path):
    """The tagged lines are read once into a spool; a paper is read from there when asked for,
    as it was when the review opened (a gzip input, then rewritten: the review is unmoved)."""
    records = list(read_tagged(SAMPLE))
    tagged = tmp_path / "t.jsonl.gz"
    tagged.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    review = Review.open(tagged, tmp_path / "j.jsonl", order="file")
    tagged.write_bytes(b"")
    papers = review.papers
    assert len(papers) == 30 and list(papers) == [r.paper.id for r in records]
    assert [papers[r.paper.id] for r in records] == records
    assert "nope" not in papers and papers.position(records[3].paper.id) == 3
    block = review.papers_from(28, 50)
    assert [p["id"] for p in block["papers"]] == [r.paper.id for r in records[28:]]
    assert block["states"] == "t" * 30 and review.data()["count"] == 30
    review.close()


@pytest.mark.slow
def test_the_page_moves_through_blocks_of_papers(tmp_path, chromium_path):
    """120 papers, fetched 50 at a time: the address's paper opens with its block, the list
    shows the block, next and previous cross from one block to the next, and done goes on to
    the next paper not done, wherever it is."""
    sync_api = pytest.importorskip("playwright.sync_api")
    line = json.loads(SAMPLE.read_text().splitlines()[0])
    lines = []
    for k in range(120):
        line["paper"]["id"] = f"q{k:03d}"
        lines.append(json.dumps(line))
    tagged = tmp_path / "t.jsonl"
    tagged.write_text("\n".join(lines) + "\n")
    path = tmp_path / "j.jsonl"
    review = Review.open(tagged, path, order="file")
    with review.serve() as server, sync_api.sync_playwright() as pw:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        browser, page, problems, _ = _browser(sync_api, pw, chromium_path)
        page.goto(server.url + "#q098")
        page.wait_for_selector("body[data-ready=true]")
        assert page.text_content("#position") == "Paper 99 of 120"
        assert page.text_content("#order") == "51–100 of 120"
        assert page.locator("#list li").count() == 50
        for shown in ("q099", "q100"):
            page.keyboard.press("n")
            sync_api.expect(page.locator("body")).to_have_attribute("data-paper", shown)
        assert page.text_content("#order") == "101–120 of 120"
        assert page.locator("#list li").count() == 20
        page.keyboard.press("p")
        sync_api.expect(page.locator("body")).to_have_attribute("data-paper", "q099")
        assert page.text_content("#order") == "51–100 of 120"
        if not review.papers.at(99).facets:
            page.keyboard.press("1")
        page.keyboard.press("d")  # done: on to the next paper not done, in the next block
        sync_api.expect(page.locator("body")).to_have_attribute("data-paper", "q100")
        sync_api.expect(page.locator("#progress")).to_have_text("1 of 120 done")
        assert page.text_content("#order") == "101–120 of 120"
        page.keyboard.press("p")
        sync_api.expect(page.locator("body")).to_have_attribute("data-paper", "q099")
        assert page.get_attribute('#list li[data-id="q099"]', "data-state") == "done"
        assert problems == []
        browser.close()
    assert [line["id"] for line in judgments_in(path)] == ["q099"]
