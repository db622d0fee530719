"""Which taxonomy file a command read, said shortly; and a taxonomy.yaml of the working
directory that is not the one in use, warned of (a user who edited it would otherwise believe
their edits were read)."""

from __future__ import annotations

import os

import yaml
from click.testing import CliRunner

from tagger.cli import main
from tagger.io.display import short_path
from tagger.taxonomy.loading import default_taxonomy_path

from ..conftest import MINI_TAXONOMY

PACKAGED_VERSION = yaml.safe_load(default_taxonomy_path().read_text())["version"]
IGNORED = (
    "Warning: taxonomy.yaml here is not the taxonomy in use: without --taxonomy, tagger reads "
    "the packaged taxonomy, and taxonomy.yaml differs from it. To use it, pass --taxonomy "
    "taxonomy.yaml; to change the taxonomy, write an overlay that says what changes "
    "(`extends: builtin`, docs/reference/taxonomy.md: Overlays) and pass that\n"
)


def check(*args):
    return CliRunner().invoke(main, ["taxonomy", "check", *args], catch_exceptions=False)


def test_check_names_the_packaged_taxonomy_by_its_version_not_its_path():
    result = check()
    assert result.exit_code == 0
    assert result.stderr.startswith(f"the packaged taxonomy {PACKAGED_VERSION}: ")
    assert result.stderr.endswith(" levels: OK\n")
    assert os.sep + "taxonomy.yaml" not in result.stderr


def test_check_names_another_taxonomy_by_its_path_relative_to_here(tmp_path, monkeypatch):
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "mine.yaml").write_bytes(MINI_TAXONOMY.read_bytes())
    monkeypatch.chdir(tmp_path)
    result = check("--taxonomy", str(tmp_path / "lab" / "mine.yaml"))
    assert result.stderr == "lab/mine.yaml (version test-1): 7 areas, 3 roots, 2 levels: OK\n"


def test_an_edited_taxonomy_yaml_here_is_said_to_be_ignored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    edited = default_taxonomy_path().read_text().replace("version:", "# edited\nversion:", 1)
    (tmp_path / "taxonomy.yaml").write_text(edited)
    result = check()
    assert result.exit_code == 0
    assert result.stderr.startswith(IGNORED)
    assert f"the packaged taxonomy {PACKAGED_VERSION}: " in result.stderr
    # passed, it is the one in use: nothing to warn of
    result = check("--taxonomy", "taxonomy.yaml")
    assert result.stderr.startswith(f"taxonomy.yaml (version {PACKAGED_VERSION}): ")
    assert "Warning" not in result.stderr


def test_a_copy_of_the_packaged_taxonomy_here_is_no_news(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taxonomy.yaml").write_bytes(default_taxonomy_path().read_bytes())
    assert not check().stderr.startswith("Warning")


def test_tag_and_retag_say_which_taxonomy_they_use(tmp_path):
    papers = tmp_path / "p.jsonl"
    papers.write_text('{"id": "a", "abstract": "Reinforcement learning with policy gradient."}\n')
    tagged = tmp_path / "t.jsonl"
    runner = CliRunner()
    mini = ["--taxonomy", str(MINI_TAXONOMY)]
    result = runner.invoke(main, ["tag", str(papers), "-o", str(tagged), *mini])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"Note: tagging with {short_path(MINI_TAXONOMY)} (version test-1)"
    )
    result = runner.invoke(main, ["retag", str(tagged), *mini])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"Note: retagging with {short_path(MINI_TAXONOMY)} (version test-1)"
    )


def test_short_path_is_relative_inside_the_working_directory_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert short_path(tmp_path / "a" / "b.yaml") == os.path.join("a", "b.yaml")
    assert short_path("a/../b.yaml") == "a/../b.yaml"  # relative: as given
    outside = tmp_path.parent / "elsewhere.yaml"
    assert short_path(outside) == str(outside)
