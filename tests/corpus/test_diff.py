"""tagger.corpus.diff on small hand-made tagged files, the expected changes worked out by hand."""

from __future__ import annotations

import io
import json
import sys

import pytest

from tagger.corpus.diff import AreaDiff, EvidenceChange, TagChange, diff_tagged, render
from tagger.errors import InputError, TaggerError
from tagger.io.parquet import ParquetWriter
from tagger.records import AreaTag, Evidence

from ..conftest import tagged_record, write_tagged

RL, MARL, GRAPHS, GNN = ["rl"], ["rl", "rl.multi-agent"], ["graphs"], ["graphs", "graphs.gnn"]
THEORY = ["type", "type.theory"]


def _diff(tmp_path, old, new, **options):
    return diff_tagged(
        write_tagged(tmp_path / "old.jsonl", old),
        write_tagged(tmp_path / "new.jsonl", new),
        **options,
    )


def _hit(area, rule, change):
    """As tagged_record makes it, on the first character of the abstract "x"."""
    return EvidenceChange(area, "alias", rule, "x", "abstract", 0, 1, 1.0, None, change)


def test_identical_files_do_not_differ(tmp_path):
    records = [
        tagged_record("a", [RL, MARL], evidence=[("rl.multi-agent", "MARL")], facets=[THEORY]),
        tagged_record("b", [GRAPHS]),
    ]
    diff = _diff(tmp_path, records, records)
    assert (diff.shared, diff.differ, diff.only_old, diff.only_new) == (2, 0, 0, 0)
    assert not diff.differs
    assert diff.papers == []
    assert [(row.id, row.gained, row.lost, row.before, row.after) for row in diff.areas] == [
        ("graphs", 0, 0, 1, 1),
        ("rl", 0, 0, 1, 1),
        ("rl.multi-agent", 0, 0, 1, 1),
        ("type", 0, 0, 1, 1),
        ("type.theory", 0, 0, 1, 1),
    ]
    assert render(diff) == "no differences in tags or facets among 2 papers\n"


def test_a_gained_tag_carries_its_new_evidence_marked(tmp_path):
    old = tagged_record("a", [MARL], evidence=[("rl.multi-agent", "MARL")])
    new = tagged_record(
        "a",
        [MARL, RL, GRAPHS],
        evidence=[("rl.multi-agent", "MARL"), ("rl", "rl.multi-agent", "MARL"), ("graphs", "gl")],
    )
    (paper,) = _diff(tmp_path, [old], [new]).papers
    assert (paper.id, paper.present, paper.main, paper.facets) == ("a", "both", None, [])
    assert paper.tags == [
        # rl came from a hit OLD had already (for rl.multi-agent): kept, not added
        TagChange("rl", "gained", None, 0.5, (_hit("rl.multi-agent", "MARL", "kept"),)),
        TagChange("graphs", "gained", None, 0.5, (_hit("graphs", "gl", "added"),)),
    ]


def test_a_lost_tag_carries_its_old_evidence(tmp_path):
    old = tagged_record(
        "a", [GRAPHS, RL], evidence=[("graphs", "gl"), ("graphs", "MP"), ("rl", "RL")]
    )
    new = tagged_record("a", [RL], evidence=[("rl", "RL"), ("rl", "graphs", "MP")])
    (paper,) = _diff(tmp_path, [old], [new]).papers
    assert paper.tags == [
        TagChange(
            "graphs",
            "lost",
            0.5,
            None,
            (_hit("graphs", "gl", "removed"), _hit("graphs", "MP", "kept")),
        )
    ]
    assert paper.main == ("graphs", "rl")


def test_main_tag_change_alone_is_a_difference(tmp_path):
    diff = _diff(tmp_path, [tagged_record("a", [GRAPHS, RL])], [tagged_record("a", [RL, GRAPHS])])
    (paper,) = diff.papers
    assert (paper.main, paper.tags, diff.differ) == (("graphs", "rl"), [], 1)
    assert [(row.gained, row.lost) for row in diff.areas] == [(0, 0), (0, 0)]


