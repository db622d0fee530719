"""Taxonomy overlays: a file that `extends` another and says only what changes; one whose
`extends:` names a file that is no taxonomy is refused, and nothing of that file shown.

Each case writes an overlay over tests/data/mini-taxonomy.yaml (or the shipped taxonomy) and
checks the effective taxonomy, or the exact problem and the file and line it names.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from click.testing import CliRunner

from tagger.cli import main
from tagger.errors import TaxonomyError
from tagger.taxonomy.lint import lint_taxonomy
from tagger.taxonomy.loading import default_taxonomy_path, load_taxonomy, parse_taxonomy

from ..conftest import MINI_TAXONOMY, run


@pytest.fixture
def base(tmp_path):
    """A copy of the mini taxonomy beside the overlays, as base.yaml."""
    path = tmp_path / "base.yaml"
    shutil.copy(MINI_TAXONOMY, path)
    return path


def overlay(tmp_path, text, name="lab.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(path):
    with pytest.raises(TaxonomyError) as caught:
        load_taxonomy(path)
    return caught.value.problems


NEW_AREA = """\
extends: base.yaml
version: lab-1
areas:
  - id: rl.offline
    name: Offline RL
    parent: rl
    description: Learning a policy from a fixed dataset.
    aliases: [offline reinforcement learning]
"""


def test_a_new_area_joins_the_tree_with_its_lines(tmp_path, base):
    taxonomy = load_taxonomy(overlay(tmp_path, NEW_AREA))
    assert [a.id for a in taxonomy.areas][-1] == "rl.offline"
    assert taxonomy.children["rl"] == ["rl.multi-agent", "rl.offline"]
    assert taxonomy.version == "test-1+lab-1"
    assert str(taxonomy.origin("rl.offline", "aliases", 0)) == f"{tmp_path / 'lab.yaml'} line 8"
    assert str(taxonomy.origin("rl", "aliases", 1)) == f"{base} line 7"
    assert taxonomy.extends == str(base)
    lab = tmp_path / "lab.yaml"
    assert taxonomy.summary().startswith(f"{lab} (version test-1+lab-1, extends {base}):")


def test_rules_are_added_removed_and_replaced(tmp_path, base):
    taxonomy = load_taxonomy(
        overlay(
            tmp_path,
            """\
extends: base.yaml
edit:
  rl:
    remove:
      aliases: [q-learning]
      acronyms: [MDP]
      exclude: [public policy]
    add:
      aliases: [q-learning with function approximation, temporal difference learning]
      cues: [policy]
      exclude: [policy makers]
  graphs.gnn:
    remove: {aliases: [graph convolutional network]}
    add: {aliases: [graph convolutional network], acronyms: [MPNN]}
""",
        )
    )
    rl, gnn = taxonomy.by_id["rl"], taxonomy.by_id["graphs.gnn"]
    assert rl.aliases == [
        "reinforcement learning",
        "policy gradient",
        "q-learning with function approximation",
        "temporal difference learning",
    ]
    assert (rl.cues, rl.acronyms, rl.exclude) == (
        ["reward function", "policy"],
        ["RL"],
        ["policy makers"],
    )
    assert gnn.aliases == ["graph neural network", "graph convolutional network"]
    assert gnn.acronyms == ["GNN", "GCN", "MPNN"]
    # a kept rule keeps its line in the base; an added one names the overlay's
    assert taxonomy.origin("rl", "aliases", 1).line == 7
    lab = tmp_path / "lab.yaml"
    assert str(taxonomy.origin("rl", "aliases", 3)) == f"{lab} line 9"
    assert str(taxonomy.origin("rl", "cues", 1)) == f"{lab} line 10"
    assert str(taxonomy.origin("graphs.gnn", "aliases", 1)) == f"{lab} line 14"
    assert str(taxonomy.origin("graphs.gnn", "acronyms", 1)) == f"{base} line 36"


def test_set_renames_moves_and_overrides_crosswalks(tmp_path, base):
    taxonomy = load_taxonomy(
        overlay(
            tmp_path,
            """\
extends: base.yaml
edit:
  rl.multi-agent:
    set:
      name: Multi-agent learning
      parent: null
      crosswalk:
        iclr: [reinforcement learning]
        icml: []
  graphs:
    set: {parent: rl, description: Graphs under RL for this test.}
