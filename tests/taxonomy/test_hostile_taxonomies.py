"""Overlays whose `extends:` names a file that is no taxonomy: refused, and nothing of the file
shown, whatever it holds."""

from __future__ import annotations

import pytest

from ..conftest import MINI_TAXONOMY, run

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
