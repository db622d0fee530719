"""tagger stats on a small hand-made tagged corpus, counts worked out by hand; a file tagged with
another taxonomy, or with two embedding models, is warned of."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tagger.cli import main
from tagger.taxonomy.loading import default_taxonomy_path

from ..conftest import MINI, MINI_TAXONOMY, papers, run, tagged_record, write_tagged


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


def test_stats_on_a_file_of_two_embedding_models_warns_once(tmp_path):
    """Scores made with two embedding backends (onnx-int8 and static, say) are not the same
    scale: counted together without a word, the table would mislead, as a file of two
    taxonomies would."""
    records = [tagged_record(str(i), [["rl"]]) for i in range(4)]
    other = records[0].provenance.model_copy(update={"embedding_model": "other (static)"})
    records[2] = records[2].model_copy(update={"provenance": other})
    records[3] = records[3].model_copy(update={"provenance": other})
    path = write_tagged(tmp_path / "mixed.jsonl", records)
    result = CliRunner().invoke(main, ["stats", str(path), "--taxonomy", str(MINI_TAXONOMY)])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        f"Warning: {path}: paper 3 was tagged with the embedding model 'other (static)', and "
        "the papers before it with 'm': their tags were weighed in two embedding spaces, and "
        "counts mix them; tag them again with one --embedding-backend\n"
    )
    assert result.stdout.splitlines()[0] == "4 papers, 0 with no tag"
    same = write_tagged(tmp_path / "same.jsonl", records[:2])
    result = CliRunner().invoke(main, ["stats", str(same), "--taxonomy", str(MINI_TAXONOMY)])
    assert (result.exit_code, result.stderr) == (0, "")


def test_stats_on_a_file_of_another_taxonomy_warns(tmp_path):
    tagged = tmp_path / "t.jsonl"
    assert run("tag", papers(tmp_path / "p.jsonl"), "-o", tagged, *MINI).exit_code == 0
    # the packaged taxonomy, not the one it was tagged with
    result = run("stats", tagged, "--taxonomy", default_taxonomy_path())
    assert result.exit_code == 0
    assert result.stderr.startswith(
        f"Warning: {tagged}: paper 1 was tagged with taxonomy version test-1"
    )
    assert run("stats", tagged, *MINI).stderr == ""
    assert run("stats", tagged).stderr == ""  # the one it was tagged with, found by its sha256