""",
        )
    )
    marl, graphs = taxonomy.by_id["rl.multi-agent"], taxonomy.by_id["graphs"]
    assert (marl.name, marl.parent) == ("Multi-agent learning", None)
    assert marl.crosswalk == {
        "iclr": ["reinforcement learning"],
        "iclr_topic": ["Reinforcement Learning->Multi-agent"],
    }
    assert "rl.multi-agent" in taxonomy.roots
    assert taxonomy.path("graphs.gnn") == ["rl", "graphs", "graphs.gnn"]  # moved with it
    assert graphs.description == "Graphs under RL for this test."
    assert taxonomy.crosswalk("graphs.gnn")["icml"] == ["Deep Learning->Graph Neural Networks"]
    assert str(taxonomy.origin("graphs", "parent")) == f"{tmp_path / 'lab.yaml'} line 11"


def test_drop_removes_an_area_and_everything_below_it(tmp_path, base):
    taxonomy = load_taxonomy(overlay(tmp_path, "extends: base.yaml\ndrop: [graphs]\n"))
    assert [a.id for a in taxonomy.areas] == [
        "rl",
        "rl.multi-agent",
        "type",
        "type.theory",
        "type.dataset",
    ]


def test_a_dropped_area_can_be_written_anew(tmp_path, base):
    text = "extends: base.yaml\ndrop: [type.dataset]\nareas:\n"
    text += "  - id: type.dataset\n    name: Datasets\n    parent: type\n    aliases: [a corpus]\n"
    taxonomy = load_taxonomy(overlay(tmp_path, text))
    assert taxonomy.by_id["type.dataset"].aliases == ["a corpus"]


def test_overlays_extend_overlays(tmp_path, base):
    overlay(tmp_path, NEW_AREA, "first.yaml")
    second = overlay(
        tmp_path,
        "extends: first.yaml\nversion: lab-2\nedit:\n  rl.offline:\n    add: {acronyms: [ORL]}\n",
    )
    taxonomy = load_taxonomy(second)
    assert taxonomy.version == "test-1+lab-1+lab-2"
    assert taxonomy.by_id["rl.offline"].acronyms == ["ORL"]
    assert taxonomy.origin("rl.offline", "aliases", 0).source == str(tmp_path / "first.yaml")
    assert taxonomy.origin("rl.offline", "acronyms", 0).source == str(second)


def test_builtin_is_the_shipped_taxonomy(tmp_path):
    taxonomy = load_taxonomy(overlay(tmp_path, "extends: builtin\nversion: mine\n"))
    shipped = load_taxonomy(default_taxonomy_path())
    assert taxonomy.areas == shipped.areas
    assert taxonomy.version == f"{shipped.version}+mine"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "extends: base.yaml\nedit:\n  rl.multiagent:\n    add: {cues: [agents]}\n",
            "lab.yaml line 3: edit: there is no area 'rl.multiagent' in {base} "
            "(did you mean 'rl.multi-agent'?)",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    remove:\n      aliases: [q learning]\n",
            "lab.yaml line 5: area 'rl' has no alias 'q learning' (did you mean 'q-learning'?)",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    add:\n      aliases: [policy gradient]\n",
            "lab.yaml line 5: area 'rl' already has the alias 'policy gradient' ({base} line 7)",
        ),
        (
            "extends: base.yaml\nareas:\n  - id: graphs\n    name: Graphs again\n",
            "lab.yaml line 3: area id 'graphs' is already in {base} line 23: change it under "
            "`edit:` (or drop it first to replace it)",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    set:\n      parent: rl.multi-agent\n",
            "lab.yaml line 5: area 'rl' is its own ancestor (rl -> rl.multi-agent -> rl); "
            "parents must form a tree\n"
            "base.yaml line 17: area 'rl.multi-agent' is its own ancestor (rl.multi-agent -> rl "
            "-> rl.multi-agent); parents must form a tree",
        ),
        (
            "extends: base.yaml\nareas:\n  - id: x\n    name: X\n    parent: graph\n",
            "lab.yaml line 5: area 'x' names parent 'graph', which does not exist "
            "(did you mean 'graphs'?)",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    set:\n      crosswalk:\n"
            "        iclr: [reinforcement learnin]\n",
            "lab.yaml line 6: area 'rl': 'reinforcement learnin' is not one of the iclr labels "
            "(did you mean 'reinforcement learning'?)",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    ad: {cues: [agents]}\n",
            "lab.yaml line 4: edit of area 'rl', field 'ad': unknown field (did you mean 'add'?)",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    set: {id: reinforcement}\n",
            "lab.yaml line 4: edit of area 'rl', field 'set.id': unknown field; allowed: "
            "crosswalk, description, facet, fallback, name, parent",
        ),
        (
            "extends: base.yaml\nedits: {}\n",
            "lab.yaml line 2: field 'edits': unknown field (did you mean 'edit'?)",
        ),
        (
            "extends: base.yaml\ndrop: [graphs]\nedit:\n  graphs.gnn:\n    add: {acronyms: [G]}\n",
            "lab.yaml line 4: edit: area 'graphs.gnn' is dropped ({dir}/lab.yaml line 2), with "
            "what is "
            "below it; move it out first (set: parent) or do not edit it",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    add:\n      acronyms: [two words]\n",
            "lab.yaml line 5: edit of area 'rl', field 'add.acronyms': acronym 'two words' must "
            "be one word with no spaces (put phrases under 'aliases')",
        ),
        (
            "extends: missing.yaml\n",
            "lab.yaml line 1: extends 'missing.yaml', and {dir}/missing.yaml does not exist "
            "('builtin' is the shipped taxonomy)",
        ),
        (
            "extends: lab.yaml\n",
            "lab.yaml line 1: extends 'lab.yaml', which leads back to itself (lab.yaml -> "
            "lab.yaml)",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    set: {name: null}\n",
            "lab.yaml line 4: area 'rl': name cannot be null",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n    add: {cues: [a]}\n  rl:\n    add: {cues: [b]}\n",
            "lab.yaml line 5: 'rl' is given twice in one mapping (first on line 3); YAML would "
            "keep only the last",
        ),
        (
            "extends: base.yaml\nedit:\n  rl:\n",
            "lab.yaml line 3: edit of area 'rl': expected a mapping of add, remove, set",
        ),
        (
            "extends: base.yaml\ndrop: [graphs]\nareas:\n  - id: graphs.x\n    name: X\n"
            "    parent: graphs\n",
            "lab.yaml line 6: area 'graphs.x' names parent 'graphs', which is dropped "
            "({dir}/lab.yaml line 2)",
        ),
    ],
)
def test_overlay_errors_name_the_file_and_line(tmp_path, base, text, expected):
    found = problems(overlay(tmp_path, text))
    expected = expected.format(base=base, dir=tmp_path)
    assert [p.removeprefix(f"{tmp_path}/") for p in found] == expected.split("\n")


def test_a_problem_of_the_base_names_the_base(tmp_path, base):
    base.write_text(base.read_text().replace("parent: graphs", "parent: graph"))
    [problem] = problems(overlay(tmp_path, NEW_AREA))
    assert problem.startswith(f"{base} line 34: area 'graphs.gnn' names parent 'graph'")


def test_every_problem_is_reported_at_once(tmp_path, base):
    text = "extends: base.yaml\ndrop: [nope]\nedit:\n  rl:\n    remove: {cues: [x], aliases: [y]}\n"
    assert len(problems(overlay(tmp_path, text))) == 3


def test_the_hash_is_of_the_effective_taxonomy(tmp_path, base):
    """Comments and layout do not change it, an overlay that changes nothing but the version
    changes it, and `taxonomy show` prints a file that loads to the same taxonomy."""
    plain = load_taxonomy(base)
    assert plain.sha256 == hashlib.sha256(plain.canonical()).hexdigest()
    commented = overlay(tmp_path, "# a comment\n" + base.read_text(), "commented.yaml")
    assert load_taxonomy(commented).sha256 == plain.sha256
    lab = load_taxonomy(overlay(tmp_path, NEW_AREA))
    shown = parse_taxonomy(lab.to_yaml(), source="shown.yaml")
    assert (shown.areas, shown.version, shown.sha256) == (lab.areas, lab.version, lab.sha256)
    assert json.loads(lab.canonical())["areas"][-1]["id"] == "rl.offline"


def test_show_and_check_on_an_overlay(tmp_path, base):
    path = overlay(tmp_path, NEW_AREA)
    runner = CliRunner()
    shown = runner.invoke(main, ["taxonomy", "show", "--taxonomy", str(path), "--json"])
    assert shown.exit_code == 0
    assert hashlib.sha256(shown.stdout_bytes).hexdigest() == load_taxonomy(path).sha256
    yaml_shown = runner.invoke(main, ["taxonomy", "show", "--taxonomy", str(path)])
    assert yaml_shown.stdout.startswith(f"# {path} (version test-1+lab-1, extends {base}):")
    checked = runner.invoke(main, ["taxonomy", "check", "--taxonomy", str(path)])
    assert checked.exit_code == 0
    assert "  rl.offline  Offline RL  (1 rules)\n" in checked.stdout
    broken = overlay(tmp_path, "extends: base.yaml\ndrop: [nope]\n", "broken.yaml")
    failed = runner.invoke(main, ["taxonomy", "check", "--taxonomy", str(broken)])
    assert failed.exit_code == 1
    assert failed.stderr == f"Error: {broken} line 2: drop: there is no area 'nope' in {base}\n"


def test_lint_names_the_file_each_finding_is_in(tmp_path, base):
    path = overlay(
        tmp_path,
        NEW_AREA + "edit:\n  graphs:\n    add:\n      aliases: [policy gradient]\n",
    )
    findings = [str(f) for f in lint_taxonomy(path)]
    assert (
        f"{path} line 12: warning: area 'graphs': alias 'policy gradient' is also the alias "
        f"'policy gradient' of area 'rl' ({base} line 7) (keep it in one area, or mark its line "
        "`# lint: shared, WHY`)"
    ) in findings
    assert [
        str(f) for f in lint_taxonomy(overlay(tmp_path, "extends: base.yaml\ndrop: [x]\n"))
    ] == [f"{path} line 2: error: drop: there is no area 'x' in {base}"]


# --- an overlay extends a taxonomy, or another overlay, and nothing else -------------------------


# /etc/shadow-like: a message quoting a taxonomy's unknown fields would print its lines whole
SECRET = "toor: x:0:0:SECRETHASH:/root:/bin/bash\nnobodyx: x:1:1:SECRETTOO:/usr/sbin\n"
RULE = (
    "an overlay extends 'builtin', or a YAML file (.yaml or .yml) whose top level is a mapping "
    "with 'version' and 'areas' (a taxonomy) or with 'extends' (another overlay)"
)


def _extending(tmp_path, extends):
    path = tmp_path / "lab.yaml"
    path.write_text(f"extends: {extends}\nversion: lab-1\n")
    return path


def _check(overlay):
    result = run("taxonomy", "check", "--taxonomy", overlay)
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    for secret in ("SECRET", "toor", "nobodyx", "bash", "hunter2"):
        assert secret not in line
    return line


@pytest.mark.parametrize("name", ["secret.txt", "secret", "/etc/passwd", "/etc/shadow"])
def test_an_overlay_may_extend_no_file_but_a_yaml_one(tmp_path, name):
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "secret").write_text(SECRET)
    overlay = _extending(tmp_path, name)
    assert _check(overlay) == f"Error: {overlay} line 1: extends {name!r}: {RULE}"


@pytest.mark.parametrize(
    "content",
    [
        SECRET,
        "version: '3'\nservices:\n  db: {password: hunter2}\n",  # a docker-compose.yml
        "- toor\n- SECRETHASH\n",
        "{toor: [unclosed\n",  # not YAML at all
        "toor: 1\ntoor: 2\n",  # the same key twice: the message would name it
    ],
    ids=["colon-lines", "compose-file", "a-list", "not-yaml", "key-twice"],
)
def test_a_yaml_file_that_is_no_taxonomy_is_refused_unseen(tmp_path, content):
    (tmp_path / "secret.yaml").write_text(content)
    (tmp_path / "link.yml").symlink_to(tmp_path / "secret.yaml")
    for name in ("secret.yaml", "link.yml"):
        overlay = _extending(tmp_path, name)
        assert _check(overlay) == (
            f"Error: {overlay} line 1: extends {name!r}, and {tmp_path / name} is not a "
            f"taxonomy: {RULE}; nothing of what it holds is shown (if it is your taxonomy, "
            f"`tagger taxonomy check --taxonomy {tmp_path / name}` says what is wrong with it)"
        )


def test_a_taxonomy_or_overlay_with_any_yaml_extension_is_extended(tmp_path):
    base = tmp_path / "Base.YML"
    base.write_text(MINI_TAXONOMY.read_text())
    middle = tmp_path / "middle.yaml"
    middle.write_text("extends: Base.YML\nversion: mid\n")
    result = run("taxonomy", "check", "--taxonomy", _extending(tmp_path, middle))
    assert result.exit_code == 0, result.stderr
    # a taxonomy's own faults are shown: it is one
    base.write_text(MINI_TAXONOMY.read_text().replace("areas:", "areas:\n  - id: rl\n", 1))
    result = run("taxonomy", "check", "--taxonomy", _extending(tmp_path, base))
    assert result.exit_code == 1 and f"{base} line " in result.stderr
