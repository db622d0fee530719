"""tagger report: the page's data worked out by hand, hostile text kept as data, and the page itself
opened in a real headless Chromium (Debian's package): no console errors, no network, the filters
give the counts Python gives, evidence is highlighted; at 1,280 and 1,920 px nothing scrolls
sideways, the heatmap's rows and columns are labelled alike and whole, the search box shows its
placeholder, the score filter starts at the run's --min-score, an area's keyphrases are rare
elsewhere; and docs/report_screenshot.py makes the tutorial's picture."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest
from click.testing import CliRunner

from tagger import Tagger
from tagger.cli import main
from tagger.config import TaggerConfig
from tagger.corpus.report import build_report, render_html
from tagger.io.readers import read_papers
from tagger.records import Paper
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import EXAMPLES, MINI_TAXONOMY, ROOT, tagged_record

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
    assert data["min_score"] == TaggerConfig().min_score == 0.7  # the lines say no other
    assert [(a["id"], a["depth"], a["papers"]) for a in data["areas"]] == [
        ("rl", 0, 2),
        ("rl.multi-agent", 1, 1),
        ("graphs", 0, 2),
        ("graphs.gnn", 1, 1),
    ]
    assert data["pairs"] == {"areas": ["rl", "graphs"], "matrix": [[2, 1], [1, 2]]}
    # Only phrases in two papers of an area, rare elsewhere; written as most papers write them,
    # with the number of the area's papers and of the others that have them.
    assert data["keyphrases"] == {"rl": [["Policy", 2, 0]], "graphs": [["message passing", 2, 0]]}
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


def test_keyphrases_per_area_are_rare_elsewhere():
    """6 papers on graphs, 4 on RL: a phrase as common in both is listed under neither, however
    frequent; one mostly in an area but not twice as common there is not listed either."""
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    graphs = [["message passing", "large language models"]] * 3 + [["message passing"]] * 2
    graphs += [["policy", "large language models"]]
    rl = [["policy", "large language models"]] * 2 + [["policy", "benchmark"]] * 2
    records = [
        _record(i, [(["graphs"], 0.9)], keyphrases=phrases) for i, phrases in enumerate(graphs)
    ] + [_record(10 + i, [(["rl"], 0.9)], keyphrases=phrases) for i, phrases in enumerate(rl)]
    data = build_report(records, taxonomy)
    # "large language models": 4 of 6 graph papers and 2 of 4 RL papers, at least as common
    # elsewhere for RL, not twice as common for graphs. "policy": in 4 of 4 RL papers and 1 of
    # the 6 others: listed. "benchmark": 2 of 4 RL papers and none of the others: listed.
    assert data["keyphrases"] == {
        "rl": [["policy", 4, 1], ["benchmark", 2, 0]],
        "graphs": [["message passing", 5, 0]],
    }


def test_phrases_written_alike_are_told_apart():
    """ "GRPO" spelled out in some papers ("group relative policy optimization") and bare in
    others are two phrases; the list says which is which instead of showing "GRPO" twice."""
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    spelled = [("GRPO", "group relative policy optimization")]
    records = [_record(i, [(["rl"], 0.9)], keyphrases=spelled) for i in range(3)]
    records += [_record(3 + i, [(["rl"], 0.9)], keyphrases=["GRPO"]) for i in range(2)]
    records += [_record(5 + i, [(["graphs"], 0.9)], keyphrases=["GNN"]) for i in range(5)]
    assert build_report(records, taxonomy)["keyphrases"]["rl"] == [
        ["GRPO", 3, 0, "group relative policy optimization"],
        ["GRPO", 2, 0],
    ]


def test_the_score_filter_starts_at_the_runs_min_score():
    taxonomy = load_taxonomy(MINI_TAXONOMY)

    def run(min_score):
        record = _record(0, [(["rl"], 0.9)])
        settings = {} if min_score is None else {"min_score": min_score}
        record.provenance = record.provenance.model_copy(update={"settings": settings})
        return record

    assert build_report([run(None)], taxonomy)["min_score"] == TaggerConfig().min_score
    assert build_report([run(0.55), run(0.55)], taxonomy)["min_score"] == 0.55
    # Two runs in one file: the lower threshold, so every tag either run kept is listed.
    assert build_report([run(None), run(0.4)], taxonomy)["min_score"] == 0.4
    page = render_html(build_report([run(0.55)], taxonomy))
    assert '"min_score":0.55' in page


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


# a paper no area fits: its likeliest tag is listed alone, below any min score the page starts at
OFF_TOPIC = Paper(id="bread", abstract="We bake sourdough bread and measure how its crust browns.")


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
    papers.append(OFF_TOPIC)  # every tag below the default min score
    path = tmp_path_factory.mktemp("report") / "tagged.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in tagger.tag_many(papers)))
    return path


@pytest.fixture(scope="module")
def report_at_085(embedder, tmp_path_factory):
    """The examples tagged with ``--min-score 0.85`` (not the default) and their report."""
    config = TaggerConfig(min_score=0.85)
    papers = [
        p
        for source in sorted(EXAMPLES.glob("*.txt")) + sorted(EXAMPLES.glob("*.jsonl"))
        for p in read_papers(source)
    ]
    papers.append(OFF_TOPIC)
    records = list(Tagger.from_taxonomy(None, config, embedder=embedder).tag_many(papers))
    folder = tmp_path_factory.mktemp("report-085")
    tagged, page = folder / "tagged.jsonl", folder / "report.html"
    tagged.write_text("".join(t.model_dump_json() + "\n" for t in records))
    result = CliRunner().invoke(main, ["report", str(tagged), "-o", str(page)])
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in tagged.read_text().splitlines()], page


# What a person sees, measured in the page: sideways scrolling, the heatmap's labels (each one's
# text, its box and its ink), the placeholder's width in the search box's font.
MEASURE = """() => {
  const ink = node => { const r = document.createRange(); r.selectNodeContents(node);
                        const b = r.getBoundingClientRect();
                        return [b.left, b.top, b.right, b.bottom]; };
  const box = node => { const b = node.getBoundingClientRect();
                        return [b.left, b.top, b.right, b.bottom]; };
  const label = th => ({ area: th.dataset.area, text: th.textContent, box: box(th), ink: ink(th),
                         clipped: [th, ...th.querySelectorAll("*")].some(e =>
                           e.scrollWidth > e.clientWidth + 1
                           || e.scrollHeight > e.clientHeight + 1) });
  const root = document.documentElement, scroll = document.getElementById("heat-scroll");
  const search = document.getElementById("search"), style = getComputedStyle(search);
  const canvas = document.createElement("canvas").getContext("2d");
  canvas.font = style.font;
  return {
    page: [root.scrollWidth, root.clientWidth],
    heat: [scroll.scrollWidth, scroll.clientWidth],
    columns: [...document.querySelectorAll("#heatmap thead th[data-area]")].map(label),
    rows: [...document.querySelectorAll("#heatmap tbody th[data-area]")].map(label),
    cells: document.querySelectorAll("#heatmap tbody td").length,
    placeholder: [canvas.measureText(search.placeholder).width, search.clientWidth
                  - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)],
  };
}"""


def _overlap(a, b):
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 1920])
def test_report_as_a_person_sees_it(report_at_085, chromium_path, width):
    """At 1,280 and 1,920 px: nothing scrolls sideways, the heatmap's largest 15 and all its
    areas labelled alike by name, whole and apart, the placeholder in its box, the score filter
    at the run's --min-score, and each area's keyphrases rarer elsewhere than in the area."""
    sync_api = pytest.importorskip("playwright.sync_api")
    records, html_path = report_at_085
    assert {json.dumps(r["provenance"]["settings"]) for r in records} == {'{"min_score": 0.85}'}
    taxonomy = load_taxonomy()
    areas_of = [{a for t in r["tags"] + r["facets"] for a in t["path"]} for r in records]
    roots = {t["path"][0] for r in records for t in r["tags"]}  # the heatmap's areas
    assert len(roots) > 15
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(html_path.as_uri())
        page.wait_for_selector("body[data-ready=true]")

        # The score filter starts at the run's --min-score, and lists what that keeps.
        assert page.input_value("#min-score") == "0.85"
        kept = sum(any(t["score"] >= 0.85 for t in r["tags"]) for r in records)
        assert 0 < kept < len(records)
        sync_api.expect(page.locator("#count")).to_have_text(
            re.compile(f"^{kept} of {len(records)} papers")
        )

        for shown in ("largest", "all"):
            if shown == "all":
                page.click("#heat-toggle")
            seen = page.evaluate(MEASURE)
            assert seen["page"][0] <= seen["page"][1], f"the page scrolls sideways ({shown})"
            assert seen["heat"][0] <= seen["heat"][1], f"the heatmap scrolls sideways ({shown})"
            assert seen["placeholder"][0] <= seen["placeholder"][1], "the placeholder is cut off"
            columns, rows = seen["columns"], seen["rows"]
            assert [c["area"] for c in columns] == [r["area"] for r in rows]
            assert len(rows) == (15 if shown == "largest" else len(roots))
            assert seen["cells"] == len(rows) ** 2
            for kind, labels in (("column", columns), ("row", rows)):
                for one in labels:
                    name = taxonomy.by_id[one["area"]].name
                    assert one["text"] in (name, f"{name} ({one['area']})"), (kind, one)
                    assert not one["clipped"], f"{kind} label cut off: {one['text']}"
                    ink, box = one["ink"], one["box"]
                    assert ink[0] >= 0 and ink[2] <= width, f"{kind} label off the page: {one}"
                    assert box[0] - 0.5 <= ink[0] and ink[2] <= box[2] + 0.5, (kind, one)
                for a, b in zip(labels, labels[1:], strict=False):
                    assert not _overlap(a["ink"], b["ink"]), f"{a['text']} / {b['text']}"
            assert [c["text"] for c in columns] == [r["text"] for r in rows]

        # Each area's keyphrases: in more of its papers than of the others, and a larger share.
        lists = page.locator(".kp-area").evaluate_all(
            """els => els.map(e => [e.querySelector("b").title, [...e.querySelectorAll(".chip")]
                                    .map(c => [c.dataset.phrase, c.dataset.meaning])])"""
        )
        browser.close()
    # A chip is a keyphrase as most papers write it ("Graph Neural Networks", for "GNNs" and
    # "graph neural networks" too: one normalized form), or with its meaning (the normalized
    # form) where two are written alike; a paper has it when one of its keyphrases means it.
    meaning_of = defaultdict(set)
    for record in records:
        for k in record["keyphrases"]:
            meaning_of[k["text"]].add(k["normalized"] or k["text"])
    keyphrases = [{k["normalized"] or k["text"] for k in r["keyphrases"]} for r in records]
    assert lists and sum(len(chips) for _, chips in lists) > 10
    for area, chips in lists:
        spelled = {meaning for _, meaning in chips if meaning}
        has = [
            [bool(({meaning} if meaning else meaning_of[text] - spelled) & k) for k in keyphrases]
            for text, meaning in chips
        ]
        size = sum(area in a for a in areas_of)
        for (text, _), papers in zip(chips, has, strict=True):
            inside = sum(p and area in a for p, a in zip(papers, areas_of, strict=True))
            elsewhere = sum(papers) - inside
            assert inside >= 2 and elsewhere < inside, (area, text, inside, elsewhere)
            assert inside / size > elsewhere / (len(records) - size), (area, text)


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
        # The list starts at the run's --min-score (the default, as its lines say no other),
        # and says how many papers it leaves out for that.
        default = TaggerConfig().min_score
        assert page.input_value("#min-score") == str(default) == "0.7"
        kept, n = sum(any(t["score"] >= default for t in r["tags"]) for r in records), len(records)
        assert 40 <= kept < n  # the bread paper at least is left out; most are kept
        assert count.text_content() == (
            f"{kept} of {n} papers{', showing the first 50' if kept > 50 else ''}; "
            f"{n - kept} more with every tag below min score 0.7"
        )
        page.fill("#min-score", "0")
        expect(count).to_have_text(f"{n} of {n} papers, showing the first 50")
        assert page.locator("article.paper").count() == 50  # a page: 50
        page.click("#more")
        assert page.locator("article.paper").count() == n and page.locator("#more").is_hidden()
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


@pytest.mark.slow
def test_the_readmes_screenshot_is_made_by_a_script(tagged_examples, chromium_path, tmp_path):
    """docs/report_screenshot.py renders the report and takes the tutorial's picture: the same
    picture twice, at the size it says."""
    pytest.importorskip("playwright.sync_api")
    script = ROOT / "docs" / "report_screenshot.py"
    env = {**os.environ, "TAGGER_CHROMIUM": chromium_path}
    pictures = []
    for name in ("one.png", "two.png"):
        command = [sys.executable, str(script), "--tagged", str(tagged_examples), "-o", name]
        run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        pictures.append((tmp_path / name).read_bytes())
    assert run.stderr.endswith(f"{name}: 1280 x 1400\n")
    png = pictures[0]
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1280, 1400)
    assert pictures[0] == pictures[1], "the same report must give the same picture"