def test_score_change_lists_evidence_added_and_removed(tmp_path):
    old = [
        tagged_record("a", [(RL, 0.5)], evidence=[("rl", "RL"), ("rl", "MDP")]),
        tagged_record("b", [(RL, 0.5)], evidence=[("rl", "RL")]),
    ]
    new = [
        tagged_record("a", [(RL, 0.75)], evidence=[("rl", "RL"), ("rl", "q-learning")]),
        tagged_record("b", [(RL, 0.5)], evidence=[("rl", "MDP")]),  # evidence only: no difference
    ]
    diff = _diff(tmp_path, old, new)
    assert (diff.shared, diff.differ) == (2, 1)
    (paper,) = diff.papers
    assert paper.tags == [
        TagChange(
            "rl",
            "score",
            0.5,
            0.75,
            (_hit("rl", "q-learning", "added"), _hit("rl", "MDP", "removed")),
        )
    ]


def test_facets_are_kept_apart_from_tags(tmp_path):
    old = tagged_record("a", [RL], facets=[(THEORY, 0.4)])
    new = tagged_record("a", [RL], facets=[(["type", "type.dataset"], 0.6)])
    diff = _diff(tmp_path, [old], [new])
    (paper,) = diff.papers
    assert paper.tags == []
    assert [(c.id, c.change, c.old_score, c.new_score) for c in paper.facets] == [
        ("type.dataset", "gained", None, 0.6),
        ("type.theory", "lost", 0.4, None),
    ]
    assert render(diff).splitlines()[-2:] == ["  + facet type.dataset (0.60)"] + [
        "  - facet type.theory (0.40)"
    ]


def test_areas_count_ancestors_through_the_path(tmp_path):
    old = [tagged_record("a", []), tagged_record("b", [MARL]), tagged_record("c", [GNN])]
    new = [tagged_record("a", [MARL]), tagged_record("b", [RL]), tagged_record("c", [GNN])]
    diff = _diff(tmp_path, old, new)
    assert diff.areas == [
        AreaDiff("rl.multi-agent", gained=1, lost=1, before=1, after=1),
        AreaDiff("rl", gained=1, lost=0, before=1, after=2),  # b kept rl: no loss
        AreaDiff("graphs", 0, 0, 1, 1),
        AreaDiff("graphs.gnn", 0, 0, 1, 1),
    ]


def test_papers_in_one_file_only(tmp_path):
    old = [tagged_record("a", [RL], title="Only old"), tagged_record("b", [RL])]
    new = [tagged_record("b", [RL]), tagged_record("c", [GRAPHS], title="Only new")]
    diff = _diff(tmp_path, old, new)
    assert (diff.shared, diff.differ, diff.only_old, diff.only_new, diff.differs) == (
        1,
        0,
        1,
        1,
        True,
    )
    assert [(p.id, p.present, p.title) for p in diff.papers] == [
        ("c", "new", "Only new"),
        ("a", "old", "Only old"),
    ]
    # whole files counted before and after; gained and lost only among papers in both
    assert AreaDiff("graphs", 0, 0, 0, 1) in diff.areas
    assert AreaDiff("rl", 0, 0, 2, 1) in diff.areas


def test_files_with_no_paper_in_common(tmp_path):
    diff = _diff(tmp_path, [tagged_record("a", [RL])], [tagged_record("b", [RL])])
    assert (diff.shared, diff.only_old, diff.only_new, diff.differs) == (0, 1, 1, True)
    assert render(diff).splitlines()[0] == (
        "0 of 0 papers differ in tags or facets; 1 paper only in OLD, 1 paper only in NEW"
    )


def test_repeated_ids_pair_by_occurrence(tmp_path):
    old = [tagged_record("x", [RL]), tagged_record("x", [GRAPHS])]
    new = [tagged_record("x", [RL]), tagged_record("x", [GNN]), tagged_record("x", [RL])]
    diff = _diff(tmp_path, old, new)
    assert (diff.shared, diff.differ, diff.only_new) == (2, 1, 1)
    assert [(p.occurrence, p.present, [c.id for c in p.tags]) for p in diff.papers] == [
        (2, "both", ["graphs.gnn", "graphs"]),
        (3, "new", []),
    ]
    assert render(diff).splitlines()[-7:] == [
        "x #2",
        "  + graphs.gnn (0.50)",
        "  - graphs (0.50)",
        "  main: graphs → graphs.gnn",
        "",
        "x #3",
        "  only in NEW",
    ]


