"""A part directory of `tagger tag --cluster`, read (io.parts): its parts, in order, are the
local output; only the parts its manifest names are read, each proved whole first; a
directory whose run has not finished, whose manifest is missing or tampered with, or whose
parts are missing or changed is refused in one `Error:` line, or read as far as it is
intact with --incomplete (exit code 1)."""

from __future__ import annotations

import json
import shutil

import pytest

from ..conftest import MINI, error_line, run


def _manifest(directory, **changes):
    path = directory / "manifest.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))
    return data


def test_the_part_directory_is_the_local_output(parts, written):
    names = sorted(p.name for p in parts.glob("part-0000?.jsonl"))
    assert names == [f"part-0000{i}.jsonl" for i in range(4)]  # 1, 4, 4 and 3 papers
    assert b"".join((parts / name).read_bytes() for name in names) == written[1]
    result = run("stats", parts, "--json", *MINI)
    assert result.exit_code == 0 and json.loads(result.stdout)["papers"] == 12


@pytest.mark.parametrize("command", ["stats", "filter", "report", "retag"])
def test_an_unfinished_directory_is_refused_or_read_when_asked(parts, tmp_path, command):
    _manifest(parts, complete=False, parts=[])
    (parts / "part-00002.done.json").unlink()  # not done: the run was stopped before it
    output = ["-o", tmp_path / "o.jsonl"] if command in ("report", "retag") else []
    line = error_line(run(command, parts, *output, *MINI))
    assert line == (
        f"Error: {parts}: the run writing it has not finished (manifest.json: complete: "
        "false): 3 of its 4 parts are done (part-00002.jsonl is not done); finish it with the "
        "same `tagger tag ... --cluster ... --resume`; or read what is intact with --incomplete"
    )
    if command == "report":
        assert not (tmp_path / "o.jsonl").exists()
    result = run(command, parts, *output, "--incomplete", *MINI)
    assert result.exit_code == 1
    assert (
        f"Warning: {parts}: reading the 3 intact parts of 4: the run writing it has not finished"
    ) in result.stderr
    if command == "filter":
        assert [json.loads(line)["paper"]["id"] for line in result.stdout.splitlines()] == [
            f"p{i}" for i in (0, 1, 2, 3, 4, 9, 10, 11)
        ]


@pytest.mark.parametrize(
    ("spoil", "problem", "left"),
    [
        (lambda d: (d / "part-00001.jsonl").unlink(), "part-00001.jsonl is missing", 8),
        (
            lambda d: (d / "part-00003.jsonl").write_bytes(
                (d / "part-00003.jsonl").read_bytes().replace(b"Case 11", b"Case 99")
            ),
            "part-00003.jsonl is not the file the run wrote (its sha256 differs)",
            9,
        ),
    ],
    ids=["part-missing", "part-changed"],
)
def test_a_part_missing_or_changed_is_refused(parts, spoil, problem, left):
    spoil(parts)
    line = error_line(run("stats", parts, *MINI))
    assert line == (
        f"Error: {parts}: 1 of its 4 parts are missing or changed ({problem}); run the tagging "
        "again into a new directory; or read what is intact with --incomplete"
    )
    result = run("stats", parts, "--json", "--incomplete", *MINI)
    assert result.exit_code == 1 and json.loads(result.stdout)["papers"] == left


def test_only_the_parts_the_manifest_names_are_read(parts, tmp_path):
    """A stray copy of a part and a Parquet part beside the JSONL ones are not read."""
    shutil.copy(parts / "part-00001.jsonl", parts / "part-00001.bak.jsonl")
    from tagger.io.parquet import ParquetWriter
    from tagger.io.tagged import read_tagged

    writer = ParquetWriter(parts / "part-00001.parquet")
    for record in read_tagged(parts / "part-00001.jsonl"):
        writer.write(record)
    writer.close()
    result = run("stats", parts, "--json", *MINI)
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout)["papers"] == 12
    ids = run("filter", parts, "--output-format", "ids", *MINI).stdout.split()
    assert ids == [f"p{i}" for i in range(12)]


@pytest.mark.parametrize(
    "manifest",
    ["{not json", "[]", '{"fingerprint": "x"}', '{"fingerprint": {"part_format": "jsonl"}}'],
    ids=["invalid-json", "a-list", "fingerprint-string", "no-partitions"],
)
def test_a_tampered_manifest_is_one_error_line(parts, manifest):
    (parts / "manifest.json").write_text(manifest)
    line = error_line(run("stats", parts, *MINI))
    assert line.startswith(f"Error: {parts / 'manifest.json'}: ")
    assert line.endswith("not a manifest tagger wrote (run the tagging again into a new directory)")


def test_parts_without_a_manifest_are_refused_or_read_when_asked(parts):
    (parts / "manifest.json").unlink()
    line = error_line(run("stats", parts, *MINI))
    assert line == (
        f"Error: {parts}: holds part files but no manifest.json, so they cannot be checked (was "
        "it copied without it?); or read what is intact with --incomplete"
    )
    result = run("stats", parts, "--json", "--incomplete", *MINI)
    assert result.exit_code == 1 and json.loads(result.stdout)["papers"] == 12
