"""tagger report: the page's data worked out by hand, hostile text kept as data, and the page itself
opened in a real headless Chromium (Debian's package): no console errors, no network, the filters
give the counts Python gives, evidence is highlighted, and a screenshot is taken."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from click.testing import CliRunner

from tagger.cli import main
from tagger.corpus.report import build_report, render_html
from tagger.io.readers import read_papers
from tagger.records import Paper
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import EXAMPLES, MINI_TAXONOMY, tagged_record

HOSTILE_TITLE = "</script><script>window.pwned = 1</script><!-- <b>"
AREAS = ["rl", "rl.multi-agent", "graphs", "graphs.gnn"]


def _record(i, tags, *, venue="ICML", keyphrases=(), abstract="Graph neural networks for RL."):
    return tagged_record(
        f"p{i}",
        tags,
        title=f"Paper {i}",
        abstract=abstract,
        venue=venue,
        year=2025,
        keyphrases=keyphrases,
        evidence=[(area, "r") for area in AREAS],
    )


def test_report_data_worked_out_by_hand():
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    records = [
        _record(
            0,
            [(["rl"], 0.9), (["rl", "rl.multi-agent"], 0.6), (["graphs"], 0.3)],
            keyphrases=["Policy", "message passing"],
        ),
        _record(1, [(["rl"], 0.5)], keyphrases=["policy"]),
        _record(2, [(["graphs", "graphs.gnn"], 0.7)], venue="ICLR", keyphrases=["message passing"]),
        _record(3, [], venue="ICLR"),
    ]
    data = build_report(records, taxonomy, source="x.jsonl")
    assert (data["papers_total"], data["untagged"]) == (4, 1)
    assert data["venues"] == {"ICLR 2025": 2, "ICML 2025": 2}
    assert (data["tagger_version"], data["taxonomy_version"]) == ("9.9", "test-1")
    assert [(a["id"], a["depth"], a["papers"]) for a in data["areas"]] == [
        ("rl", 0, 2),
        ("rl.multi-agent", 1, 1),
        ("graphs", 0, 2),
        ("graphs.gnn", 1, 1),
    ]
    assert data["pairs"] == {"areas": ["rl", "graphs"], "matrix": [[2, 1], [1, 2]]}
    # Only phrases in two papers of an area; written as most papers write them.
    assert data["keyphrases"] == {"rl": [["Policy", 2]], "graphs": [["message passing", 2]]}
    first = data["papers"][0]
    # An area's score is the best tag that puts the paper there (a child's counts for its parent).
    assert first["areas"] == {"rl": 0.9, "rl.multi-agent": 0.6, "graphs": 0.3}
    assert first["tags"] == [["rl", 0.9], ["rl.multi-agent", 0.6], ["graphs", 0.3]]
    assert first["evidence"] == [
        [1, 0, 5, "rl", "alias", "r"],
        [1, 0, 5, "rl.multi-agent", "alias", "r"],
        [1, 0, 5, "graphs", "alias", "r"],
    ]
    assert data["papers"][3]["tags"] == [] and data["papers"][3]["areas"] == {}


def test_hostile_text_stays_data_and_nothing_is_fetched():
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    record = _record(0, [(["rl"], 0.9)])
    record.paper.title = HOSTILE_TITLE
    page = render_html(build_report([record], taxonomy), title=HOSTILE_TITLE)
    template = render_html(build_report([], taxonomy), title="t")
    assert page.count("<script") == template.count("<script") == 2
    assert "<!--" not in page
    assert "&lt;/script&gt;" in page  # the title, escaped in <title> and <h1>
    data = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert json.loads(data.group(1))["papers"][0]["title"] == HOSTILE_TITLE
    assert not re.search(r'(src|href)\s*=\s*"?(https?:)?//', page), "the page must load nothing"


def test_report_command_errors():
    result = CliRunner().invoke(main, ["report", "no-such-file.jsonl"])
    assert result.exit_code == 1
    assert result.stderr == "Error: no-such-file.jsonl: no such file\n"


# ---- the page in a real browser --------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium_path():
    path = (
        os.environ.get("TAGGER_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if path:
        return path
    if os.environ.get("TAGGER_SKIP_BROWSER"):
        pytest.skip("TAGGER_SKIP_BROWSER is set")
    pytest.fail(
        "the report test needs Chromium: `apt-get install chromium` (Debian/Ubuntu), or "
        "TAGGER_CHROMIUM=/path/to/chrome; TAGGER_SKIP_BROWSER=1 skips it"
    )


@pytest.fixture(scope="module")
def tagged_examples(tagger, tmp_path_factory):
    """The shipped examples tagged by the real pipeline, plus a paper with a hostile title."""
    papers = [
        p
        for source in sorted(EXAMPLES.glob("*.txt")) + sorted(EXAMPLES.glob("*.jsonl"))
        for p in read_papers(source)
    ]
    papers.append(
        Paper(
            id="hostile",
            title=HOSTILE_TITLE,
            venue="ICLR",
            year=2025,
            abstract="We study multi-agent reinforcement learning (MARL) on graphs.",
        )
    )
    path = tmp_path_factory.mktemp("report") / "tagged.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in tagger.tag_many(papers)))
    return path


@pytest.mark.slow
def test_report_in_a_real_browser(tagged_examples, chromium_path, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    html_path = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(tagged_examples), "-o", str(html_path)])
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in tagged_examples.read_text().splitlines()]
    areas_of = [{a for t in r["tags"] for a in t["path"]} for r in records]

    with sync_api.sync_playwright() as pw:
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
        page.goto(html_path.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        count, expect = page.locator("#count"), sync_api.expect

        assert problems == []
        assert requests == [html_path.as_uri()]
        assert page.evaluate("window.pwned") is None
        assert len(records) == 51 and page.locator("article.paper").count() == 50  # a page: 50
        assert count.text_content() == "51 of 51 papers, showing the first 50"
        page.click("#more")
        assert page.locator("article.paper").count() == 51 and page.locator("#more").is_hidden()
        hostile = page.locator('article[data-id="hostile"] h3')
        assert hostile.text_content() == HOSTILE_TITLE

        # The tree: one row per area with papers, the roots' counts as Python counts them.
        rl_row = page.locator('.row[data-area="rl"] .count').text_content()
        assert rl_row.startswith(f"{sum('rl' in a for a in areas_of)} ·")

        # Search: every word, case-insensitive, in title, abstract or keyphrases.
        page.fill("#search", "Reinforcement LEARNING")
        expected = sum(
            all(
                w
                in " ".join(
                    [
                        r["paper"].get("title") or "",
                        r["paper"]["abstract"],
                        *(k["text"] for k in r["keyphrases"]),
                    ]
                ).lower()
                for w in ("reinforcement", "learning")
            )
            for r in records
        )
        expect(count).to_have_text(re.compile(f"^{expected} of "))
        assert 0 < expected < len(records)
        assert page.locator("article.paper").count() == expected

        # Area filter: an area includes its sub-areas; best score first; its evidence in green.
        page.fill("#search", "")
        page.select_option("#area", "rl")
        expected = sum("rl" in a for a in areas_of)
        expect(count).to_have_text(re.compile(f"^{expected} of "))
        shown = page.locator("article.paper").evaluate_all("els => els.map(e => e.dataset.id)")
        rl_ids = {r["paper"]["id"] for r, a in zip(records, areas_of, strict=True) if "rl" in a}
        assert set(shown) == rl_ids
        marks = page.locator('article[data-id="hostile"] mark.sel').all_text_contents()
        assert "multi-agent reinforcement learning" in [m.lower() for m in marks]

        # Every highlighted piece is the text at its evidence offsets.
        first = next(r for r in records if r["paper"]["id"] == shown[0])
        evidence_text = {
            first["paper"]["abstract"][e["start"] : e["end"]]
            for t in first["tags"]
            for e in t["evidence"]
            if e["field"] == "abstract"
        }
        pieces = page.locator(f'article[data-id="{shown[0]}"] .abstract mark').all_text_contents()
        assert pieces and all(any(p in text for text in evidence_text) for p in pieces)

        # A heatmap cell lists the papers tagged with both areas.
        cell = page.locator("#heatmap td[data-pair]").filter(has_text=re.compile(r"\d")).first
        a, b = cell.get_attribute("data-pair").split("+")
        expected = sum(a in s and b in s for s in areas_of)
        assert cell.text_content() == str(expected)
        cell.click()
        expect(count).to_have_text(re.compile(f"^{expected} of "))
        assert "Areas:" in page.locator("#active-filter").text_content()

        # The heatmap shows the 15 largest top-level areas until asked for all.
        taxonomy = load_taxonomy()
        roots = {a for s in areas_of for a in s if taxonomy.by_id[a].parent is None}
        rows = page.locator("#heatmap tbody tr")
        assert len(roots) > 15 and rows.count() == 15
        page.click("#heat-toggle")
        assert rows.count() == len(roots)

        page.select_option("#area", "(untagged)")
        expected = sum(not r["tags"] for r in records)
        expect(count).to_have_text(re.compile(f"^{expected} of "))

        screenshot = tmp_path / "report.png"
        page.screenshot(path=str(screenshot))
        assert problems == []
        browser.close()
    assert (
        screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 20_000
    )
