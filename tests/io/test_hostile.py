"""Files users did not write: every record ends up tagged or rejected with its line and reason,
the run goes on, and the exit code says whether anything was rejected. The files and their
expected outcomes live in tests/data/hostile/."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tagger.cli import main

from ..conftest import DATA, MINI_TAXONOMY

HOSTILE = DATA / "hostile"
EXPECTED = {
    k: v
    for k, v in json.loads((HOSTILE / "expected.json").read_text()).items()
    if not k.startswith("_")
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_input(name, tmp_path):
    expected = EXPECTED[name]
    errors = tmp_path / "errors.jsonl"
    result = CliRunner().invoke(
        main,
        ["tag", str(HOSTILE / name), "--errors", str(errors), "--taxonomy", str(MINI_TAXONOMY)],
    )
    assert result.exit_code == expected["exit"], result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stdout.split("\n") if line]  # JSONL splits on \n only
    assert len(lines) == expected["tagged"]
    for line in lines:
        assert json.loads(line)["paper"]["abstract"].strip()
    for text in expected.get("stdout", []):
        assert text in result.stdout, text
    if "error" in expected:
        error = result.stderr.splitlines()[-1]
        assert error.startswith(f"Error: {HOSTILE / name}") and expected["error"] in error
        return
    rejected = [json.loads(line) for line in errors.read_text().splitlines()]
    where = [(r["line"] if r["line"] is not None else r["record"]) for r in rejected]
    assert where == [n for n, _ in expected["rejected"]]
    for record, (_, reason) in zip(rejected, expected["rejected"], strict=True):
        assert record["reason"].startswith(reason), record
        assert record["source"] == str(HOSTILE / name)
    summary = result.stderr.strip().splitlines()[-1]
    papers = "paper" if expected["tagged"] == 1 else "papers"
    assert summary.startswith(f"tagged {expected['tagged']} {papers}")
    if expected.get("stderr"):
        assert expected["stderr"].replace("/HOSTILE", str(HOSTILE)) in result.stderr


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_missing_file_or_directory_is_a_clear_error(tmp_path, make):
    target = tmp_path / "papers.jsonl"
    if make == "directory":
        target.mkdir()
    result = CliRunner().invoke(main, ["tag", str(target), "--taxonomy", str(MINI_TAXONOMY)])
    assert result.exit_code == 1
    reason = (
        "no such file"
        if make == "missing"
        else "is a directory with no file of papers in it: name the files to tag"
    )
    assert result.stderr == f"Error: {target}: {reason}\n"
