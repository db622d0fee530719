"""`tagger taxonomy lint`: one broken taxonomy per fault, each reported on its YAML line;
patterns read as the regex engine that runs them reads them; a corpus that is not tagged
output is one error line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tagger.cli import main
from tagger.io.display import short_path
from tagger.taxonomy.lint import PAPERS_PER_AREA, can_backtrack_catastrophically, lint_taxonomy

from ..conftest import (
    AREA_YAML,
    DATA,
    MINI,
    error_line,
    run,
    tagged_record,
    write_tagged,
    write_taxonomy,
)

BROKEN = DATA / "taxonomies"
NO_RULES = (
    "has no rules and no sub-areas, so nothing can tag it (add aliases, cues, acronyms or "
    "patterns, or remove it)"
)


def lint(*args):
    return CliRunner().invoke(main, ["taxonomy", "lint", *args], catch_exceptions=False)


@pytest.mark.parametrize(
    ("name", "exit_code", "findings"),
    [
        (
            "duplicate-id",
            1,
            ["line 9: error: area id 'rl' is used twice (first on line 4); ids must be unique"],
        ),
        (
            "unknown-parent",
            1,
            [
                "line 11: error: area 'rl.offline' names parent 'rl.x', which does not "
                "exist (did you mean 'rl'?)"
            ],
        ),
        (
            "cycle",
            1,
            [
                "line 11: error: area 'a' is its own ancestor (a -> b -> a); parents must form a "
                "tree",
                "line 15: error: area 'b' is its own ancestor (b -> a -> b); parents must form a "
                "tree",
            ],
        ),
        (
            "invalid-regex",
            1,
            [
                "line 7: error: area 'rl', field 'patterns': regular expression "
                "'(unclosed' does not compile: missing ) at position 9"
            ],
        ),
        (
            "python-object-tag",
            1,
            [
                "line 3: error: could not determine a constructor for the tag "
                "'tag:yaml.org,2002:python/object/apply:os.system': YAML tags that build objects "
                "are not "
                "allowed; write plain strings, lists and mappings"
            ],
        ),
        (
            "duplicate-alias",
            0,
            [
                "line 13: warning: area 'bandits': alias 'Reinforcement Learnings' "
                "is also the alias 'reinforcement learning' of area 'rl' (line 6) "
                "(keep it in one area, or mark its line `# lint: shared, WHY`)"
            ],
        ),
        (
            "colliding-acronym",
            0,
            [
                "line 13: warning: area 'rl.robot': acronym 'RL' is also an "
                "acronym of area 'rl' (line 7) (keep it in one area, or write the "
                "long forms as aliases)"
            ],
        ),
        (
            "common-word-acronym",
            0,
            [
                "line 7: warning: area 'rl': acronym 'MAP' is a common English "
                "word (it matches ordinary upper-case text; use a pattern with "
                "context instead)"
            ],
        ),
        (
            "catastrophic-regex",
            0,
            [
                "line 9: warning: area 'rl': pattern '(\\w+\\s?)+ learning' can "
                "backtrack catastrophically: a repeat contains another unbounded "
                "repeat or overlapping alternatives (make the inner part match one "
                "way only)"
            ],
        ),
        ("area-without-rules", 0, [f"line 9: warning: area 'rl.offline': {NO_RULES}"]),
        (
            "missing-crosswalk",
            0,
            [
                "line 9: warning: area 'graphs': no iclr_topic crosswalk, its own "
                "or an ancestor's (add crosswalk labels to it or to a parent)"
            ],
        ),
        ("clean", 0, []),
        ("facet", 0, []),
        (
            "facet-root-rules",
            0,
            [
                "line 4: warning: area 'type': is a facet, and a facet's root is never listed, "
                "so its own rules tag nothing (move them to the value they are evidence of)"
            ],
        ),
    ],
)
def test_each_fault_is_one_line_with_its_yaml_line(name, exit_code, findings):
    path = BROKEN / f"{name}.yaml"
    result = lint("--taxonomy", str(path))
    # a taxonomy inside the working directory is named relative to it
    assert result.stdout.splitlines() == [f"{short_path(path)} {finding}" for finding in findings]
    errors = len(findings) if exit_code else 0
    assert result.stderr == f"{errors} errors, {len(findings) - errors} warnings\n"
    assert result.exit_code == exit_code


# untagged papers enough for clean.yaml's two areas to be judged (PAPERS_PER_AREA each)
PADDING = [tagged_record(f"pad{k}", []) for k in range(2 * PAPERS_PER_AREA - 1)]


def test_corpus_reports_rules_that_never_fired_and_areas_never_tagged(tmp_path):
    # rl is tagged (with a sub-area's evidence, as a parent is), rl.offline never is
    corpus = write_tagged(
        tmp_path / "corpus.jsonl",
        [
            tagged_record(
                "a",
                [["rl"]],
                evidence=[("rl", "reinforcement learning"), ("rl", "rl.offline", "batch RL")],
            ),
            *PADDING,
        ],
    )
    path = BROKEN / "clean.yaml"
    result = lint("--taxonomy", str(path), "--corpus", str(corpus))
    path = short_path(path)
    assert result.stdout.splitlines() == [
        f"{path} line 4: warning: area 'rl': 1 of 2 rules never fired in corpus.jsonl: 'RL' "
        "(check their spelling, or remove them)",
        f"{path} line 9: warning: area 'rl.offline': never tagged in corpus.jsonl (check its rules "
        "against papers that should have it)",
        f"{path} line 9: warning: area 'rl.offline': 1 of 2 rules never fired in corpus.jsonl: "
        "'offline reinforcement learning' (check their spelling, or remove them)",
    ]
    assert result.exit_code == 0

    write_tagged(corpus, [tagged_record("a", []), *PADDING])
    result = lint("--taxonomy", str(path), "--corpus", str(corpus))
    never = (
        "never tagged in corpus.jsonl, and none of its 2 rules fired (check its rules "
        "against papers that should have it)"
    )
    assert result.stdout.splitlines() == [
        f"{path} line 4: warning: area 'rl': {never}",
        f"{path} line 9: warning: area 'rl.offline': {never}",
    ]


def test_a_corpus_too_small_for_its_taxonomy_gets_one_line_of_counts_not_advice(tmp_path):
    """19 papers cannot show that a rule of a 200-area taxonomy is unused: lint says how many
    areas and rules were silent and how large a corpus would tell, instead of a warning per area
    that advises removing rules."""
    corpus = write_tagged(
        tmp_path / "corpus.jsonl",
        [
            tagged_record("a", [["rl"]], evidence=[("rl", "reinforcement learning")]),
            *PADDING[:-1],  # one paper short of 10 an area
        ],
    )
    path = BROKEN / "clean.yaml"
    result = lint("--taxonomy", str(path), "--corpus", str(corpus))
    assert result.stdout.splitlines() == [
        f"{short_path(path)}: warning: corpus.jsonl holds 19 papers, too few to tell unused rules "
        "from rules no paper there called for: 1 of 2 areas were never tagged and 3 of 4 rules "
        "never fired (lint with 20 papers or more, 10 an area, to have them listed)"
    ]
    assert result.stderr.endswith("\n0 errors, 1 warnings\n")  # after the other-taxonomy warning
    assert result.exit_code == 0


def test_shipped_taxonomy_has_no_errors():
    findings = lint_taxonomy()
    assert [str(f) for f in findings if f.severity == "error"] == []
    result = lint()
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [str(f) for f in findings]  # findings and nothing else
    assert result.stderr == f"0 errors, {len(findings)} warnings\n"


@pytest.mark.parametrize(
    ("pattern", "dangerous"),
    [
        ("(a+)+", True),
        ("(a*)*", True),
        ("(a|a)*", True),
        (r"(\w+\s?)+", True),
        (r"(?:x\d+)*y", True),
        (r"\bQ-?functions?\b", False),
        ("(a|ab)*", False),
        ("(?:ab)+", False),
        ("(a+)?", False),
        ("(?:a++)+", False),
        ("(?>a+)+", False),
        (r"\b[A-Z][A-Za-z0-9]*-?Bench\b", False),
    ],
)
def test_nested_quantifiers_are_flagged(pattern, dangerous):
    assert can_backtrack_catastrophically(pattern) is dangerous


def test_lint_reads_patterns_as_the_engine_that_runs_them(tmp_path):
    path = write_taxonomy(
        tmp_path,
        'version: "1"\nareas:\n'
        + AREA_YAML.format(
            id="x", name="X", more="    patterns: ['\\p{Lu}{3,}RL\\b', '(a|aa)+$']\n"
        ),
    )
    result = run("taxonomy", "lint", "--taxonomy", path)
    assert result.exit_code == 0
    assert "pattern '(a|aa)+$' can backtrack catastrophically" in result.stdout
    assert "\\p{Lu}" not in result.stdout


def test_a_corpus_that_is_not_tagged_jsonl_is_an_error(tmp_path):
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text('{"abstract": "x"}\n')
    result = lint("--taxonomy", str(BROKEN / "clean.yaml"), "--corpus", str(corpus))
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {corpus} line 1: not a line of tagged JSONL (run `tagger tag` first)\n"
    )
    assert result.stdout == ""


def test_lint_corpus_that_is_not_utf8_is_one_error(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(b'{"paper": "caf\xe9"}\n')
    line = error_line(run("taxonomy", "lint", *MINI, "--corpus", corpus))
    assert line == f"Error: {corpus} line 1: not a line of tagged JSONL (run `tagger tag` first)"


SHARED = """\
version: "1"
areas:
  - id: rl
    name: Reinforcement learning
    aliases: [reinforcement learning, fair clustering]
    cues: [policy]
    crosswalk:
      iclr: [reinforcement learning]
      icml: [Reinforcement Learning]
      iclr_topic: [Reinforcement Learning]
  - id: clustering
    name: Clustering
    aliases:
      - k-means
      - fair clustering{mark}
    cues: [policy, reinforcement learning]
    crosswalk:
      iclr: [reinforcement learning]
      icml: [Reinforcement Learning]
      iclr_topic: [Reinforcement Learning]
"""


def test_a_cue_shared_is_what_cues_are_for_an_alias_shared_is_flagged_unless_marked(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(SHARED.replace("{mark}", ""))
    assert [f"line {f.line}: {f.message}" for f in lint_taxonomy(path)] == [
        "line 15: area 'clustering': alias 'fair clustering' is also the alias 'fair clustering' "
        "of area 'rl' (line 5) (keep it in one area, or mark its line `# lint: shared, WHY`)",
        # a cue that is another area's alias is flagged; the cue 'policy' of both is not
        "line 16: area 'clustering': cue 'reinforcement learning' is also the alias "
        "'reinforcement learning' of area 'rl' (line 5) (keep it in one area, or mark its line "
        "`# lint: shared, WHY`)",
    ]
    path.write_text(
        SHARED.replace("{mark}", "  # lint: shared, a paper on fair clustering is both")
    )
    assert [f.line for f in lint_taxonomy(path)] == [16]  # the mark is for its own line only


def test_the_shipped_taxonomy_lints_clean():
    """Each phrase it gives two areas says why on its line (`# lint: shared, ...`)."""
    result = lint()
    assert (result.stdout, result.stderr, result.exit_code) == ("", "0 errors, 0 warnings\n", 0)
