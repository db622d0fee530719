"""A resume (`tagger tag ... --resume`) continues only the run it was given: here, every line
kept must have been written by this configuration from the same papers, and the inputs may
not be fewer; on a cluster, the manifest must be one tagger wrote for the same inputs and
options, and an input edited in place is named. Anything else is refused in one `Error:`
line, the output left as it was; the same run goes on to the end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..conftest import MINI, error_line, papers, run
from .conftest import FOUR_ABSTRACTS, finish, same_length_edit, start_tagger


@pytest.fixture
def interrupted(tmp_path):
    """A run over three papers that stopped after two lines."""
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out.jsonl"
    assert run("tag", source, "-o", out, *MINI).exit_code == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]))
    return source, out


@pytest.mark.parametrize(
    ("change", "because"),
    [
        (["--min-score", "0.5"], "min_score=default (this run: 0.5)"),
        (["--max-tags", "1"], "max_tags=default (this run: 1)"),
        (
            [
                "--taxonomy",
                str(Path(__file__).parent.parent / "data" / "taxonomies" / "clean.yaml"),
            ],
            "taxonomy version test-1 (this run: 1)",
        ),
    ],
)
def test_resume_with_other_settings_or_taxonomy_is_refused(interrupted, change, because):
    source, out = interrupted
    before = out.read_bytes()
    taxonomy = [] if "--taxonomy" in change else MINI
    result = run("tag", source, "-o", out, "--resume", *taxonomy, *change)
    line = error_line(result)
    assert line.startswith(
        f"Error: {out}: cannot resume: line 1 was not written by this run's "
        "configuration from these inputs: written with "
    )
    assert because in line
    assert out.read_bytes() == before


def test_resume_after_the_inputs_changed_is_refused(interrupted):
    source, out = interrupted
    before = out.read_bytes()
    source.write_text(source.read_text().replace("molecules", "proteins"))
    line = error_line(run("tag", source, "-o", out, "--resume", *MINI))
    assert "line 2 was not written" in line and "('abstract' changed)" in line
    source.write_text("".join(source.read_text().splitlines(keepends=True)[:1]))  # fewer
    line = error_line(run("tag", source, "-o", out, "--resume", *MINI))
    assert "the file holds 2 papers, the inputs only 1" in line
    assert out.read_bytes() == before


def test_resume_of_the_same_run_goes_on(interrupted):
    source, out = interrupted
    result = run("tag", source, "-o", out, "--resume", *MINI)
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1] == f"tagged 1 paper to {out} after the 2 already there"


def test_resume_on_a_file_that_cannot_be_written_is_one_error(interrupted, monkeypatch):
    import tagger.io.files

    source, out = interrupted
    real = tagger.io.files.os.open

    def read_only(path, flags, *args):
        if str(path) == str(out) and flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, flags, *args)

    monkeypatch.setattr(tagger.io.files.os, "open", read_only)
    assert error_line(run("tag", source, "-o", out, "--resume", *MINI)) == (
        f"Error: cannot write {out}: Permission denied"
    )


# --- on a cluster --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{", "manifest.json is not JSON (Expecting property name"),
        (b"\xff\xfe not text", "manifest.json is not JSON ("),
        (b"[]", "manifest.json holds a JSON list, not a manifest's object"),
        (b'"fingerprint"', "manifest.json holds a JSON str, not a manifest's object"),
        (b"[" * 100_000 + b"]" * 100_000, "manifest.json is not JSON ("),
        (b'{"fingerprint": "x"}', "manifest.json has no fingerprint"),
        (b'{"fingerprint": null}', "manifest.json has no fingerprint"),
    ],
)
def test_a_tampered_manifest_is_one_error_on_resume(tmp_path, content, says):
    source = papers(tmp_path / "p.jsonl", FOUR_ABSTRACTS)
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_bytes(content)
    result = run("tag", source, "-o", out, "--cluster", "local:1", "--resume", *MINI)
    line = error_line(result)
    assert line.startswith(f"Error: cannot resume: {out / 'manifest.json'} "), line
    assert says in line and line.endswith("tag into a new directory")
    assert (out / "manifest.json").read_bytes() == content  # left as it was


@pytest.mark.parametrize(
    "fingerprint",
    [
        {"provenance": "x"},
        {"provenance": None, "inputs": 3},
        {"inputs": "x", "partitions": {"a": 1}},
        {"inputs": [1, "x", None], "partitions": [[], "x"]},
    ],
)
def test_a_manifest_of_another_shape_is_refused_as_another_run(tmp_path, hash_tagger, fingerprint):
    """Edited into another shape, a manifest is another run's: refused with what differs."""
    from tagger.runs.cluster import fingerprint as fingerprint_of
    from tagger.runs.cluster import plan

    source = papers(tmp_path / "p.jsonl", FOUR_ABSTRACTS)
    out = tmp_path / "out"
    out.mkdir()
    real = fingerprint_of(hash_tagger, plan([str(source)]), "jsonl")
    tampered = {**real, **fingerprint}
    (out / "manifest.json").write_text(json.dumps({"fingerprint": tampered}))
    result = run("tag", source, "-o", out, "--cluster", "local:1", "--resume", *MINI)
    line = error_line(result)
    assert line.startswith(f"Error: cannot resume {out}: "), line
    assert line.endswith("run with the same inputs and options, or into another directory")


def _stamps(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.models
def test_resume_proves_the_inputs_are_the_records_tagged(tmp_path):
    """Given by a relative path, then by an absolute one, the same file is the same input; an
    abstract edited in place at the same length is named, and nothing is tagged again."""
    source = papers(tmp_path / "p.jsonl", FOUR_ABSTRACTS)
    out = tmp_path / "out"
    first = start_tagger(
        "tag", "p.jsonl", "-o", "out", "--cluster", "local:1", "--partition-size", "2",
        *MINI, cwd=tmp_path,
    )  # fmt: skip
    code, stderr = finish(first, timeout=600)
    assert code == 0, stderr
    assert stderr.splitlines()[-1] == "tagged 4 papers to out in 3 parts", stderr
    written = _stamps(out)
    again = start_tagger(
        "tag", str(source), "-o", str(out), "--cluster", "local:1", "--partition-size", "2",
        "--resume", *MINI,
    )  # fmt: skip
    code, stderr = finish(again, timeout=600)
    assert code == 0, stderr
    assert stderr.splitlines()[-1] == f"tagged 4 papers to {out} in 3 parts (0 run now)"
    parts = {name: stamp for name, stamp in written.items() if name.startswith("part-")}
    assert {name: _stamps(out)[name] for name in parts} == parts  # no part written again
    same_length_edit(source, "molecules", "proteins!")
    before = _stamps(out)
    edited = start_tagger(
        "tag", "p.jsonl", "-o", "out", "--cluster", "local:1", "--partition-size", "2",
        "--resume", *MINI, cwd=tmp_path,
    )  # fmt: skip
    code, stderr = finish(edited, timeout=600)
    assert "Traceback" not in stderr
    assert code == 1 and stderr.splitlines() == [
        f"Error: cannot resume out: {source} has changed since: its lines 2-3 (part-00001) are "
        "not the records tagged there; run with the same inputs and options, or into another "
        "directory"
    ], stderr
    assert _stamps(out) == before  # the directory is left as it was
