"""tagger stats on a small hand-made tagged corpus, counts worked out by hand."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tagger.cli import main

from ..conftest import MINI_TAXONOMY, tagged_record, write_tagged


def _tagged(tmp_path):
    theory = [["type", "type.theory"]]
    rows = [
        ("ICML", [["rl"], ["rl", "rl.multi-agent"], ["graphs"]], theory),
        ("ICML", [["rl"]], []),
        ("ICLR", [["graphs"], ["graphs", "graphs.gnn"]], []),
        ("ICLR", [], theory),  # a type but no topic: untagged
    ]
    return write_tagged(
        tmp_path / "tagged.jsonl",
        [
            tagged_record(str(i), paths, venue=venue, year=2025, facets=types)
            for i, (venue, paths, types) in enumerate(rows)
        ],
    )


def test_stats_json_counts(tmp_path):
    result = CliRunner().invoke(
        main, ["stats", str(_tagged(tmp_path)), "--json", "--taxonomy", str(MINI_TAXONOMY)]
    )
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stdout)
    assert (stats["papers"], stats["untagged"]) == (4, 1)
    areas = {a["id"]: (a["papers"], a["share"], a["by_venue"]) for a in stats["areas"]}
    assert areas == {
        "rl": (2, 0.5, {"ICLR 2025": 0, "ICML 2025": 2}),
        "rl.multi-agent": (1, 0.25, {"ICLR 2025": 0, "ICML 2025": 1}),
        "graphs": (2, 0.5, {"ICLR 2025": 1, "ICML 2025": 1}),
        "graphs.gnn": (1, 0.25, {"ICLR 2025": 1, "ICML 2025": 0}),
        "type": (2, 0.5, {"ICLR 2025": 1, "ICML 2025": 1}),
        "type.theory": (2, 0.5, {"ICLR 2025": 1, "ICML 2025": 1}),
    }
    assert stats["pairs"] == [{"areas": ["graphs", "rl"], "papers": 1}]
    assert stats["venues"] == {"ICLR 2025": 2, "ICML 2025": 2}


def test_stats_reads_stdin(tmp_path):
    path = _tagged(tmp_path)
    from_file = CliRunner().invoke(
        main, ["stats", str(path), "--json", "--taxonomy", str(MINI_TAXONOMY)]
    )
    piped = CliRunner().invoke(
        main, ["stats", "-", "--json", "--taxonomy", str(MINI_TAXONOMY)], input=path.read_bytes()
    )
    assert piped.exit_code == 0
    assert json.loads(piped.stdout) == json.loads(from_file.stdout)
    assert json.loads(piped.stdout)["papers"] == 4


def test_stats_table_and_bad_input(tmp_path):
    result = CliRunner().invoke(
        main, ["stats", str(_tagged(tmp_path)), "--taxonomy", str(MINI_TAXONOMY)]
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "4 papers, 1 with no tag"
    assert lines[3].split()[:3] == ["rl", "2", "50.0%"]
    assert lines[4].split()[:3] == ["rl.multi-agent", "1", "25.0%"]
    assert "  graphs + rl: 1" in lines
    bad = tmp_path / "plain.jsonl"
    bad.write_text('{"abstract": "x"}\n')
    result = CliRunner().invoke(main, ["stats", str(bad), "--taxonomy", str(MINI_TAXONOMY)])
    assert result.exit_code == 1
    assert (
        result.stderr
        == f"Error: {bad} line 1: not a line of tagged JSONL (run `tagger tag` first)\n"
    )