def test_reordered_new_file_pairs_by_id_and_lists_in_new_order(tmp_path):
    old = [tagged_record(str(i), [RL]) for i in range(6)]
    new = [tagged_record(str(i), [GRAPHS] if i in (2, 5) else [RL]) for i in reversed(range(6))]
    diff = _diff(tmp_path, old, new)
    assert (diff.shared, diff.differ, diff.only_old, diff.only_new) == (6, 2, 0, 0)
    assert [paper.id for paper in diff.papers] == ["5", "2"]  # paired as 2, then 5
    assert diff.areas[:2] == [AreaDiff("graphs", 2, 0, 0, 2), AreaDiff("rl", 0, 2, 6, 4)]


def test_as_dict_is_exact_json(tmp_path):
    old = tagged_record("a", [(RL, 0.1234567890123)], title="T")
    new = tagged_record("a", [(RL, 0.1234567890124)], title="T", facets=[THEORY])
    data = _diff(tmp_path, [old], [new]).as_dict()
    assert json.loads(json.dumps(data)) == data
    assert sorted(data) == [
        "areas",
        "compared",
        "differ",
        "differs",
        "new",
        "old",
        "only_in_new",
        "only_in_old",
        "papers",
    ]
    assert data["old"] == str(tmp_path / "old.jsonl")
    (paper,) = data["papers"]
    assert paper["tags"] == [
        {
            "id": "rl",
            "change": "score",
            "old_score": 0.1234567890123,
            "new_score": 0.1234567890124,
            "evidence": [],
        }
    ]
    assert paper["facets"][0]["change"] == "gained"
    assert (paper["id"], paper["occurrence"], paper["in"], paper["main"]) == ("a", 1, "both", None)
    assert data["areas"][0] == {"id": "type", "gained": 1, "lost": 0, "before": 0, "after": 1}


def _evidence(area, rule, text, start, kind="alias"):
    return Evidence(
        area=area,
        kind=kind,
        rule=rule,
        text=text,
        field="abstract",
        start=start,
        end=start + len(text),
        weight=0.5,
    )


def test_render_text(tmp_path):
    abstract = "We study offline RL with graph learning."
    old = tagged_record(
        "p1",
        [(GRAPHS, 0.62), (RL, 0.71)],
        title="Offline reinforcement learning on graphs,\x1b[2J with a title long enough to cut",
        abstract=abstract,
    )
    old.tags[0].evidence = [_evidence("graphs", "graph learning", "graph learning", 25)]
    old.tags[1].evidence = [_evidence("rl", "RL", "RL", 17, "acronym")]
    new = old.model_copy(deep=True)
    rl = new.tags[1]
    rl.score = 0.55
    new.tags = [
        AreaTag(
            id="rl.offline",
            name="Offline RL",
            path=["rl", "rl.offline"],
            score=0.8,
            evidence=[_evidence("rl.offline", "offline RL", "offline RL", 9)],
        ),
        rl,
    ]
    diff = _diff(tmp_path, [old, tagged_record("p2", [RL])], [new, tagged_record("p2", [RL])])
    assert render(diff) == (
        "1 of 2 papers differs in tags or facets; 0 papers only in OLD, 0 papers only in NEW\n"
        "\n"
        "area        gained  lost  before → after\n"
        "graphs           0     1       1 → 0\n"
        "rl.offline       1     0       0 → 1\n"
        "\n"
        "p1  Offline reinforcement learning on graphs,\\x1b[2J with a title long enou…\n"
        '  + rl.offline (0.80)\n      + `offline RL` [alias, rl.offline] "offline RL"\n'
        "  - graphs (0.62)\n"
        '      - `graph learning` [alias, graphs] "graph learning"\n'
        "  ~ rl 0.71 → 0.55\n"
        "  main: graphs → rl.offline\n"
    )
    assert render(diff, limit=0).endswith("0 → 1\n\n... and 1 more paper\n")


