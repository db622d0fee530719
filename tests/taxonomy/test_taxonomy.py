"""Taxonomy loading: the shipped file is valid and complete; broken files say where and how; a
file that is not UTF-8, nests too deep, expands YAML aliases without bound or holds phrases too
long is one error line, said before it costs time or memory."""

from __future__ import annotations

import time

import pytest

from tagger import TaxonomyError, load_taxonomy
from tagger.taxonomy.loading import parse_taxonomy
from tagger.taxonomy.schemes import schemes

from ..conftest import AREA_YAML, error_line, run, write_taxonomy

GOOD_AREA = """\
  - id: rl
    name: Reinforcement learning
    aliases: [reinforcement learning]
    crosswalk: {iclr: [reinforcement learning], icml: [Reinforcement Learning],
                iclr_topic: [Reinforcement Learning]}
"""


def _errors(text: str) -> list[str]:
    with pytest.raises(TaxonomyError) as caught:
        parse_taxonomy(text, source="t.yaml")
    return caught.value.problems


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # a typo in a field name: the line, and the fix
        (
            GOOD_AREA
            + "  - id: rl.offline\n    name: Offline RL\n    parent: rl\n    alias: [x]\n",
            "t.yaml line 11: area 'rl.offline', field 'alias': unknown field (did you mean "
            "'aliases'?)",
        ),
        (
            GOOD_AREA + "  - id: rl.offline\n    name: Offline RL\n    parent: rl.x\n",
            "t.yaml line 10: area 'rl.offline' names parent 'rl.x', which does not exist (did you "
            "mean 'rl'?)",
        ),
        (
            GOOD_AREA + "  - id: rl\n    name: Again\n",
            "t.yaml line 8: area id 'rl' is used twice (first on line 3); ids must be unique",
        ),
        (
            GOOD_AREA + "  - id: x\n    name: X\n    patterns: ['(unclosed']\n",
            "t.yaml line 10: area 'x', field 'patterns': regular expression '(unclosed' does not "
            "compile",
        ),
        (
            GOOD_AREA + "  - id: x\n    name: X\n    crosswalk: {iclr: [reinforcment learning]}\n",
            "t.yaml line 10: area 'x': 'reinforcment learning' is not one of the iclr labels (did "
            "you "
            "mean 'reinforcement learning'?)",
        ),
        (
            GOOD_AREA + "  - id: x\n    name: X\n    crosswalk:\n      icml: [Deep Learning]\n"
            "      iclrr: [reinforcement learning]\n",
            "t.yaml line 12: area 'x': crosswalk scheme 'iclrr' is not one of iclr, icml, "
            "iclr_topic, neurips (did you mean 'iclr'?)",
        ),
        (
            GOOD_AREA + "  - id: Bad Id\n    name: X\n",
            "t.yaml line 8: area 'Bad Id', field 'id': area id 'Bad Id' must be lower-case",
        ),
        (
            GOOD_AREA + "  - id: x\n",
            "t.yaml line 8: area 'x', field 'name': required field is missing",
        ),
        (
            GOOD_AREA
            + "  - id: a\n    name: A\n    parent: b\n  - id: b\n    name: B\n    parent: a\n",
            "area 'a' is its own ancestor (a -> b -> a); parents must form a tree",
        ),
        (
            GOOD_AREA + "  - id: x\n    name: X\n    acronyms: [two words]\n",
            "acronym 'two words' must be one word",
        ),
        (
            GOOD_AREA + "  - id: rl.theory\n    name: T\n    parent: rl\n    facet: true\n",
            "t.yaml line 11: area 'rl.theory' is marked 'facet' but has a parent; only a root can "
            "be a facet",
        ),
    ],
)
def test_broken_taxonomy_errors_name_line_and_fix(body, expected):
    problems = _errors('version: "1"\nareas:\n' + body)
    assert any(expected in problem for problem in problems), problems


def test_yaml_that_would_build_objects_is_refused():
    problems = _errors('version: "1"\nareas: !!python/object/apply:os.system ["echo hi"]\n')
    assert problems[0].startswith("t.yaml line 2: could not determine a constructor")
    assert "YAML tags that build objects are not allowed" in problems[0]


