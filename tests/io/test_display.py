"""What reaches a terminal (io.display): escape sequences in papers' titles and venues are
shown as text (``\\x1b``), never run by the terminal that prints them."""

from __future__ import annotations

from ..conftest import MINI, run, tagged_record, write_tagged


def test_terminal_escapes_in_data_are_shown_not_run(tmp_path):
    record = tagged_record("a", [["rl"]], title="T\x1b[2J", venue="ICML\x1b[31m", year=2025)
    other = tagged_record("b", [["rl"]], venue="ICLR", year=2025)
    tagged = write_tagged(tmp_path / "t.jsonl", [record, other])
    stats = run("stats", tagged, *MINI).stdout
    assert "\x1b" not in stats and "ICML\\x1b[31m" in stats
    titles = run("filter", tagged, "--output-format", "titles", *MINI).stdout
    assert titles.splitlines() == ["T\\x1b[2J", "x"]