def test_close_scores_are_told_apart_and_ids_printed_safely(tmp_path):
    paper_id = "a\u202eb"  # a right-to-left override: ids may hold one, terminals obey it
    old, new = tagged_record(paper_id, [(RL, 0.501)]), tagged_record(paper_id, [(RL, 0.502)])
    assert render(_diff(tmp_path, [old], [new])).splitlines()[-2:] == [
        "a\\u202eb",
        "  ~ rl 0.501 → 0.502",
    ]


def test_parquet_input_reads_like_jsonl(tmp_path):
    old = [tagged_record("a", [RL]), tagged_record("b", [GRAPHS], facets=[THEORY])]
    new = [tagged_record("a", [MARL]), tagged_record("b", [GRAPHS])]
    writer = ParquetWriter(tmp_path / "old.parquet")
    for record in old:
        writer.write(record)
    writer.close()
    from_parquet = diff_tagged(tmp_path / "old.parquet", write_tagged(tmp_path / "new.jsonl", new))
    from_jsonl = _diff(tmp_path, old, new)
    assert from_parquet.differ == 2
    assert from_parquet.papers == from_jsonl.papers
    assert from_parquet.areas == from_jsonl.areas


def test_reads_one_file_from_stdin(tmp_path, monkeypatch):
    old = write_tagged(tmp_path / "old.jsonl", [tagged_record("a", [RL])])
    new = write_tagged(tmp_path / "new.jsonl", [tagged_record("a", [GRAPHS])])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(old.read_bytes())))
    diff = diff_tagged("-", new)
    assert (diff.old, diff.differ) == ("<stdin>", 1)
    with pytest.raises(TaggerError, match=r"^OLD and NEW cannot both be standard input \(-\)"):
        diff_tagged("-", "-")


def test_a_file_that_is_not_tagged_output(tmp_path):
    good = write_tagged(tmp_path / "good.jsonl", [tagged_record("a", [RL])])
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(good.read_bytes() + b'{"abstract": "x"}\n')
    with pytest.raises(InputError) as error:
        diff_tagged(good, bad)
    assert str(error.value) == f"{bad} line 2: not a line of tagged JSONL (run `tagger tag` first)"
    skipped = []
    assert diff_tagged(good, bad, skip=skipped.append).shared == 1
    assert [error.line for error in skipped] == [2]


def test_table_columns_widen_for_large_counts(tmp_path):
    old = [tagged_record(str(i), [GRAPHS]) for i in range(1000)]
    new = [tagged_record(str(i), [RL]) for i in range(1000)]
    assert render(_diff(tmp_path, old, new), limit=0).splitlines()[2:5] == [
        "area    gained   lost  before → after",
        "graphs       0  1,000   1,000 → 0",
        "rl       1,000      0       0 → 1,000",
    ]


def test_the_diff_command_exits_like_diff(tmp_path):
    """0: the same tags; 1: differences; 2: trouble (a file that is not tagged output)."""
    from click.testing import CliRunner

    from tagger.cli import main

    old = write_tagged(tmp_path / "old.jsonl", [tagged_record("a", [RL]), tagged_record("b", [])])
    new = write_tagged(tmp_path / "new.jsonl", [tagged_record("a", [RL, GRAPHS])])
    runner = CliRunner()
    same = runner.invoke(main, ["diff", str(old), str(old)])
    assert (same.exit_code, same.stdout) == (0, "no differences in tags or facets among 2 papers\n")
    changed = runner.invoke(main, ["diff", str(old), str(new), "--json"])
    assert changed.exit_code == 1
    data = json.loads(changed.stdout)
    assert (data["differ"], data["only_in_old"], data["differs"]) == (1, 1, True)
    assert [(t["id"], t["change"]) for t in data["papers"][0]["tags"]] == [("graphs", "gained")]
    papers = tmp_path / "papers.jsonl"
    papers.write_text('{"abstract": "not tagged"}\n')
    trouble = runner.invoke(main, ["diff", str(old), str(papers)])
    assert trouble.exit_code == 2
    assert trouble.stderr == (
        f"Error: {papers} line 1: not a line of tagged JSONL (run `tagger tag` first)\n"
    )
    apart = write_tagged(tmp_path / "apart.jsonl", [tagged_record("z", [RL])])
    unrelated = runner.invoke(main, ["diff", str(old), str(apart)])
    assert unrelated.exit_code == 1
    assert "have no paper id in common" in unrelated.stderr
