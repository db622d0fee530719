"""Hostile taxonomies, third pass (issue 24): patterns that together spend far more than a
paper's time for patterns, and overlays that `extends:` files that are no taxonomy (which must
not be shown, whatever they hold)."""

from __future__ import annotations

import json

import pytest

from ..conftest import MINI_TAXONOMY, run

# The regex engine takes minutes on 'abc abc ... abc' for each of these: each backtracks over
# the words, looking for something after them that is never there.
SLOW = [r"(?:[a-z]+ ?){1,40}\d", r"(?:[a-z]+ ?){1,40}Q", r"(?:[a-z]+ ?){1,40}!"]


def _taxonomy(patterns):
    """A taxonomy of one area per pattern, as YAML."""
    areas = "".join(
        f"  - id: x{k}\n    name: X{k}\n    patterns: ['{pattern}']\n"
        for k, pattern in enumerate(patterns)
    )
    return f'version: "1"\nareas:\n{areas}'


# --- 9. the pattern time limit is per paper and field ------------------------------------------


def test_patterns_share_one_time_limit_per_paper_and_field(nlp):
    """The first slow pattern is stopped when the paper's 0.5 s for its abstract is spent; the
    others are not run on it at all (each used to get 0.5 s of its own). The title has its own
    0.5 s: the patterns run there, and find it."""
    from tagger.language.text import analyse, paper_text
    from tagger.taxonomy.loading import parse_taxonomy
    from tagger.taxonomy.rules import RuleSet

    rules = RuleSet(parse_taxonomy(_taxonomy(SLOW)), nlp=nlp)
    title, abstract = "abc 1", "abc " * 300
    hits = rules.match(analyse(nlp(paper_text(title, abstract)), title, abstract))
    assert [(h.area, h.field) for h in hits] == [("x0", "title")]
    assert rules.timeouts == {
        ("x0", SLOW[0], "ran over"): 1,
        ("x1", SLOW[1], "no time left"): 1,
        ("x2", SLOW[2], "no time left"): 1,
    }


def test_a_run_says_which_patterns_were_skipped_and_why(tmp_path):
    taxonomy = tmp_path / "t.yaml"
    taxonomy.write_text(_taxonomy(SLOW))
    source = tmp_path / "p.jsonl"
    source.write_text(
        "".join(json.dumps({"id": f"p{i}", "abstract": "abc " * 300}) + "\n" for i in range(2))
    )
    result = run("tag", source, "--taxonomy", taxonomy)
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning: pattern")]
    slow = [pattern.replace("\\", "\\\\") for pattern in SLOW]
    assert warnings == [
        f"Warning: pattern '{slow[0]}' of area 'x0' ran over 0.5 s on a paper and was skipped "
        "for it (`tagger taxonomy lint` flags patterns that backtrack)",
        *(
            f"Warning: pattern '{slow[k]}' of area 'x{k}' was skipped for a paper: the patterns "
            "before it had used up the 0.5 s that all patterns share on each field of a paper "
            "(`tagger taxonomy lint` flags patterns that backtrack)"
            for k in (1, 2)
        ),
        *(
            f"Warning: pattern '{slow[k]}' of area 'x{k}' was skipped for 2 papers"
            for k in range(3)
        ),
    ]


# --- 16. `extends:` reads only taxonomies, and shows nothing of anything else ------------------

# /etc/shadow-like: whole lines used to be printed, as the unknown fields of a taxonomy
SECRET = "toor: x:0:0:SECRETHASH:/root:/bin/bash\nnobodyx: x:1:1:SECRETTOO:/usr/sbin\n"
RULE = (
    "an overlay extends 'builtin', or a YAML file (.yaml or .yml) whose top level is a mapping "
    "with 'version' and 'areas' (a taxonomy) or with 'extends' (another overlay)"
)


def _overlay(tmp_path, extends):
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
    overlay = _overlay(tmp_path, name)
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
        overlay = _overlay(tmp_path, name)
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
    result = run("taxonomy", "check", "--taxonomy", _overlay(tmp_path, middle))
    assert result.exit_code == 0, result.stderr
    # a taxonomy's own faults are shown: it is one
    base.write_text(MINI_TAXONOMY.read_text().replace("areas:", "areas:\n  - id: rl\n", 1))
    result = run("taxonomy", "check", "--taxonomy", _overlay(tmp_path, base))
    assert result.exit_code == 1 and f"{base} line " in result.stderr
