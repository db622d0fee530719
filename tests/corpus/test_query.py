"""`tagger filter` and its --where expressions: parsing, meaning, and the errors a user sees
(one line, however deep an expression nests); what it writes: CSV cells that a spreadsheet
reads as text, never as a formula, each on its own row."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from tagger.cli import main
from tagger.corpus.query import QueryError, meant, parse_query
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import EXAMPLES, MINI, MINI_TAXONOMY, error_line, run, tagged_record, write_tagged

KNOWN = {"rl", "rl.multi-agent", "graphs", "graphs.gnn", "llm"}


@pytest.mark.parametrize(
    ("expression", "areas", "expected"),
    [
        ("rl", {"rl"}, True),
        ("rl and not llm", {"rl"}, True),
        ("rl and not llm", {"rl", "llm"}, False),
        ("graphs.gnn or (rl and llm)", {"rl", "llm"}, True),
        ("graphs.gnn or (rl and llm)", {"rl"}, False),
        ("not (rl or graphs)", set(), True),
        ("rl or graphs and llm", {"rl"}, True),  # 'and' binds tighter than 'or'
        ("(rl or graphs) and llm", {"rl"}, False),
        ("not not rl", {"rl"}, True),
    ],
)
def test_expressions(expression, areas, expected):
    assert parse_query(expression, KNOWN)(areas) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("rll and llm", "unknown area 'rll' (did you mean rl"),
        ("rl and", "the expression ends too early"),
        ("(rl or llm", "a '(' is not closed"),
        ("rl llm", "unexpected 'llm' after a complete expression"),
        ("rl and or llm", "expected an area id, got 'or'"),
        ("rl & llm", "cannot read '& llm'"),
        ("   ", "--where needs an expression"),
    ],
)
def test_malformed_expressions_say_what_is_wrong(expression, message):
    with pytest.raises(QueryError, match=None) as caught:
        parse_query(expression, KNOWN)
    assert message in str(caught.value)


def test_filter_where_venue_year_and_formats(tmp_path):
    rows = [
        ("a", "ICML", 2025, [["rl"], ["rl", "rl.multi-agent"]], [["type", "type.theory"]]),
        ("b", "ICLR", 2025, [["rl"], ["graphs"]], [["type", "type.dataset"]]),
        ("c", "ICML", 2024, [["graphs", "graphs.gnn"]], [["type", "type.theory"]]),
    ]
    path = write_tagged(
        tmp_path / "tagged.jsonl",
        [
            tagged_record(i, paths, title=f"Paper {i}", venue=v, year=y, facets=types)
            for i, v, y, paths, types in rows
        ],
    )

    def run(*args):
        result = CliRunner().invoke(
            main, ["filter", str(path), *args, "--taxonomy", str(MINI_TAXONOMY)]
        )
        assert result.exit_code == 0, result.stderr
        return result.stdout

    assert run("--where", "rl and not graphs", "--output-format", "ids") == "a\n"
    assert run("--where", "graphs", "--venue", "icml", "--output-format", "titles") == "Paper c\n"
    assert run("--area", "rl", "--year", "2025", "--output-format", "ids") == "a\nb\n"
    assert run("--where", "graphs.gnn or rl.multi-agent", "--output-format", "csv") == (
        "id,title,venue,year,tags,types\na,Paper a,ICML,2025,rl;rl.multi-agent,type.theory\n"
        "c,Paper c,ICML,2024,graphs.gnn,type.theory\n"
    )
    # contribution types (facet tags) filter like topics
    assert run("--where", "rl and type.theory", "--output-format", "ids") == "a\n"
    assert run("--area", "type", "--where", "not type.theory", "--output-format", "ids") == "b\n"
    bad = CliRunner().invoke(
        main, ["filter", str(path), "--where", "rl and (", "--taxonomy", str(MINI_TAXONOMY)]
    )
    assert bad.exit_code == 2  # a usage error, as the README says
    assert bad.stderr.splitlines()[-1] == "Error: --where 'rl and (': the expression ends too early"


@pytest.mark.parametrize(
    ("args", "stdout", "stderr"),
    [
        (["--area", "graphs.gnn"], "", ""),  # a match: nothing said
        (
            ["--where", "rl and graphs.gnn"],
            "",
            "Note: no paper matched the filter (3 papers read)\n",
        ),
        (
            ["--venue", "NeurIPS", "--output-format", "ids"],
            "",
            "Note: no paper matched the filter (3 papers read)\n",
        ),
        (
            ["--year", "2030", "--output-format", "csv"],
            "id,title,venue,year,tags,types\n",
            "Note: no paper matched the filter (3 papers read)\n",
        ),
    ],
)
def test_a_filter_that_keeps_nothing_says_so_on_stderr(tmp_path, args, stdout, stderr):
    """An empty stdout alone cannot tell a filter that matched nothing from one that read
    nothing; the note goes to stderr, so the data on stdout stays only data, and the exit code
    stays 0 (keeping no paper is an answer, not an error)."""
    path = write_tagged(
        tmp_path / "tagged.jsonl",
        [tagged_record(i, [["rl"]] if i != "c" else [["graphs", "graphs.gnn"]]) for i in "abc"],
    )
    result = CliRunner().invoke(
        main, ["filter", str(path), *args, "--taxonomy", str(MINI_TAXONOMY)]
    )
    assert result.exit_code == 0
    if stderr:
        assert (result.stdout, result.stderr) == (stdout, stderr)
    else:  # the paper kept, and not a word on stderr
        assert result.stdout.count("\n") == 1 and result.stderr == ""


def test_filter_tagged_from_python():
    """The library function the command uses: areas (any of), where, venue, year, min_score."""
    from tagger import filter_tagged

    records = [
        tagged_record("a", [(["rl"], 0.9), (["graphs"], 0.3)], venue="ICML", year=2025),
        tagged_record("b", [(["rl", "rl.multi-agent"], 0.6)], venue="ICLR", year=2025),
        tagged_record("c", [(["graphs", "graphs.gnn"], 0.7)], venue="ICML", year=2024),
    ]

    def ids(**criteria):
        return [r.paper.id for r in filter_tagged(records, KNOWN, **criteria)]

    assert ids(areas=["rl"]) == ["a", "b"]
    assert ids(areas=["rl.multi-agent", "graphs.gnn"]) == ["b", "c"]
    assert ids(areas=["graphs"], min_score=0.5) == ["c"]
    assert ids(where="rl and graphs") == ["a"]
    assert ids(areas=["rl"], where="not graphs") == ["b"]
    assert ids(venue="icml", year=2025) == ["a"]
    assert ids() == ["a", "b", "c"]
    with pytest.raises(QueryError, match="'rl or llm' is not an area id"):
        ids(areas=["rl or llm"])


@pytest.mark.parametrize("score", [float("nan"), float("inf"), -0.5, 2, "0.5", True])
def test_a_min_score_that_is_no_score_is_refused_not_a_filter_that_keeps_nothing(score):
    """NaN compares false with every score: a filter of it would keep nothing, silently."""
    from tagger import filter_tagged

    wanted = r"The 'min_score' parameter of paper_filter must be a float in \[0, 1\]"
    with pytest.raises(ValueError, match=wanted):
        filter_tagged([tagged_record("a", [["rl"]])], KNOWN, min_score=score)


@pytest.mark.parametrize(
    ("unknown", "guesses"),
    [
        ("gnn", ["graph.gnn"]),  # the last part of an id
        ("GNNs", ["graph.gnn"]),
        ("llms", ["llm", "rl.llm", "safety.llm", "llm.pretraining"]),  # the shortest first
        ("transformer", ["dl.attention"]),  # a word of the name "Attention & transformer ..."
        ("multi-agent", ["rl.multi_agent"]),
        ("bayesian", ["prob.bayesian", "opt.bayesopt"]),  # last part, then name
        ("rl.ofline", ["rl.offline", "rl.policy", "rl.safe", "rl.planning"]),  # spelling
    ],
)
def test_an_unknown_area_is_matched_by_its_last_part_name_then_spelling(unknown, guesses):
    assert meant(unknown, load_taxonomy().by_id) == guesses


def test_the_help_example_of_where_runs_and_its_short_form_is_pointed_to_graph_gnn():
    """`tagger filter --help` shows "graph.gnn or (graph and theory)"; the short "gnn" is a
    usage error that names graph.gnn, not what is closest in spelling."""
    tagged = str(EXAMPLES / "tagged" / "icml2025-abstracts.jsonl")
    runner = CliRunner()
    help_text = runner.invoke(main, ["filter", "--help"]).stdout
    example = " ".join(re.search(r'"([^"]+)"', help_text[help_text.index("--where") :])[1].split())
    assert example == "graph.gnn or (graph and theory)"
    result = runner.invoke(main, ["filter", tagged, "--where", example, "--output-format", "ids"])
    assert result.exit_code == 0, result.stderr
    wrong = runner.invoke(main, ["filter", tagged, "--where", "gnn or (graph and theory)"])
    assert wrong.exit_code == 2
    assert wrong.stderr.splitlines()[-1] == (
        "Error: unknown area 'gnn' (did you mean graph.gnn?); `tagger taxonomy check` lists them"
    )


@pytest.mark.parametrize("expression", ["(" * 1000 + "rl" + ")" * 1000, "not " * 3000 + "rl"])
def test_deeply_nested_where_is_one_error(tmp_path, expression):
    tagged = write_tagged(tmp_path / "t.jsonl", [tagged_record("a", [["rl"]])])
    line = error_line(run("filter", tagged, "--where", expression, *MINI), code=2)
    assert "nest more than 50 deep" in line


def test_csv_cells_are_neither_formulas_nor_split_rows(tmp_path):
    record = tagged_record("a", [["rl"]], title='=HYPERLINK("http://x")\rsecond', venue="@SUM")
    tagged = write_tagged(tmp_path / "t.jsonl", [record])
    result = run("filter", tagged, "--output-format", "csv", *MINI)
    assert result.stdout_bytes == (
        b'id,title,venue,year,tags,types\r\na,"\'=HYPERLINK(""http://x"")\rsecond",\'@SUM,,rl,\r\n'
    )
