"""Progress bars with a total and the time left, on tag, retag and eval: `eval` says how far
its tagging is rather than nothing for as long as it takes, and `tag --progress` counts papers
against the total counted before the run (not `1 papers [00:03, 3.25s/ papers]`, with no total
and no time left)."""

from __future__ import annotations

import json
import re

from tagger.io.inputs import count_papers
from tagger.io.tagged import count_lines

from ..conftest import EXAMPLES, MINI
from ..conftest import run as run_cli

ICML = EXAMPLES / "icml2025-abstracts.txt"  # 19 papers


def run(*args):
    """The CLI with the small test taxonomy."""
    return run_cli(*args, *MINI)


def last_bar(stderr: str) -> str:
    """The bar as it was drawn last (tqdm redraws it in place with a carriage return)."""
    drawn = [part for line in stderr.splitlines() for part in line.split("\r") if "|" in part]
    assert drawn, stderr
    return drawn[-1].strip()


def test_tag_progress_counts_papers_against_the_total_with_the_time_left(tmp_path):
    result = run("tag", str(ICML), "-o", str(tmp_path / "t.jsonl"), "--progress")
    assert result.exit_code == 0, result.stderr
    # 100%|█████| 19/19 [00:02<00:00,  8.1 papers/s]
    assert re.fullmatch(
        r"100%\|.*\| 19/19 \[\d\d:\d\d<00:00, .* papers/s\]", last_bar(result.stderr)
    )


def test_retag_progress_has_a_total(tmp_path):
    tagged = tmp_path / "t.jsonl"
    assert run("tag", str(ICML), "-o", str(tagged)).exit_code == 0
    result = run("retag", str(tagged), "-o", str(tmp_path / "r.jsonl"), "--progress")
    assert result.exit_code == 0, result.stderr
    assert " 19/19 [" in last_bar(result.stderr)


def test_eval_shows_progress_while_it_tags(tmp_path):
    papers = tmp_path / "labelled.jsonl"
    rows = [
        {
            "abstract": "Multi-agent reinforcement learning (MARL).",
            "primary_area": "reinforcement learning",
        },
        {
            "abstract": "Graph neural networks for molecules.",
            "primary_area": "reinforcement learning",
        },
    ]
    papers.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = run("eval", str(papers), "--scheme", "iclr", "--json", "--progress")
    assert result.exit_code == 0, result.stderr
    assert " 2/2 [" in last_bar(result.stderr)
    assert json.loads(result.stdout)["areas"]  # the report is untouched on stdout


def test_no_bar_when_stderr_is_not_a_terminal(tmp_path):
    result = run("tag", str(ICML), "-o", str(tmp_path / "t.jsonl"))
    assert "|" not in result.stderr and "papers/s" not in result.stderr


def test_a_resumed_run_counts_the_papers_already_there(tmp_path):
    out = tmp_path / "t.jsonl"
    assert run("tag", str(ICML), "-o", str(out)).exit_code == 0
    out.write_bytes(b"".join(out.read_bytes().splitlines(keepends=True)[:5]))
    result = run("tag", str(ICML), "-o", str(out), "--resume", "--progress")
    assert result.exit_code == 0, result.stderr
    assert " 19/19 [" in last_bar(result.stderr)


def test_totals_are_counted_cheaply_and_exactly(tmp_path):
    assert count_papers([ICML, EXAMPLES / "iclr2025-sample.jsonl"]) == 19 + 12
    assert count_papers(["-"]) is None
    tagged = EXAMPLES / "tagged" / "icml2025-abstracts.jsonl"
    assert count_lines(tagged) == 19
    assert count_lines("-") is None


def test_the_clock_starts_with_the_first_paper_not_with_loading(capsys):
    """What comes before the first item (loading the models) is not in the rate or the time
    left: the first estimate of a run was once 1:17:54 for minutes of work."""
    import time

    from tagger.io.display import progress_bar

    def slow_start():
        time.sleep(1.2)  # the models loading
        yield from range(4)

    assert list(progress_bar(slow_start(), total=4)) == [0, 1, 2, 3]
    final = last_bar(capsys.readouterr().err)
    assert "4/4" in final and "[00:00<00:00" in final, final