def test_not_yaml_and_missing_file(tmp_path):
    assert _errors("version: [unclosed\n")[0].startswith("t.yaml line 2:")
    with pytest.raises(TaxonomyError, match="no such taxonomy file"):
        load_taxonomy(tmp_path / "nope.yaml")
    with pytest.raises(TaxonomyError, match="is a directory"):
        load_taxonomy(tmp_path)


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb = write_taxonomy(tmp_path, 'version: "1"\n' + "\n".join(levels) + "\nareas: []\n")
    started = time.monotonic()
    line = error_line(run("taxonomy", "check", "--taxonomy", bomb))
    assert "YAML aliases expand this to more than 1,000,000 values" in line
    assert time.monotonic() - started < 20  # 10^9 values would take minutes and gigabytes


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            'version: "1"\nareas:\n  - id: caf\xe9\n    name: X\n'.encode("latin-1"),
            "invalid UTF-8 (byte 0xE9); save the file as UTF-8",
        ),
        ('version: "1"\nareas: []\n'.encode("utf-16"), "the file is UTF-16; save it as UTF-8"),
        (
            # 990 deep passes libyaml's own limit and used to overflow Python's stack
            'version: "1"\nareas: []\nx: ' + "[" * 990 + "]" * 990 + "\n",
            "the YAML nests more than 32 levels deep",
        ),
        (
            'version: "1"\nareas:\n'
            + "".join(
                AREA_YAML.format(
                    id=f"a{i}", name=f"A{i}", more=f"    parent: a{i - 1}\n" if i else ""
                )
                for i in range(1000)
            ),
            "area 'a16' lies more than 16 levels deep",
        ),
        (
            'version: "1"\nareas:\n'
            + AREA_YAML.format(
                id="x", name="X", more="    aliases: [" + " ".join(["word"] * 3000) + "]\n"
            ),
            "has 3,000 words and 14,999 characters; a rule phrase may have up to 12 words",
        ),
    ],
    ids=["latin-1", "utf-16", "nested-990", "chain-1000", "alias-3000-words"],
)
def test_a_taxonomy_unreadable_or_beyond_the_limits_is_one_error_line(tmp_path, content, message):
    path = write_taxonomy(tmp_path, content)
    assert message in error_line(run("taxonomy", "check", "--taxonomy", path))
    assert message in run("taxonomy", "lint", "--taxonomy", path).stdout


def test_shipped_taxonomy_is_a_deep_tree_covering_every_conference_area():
    taxonomy = load_taxonomy()
    assert len(taxonomy.areas) >= 60
    assert max(len(taxonomy.path(a.id)) for a in taxonomy.areas) >= 2
    for area in taxonomy.areas:  # every topic maps into every scheme, itself or through a parent
        if taxonomy.facet(area.id) is None:
            assert set(taxonomy.crosswalk(area.id)) == set(schemes()), area.id
    used = {
        scheme: {label for area in taxonomy.areas for label in area.crosswalk.get(scheme, [])}
        for scheme in schemes()
    }
    assert set(schemes()["iclr"].labels) <= used["iclr"]
    icml_areas = {label.split("->")[0] for label in schemes()["icml"].labels}
    assert icml_areas <= {label.split("->")[0] for label in used["icml"]}
    for wanted in [
        "rl.offline",
        "rl.multi_agent",
        "rl.model_based",
        "theory.bandits",
        "llm.alignment",
        "llm.reasoning",
        "llm.efficiency",
        "llm.agents",
        "llm.evaluation",
        "llm.rag",
        "graph.gnn",
        "graph.theory",
    ]:
        assert wanted in taxonomy.by_id, wanted


def test_schemes_come_from_one_file():
    """schemes.json names each scheme's levels; eval's choices and the taxonomy's checks use it."""
    from tagger.cli.eval import eval_

    assert list(schemes()) == ["iclr", "icml", "iclr_topic", "neurips"]
    assert {s.levels for s in schemes().values()} == {("label",), ("area", "subtopic")}
    scheme_option = next(p for p in eval_.params if p.name == "scheme")
    assert list(scheme_option.type.choices) == list(schemes())
    assert all(len(set(s.labels)) == len(s.labels) > 10 for s in schemes().values())


def test_line_of_names_the_line_of_a_rule(tmp_path):
    taxonomy = parse_taxonomy('version: "1"\nareas:\n' + GOOD_AREA, source="t.yaml")
    assert taxonomy.line_of("rl") == 3
    assert taxonomy.line_of("rl", "aliases", 0) == 5
    assert taxonomy.line_of("rl", "cues", 0) == 3  # no cues: the area's own line
