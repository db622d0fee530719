"""The README cannot drift from the command line: every command is documented and has help."""

from __future__ import annotations

import re

import click
import pytest

from tagger.cli import main

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "tagger"):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix} {name}")
        else:
            yield f"{prefix} {name}", command


@pytest.mark.parametrize(("name", "command"), list(_commands(main)), ids=lambda v: str(v))
def test_every_command_is_in_the_readme_and_has_help(name, command):
    assert f"`{name}" in README, f"{name} is missing from the README's command table"
    assert command.help and len(command.help.strip()) > 20


def test_readme_commands_install_torch_first_and_ci_runs_the_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = ci.strip().splitlines()[-1]
    assert test_command in README
    assert "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 && " in test_command
    assert "apt-get install" in test_command  # Chromium, for the report's browser test


@pytest.mark.models
def test_the_readme_python_examples_run_and_print_what_they_say(tmp_path, monkeypatch, capsys):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)  # the examples write tagged.jsonl and errors.jsonl here
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) == 4  # the API, a run with its settings, retag and diff, spaCy
    printed = []
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - our own README
        printed.append(capsys.readouterr().out.splitlines())
    said = re.search(r"# (\[\('rl.*\])$", blocks[0], re.M).group(1)
    assert printed[0][0] == said
    assert len(printed[0]) == 1 + 19  # then one line per paper of the example file
    # the second block says, after each print, what it prints
    assert printed[1] == re.findall(r"^print\(.*?\n(?:.*\n)*?# (.*)$", blocks[1], re.M)
    assert (tmp_path / "errors.jsonl").read_text() == ""
    assert printed[2][0] == re.search(r"^# (retagged .*)$", blocks[2], re.M).group(1)
    assert printed[2][1].startswith(("True [", "False ["))


def test_the_readme_lists_every_setting_with_its_default():
    import dataclasses

    from tagger import TaggerConfig

    text = " ".join(README.split())
    for field in dataclasses.fields(TaggerConfig):
        default = f"{field.default:,}" if isinstance(field.default, int) else field.default
        default = default or "empty: the shipped one"
        assert f"`{field.name}` ({default})" in text, field.name


def test_the_readme_overlay_example_loads(tmp_path):
    """The overlay the README shows is a valid overlay of the shipped taxonomy."""
    from tagger.taxonomy.loading import load_taxonomy

    block = next(b for b in README.split("```yaml\n")[1:] if b.startswith("extends: builtin"))
    path = tmp_path / "ourlab.yaml"
    path.write_text(block.split("```")[0])
    taxonomy = load_taxonomy(path)
    assert "cv.3d.dynamic_scenes" in taxonomy.by_id and "type.survey" not in taxonomy.by_id
    assert taxonomy.by_id["safety.llm"].parent == "llm"
