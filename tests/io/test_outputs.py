"""An output may not be an input (io.files): no command writes over a file it reads, by any
path (`./`, a symlink, a hard link, stdout appended to it), nor into a directory it reads;
that is refused before anything is opened for writing. An output inside a directory of
papers is warned of and not read back; one a second run writes is refused while the first
holds its lock; `-o -` is stdout. An output that cannot be written (a missing or forbidden
directory, a full disk) is one `Error:` line, never a traceback."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ABSTRACTS, MINI, error_line, papers, run, tagged_record, write_tagged


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_output_that_is_the_input_is_refused_before_anything_is_written(tmp_path, spelling):
    source = papers(tmp_path / "p.jsonl")
    before = source.read_bytes()
    target = {"same": source, "dot": tmp_path / "." / "p.jsonl"}.get(spelling)
    if spelling == "symlink":
        target = tmp_path / "link.jsonl"
        target.symlink_to(source)
    if spelling == "hardlink":
        target = tmp_path / "hard.jsonl"
        os.link(source, target)
    result = run("tag", source, "-o", target, *MINI)
    assert error_line(result) == (
        f"Error: the output {target} is the input {source}: writing it would destroy what is "
        "read or written there; choose another file"
    )
    assert source.read_bytes() == before


def test_errors_report_that_is_the_output_or_input_is_refused(tmp_path):
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out.jsonl"
    result = run("tag", source, "-o", out, "--errors", out, *MINI)
    assert "the errors report" in error_line(result) and not out.exists()
    result = run("tag", source, "-o", out, "--errors", source, *MINI)
    assert f"the errors report {source} is the input {source}" in error_line(result)
    assert source.read_text().count("\n") == 3


def test_report_over_its_input_is_refused(tmp_path):
    tagged = write_tagged(tmp_path / "t.jsonl", [tagged_record("a", [["rl"]])])
    before = tagged.read_bytes()
    result = run("report", tagged, "-o", tagged, *MINI)
    assert f"-o {tagged} is the input {tagged}" in error_line(result)
    assert tagged.read_bytes() == before


def test_appending_stdout_to_the_input_is_refused(tmp_path):
    """`tagger tag p.jsonl >> p.jsonl` would read its own output for ever."""
    source = papers(tmp_path / "p.jsonl")
    with source.open("ab") as stdout:
        proc = subprocess.run(
            [sys.executable, "-m", "tagger", "tag", str(source), *MINI],
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    assert proc.returncode == 1
    assert "standard output is the input" in proc.stderr.decode()
    assert source.read_text().count("\n") == 3


def test_dash_output_means_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("tag", papers(tmp_path / "p.jsonl"), "-o", "-", *MINI)
    assert result.exit_code == 0 and result.stdout.count("\n") == 3
    assert not (tmp_path / "-").exists()


# --- no output inside an input directory ---------------------------------------------------------


def test_an_output_inside_the_input_directory_is_warned_of_and_not_read_back(tmp_path):
    """`tagger tag DIR -o DIR/tagged.jsonl` is warned of; then `tagger tag DIR` reads the 3
    papers, not the 3 tagged lines of the first run as 3 more."""
    folder = tmp_path / "in"
    folder.mkdir()
    with papers(folder / "p.jsonl").open("a") as source:
        source.write('{"id": "p3", "abstract": ""}\n')  # rejected: the report is not empty
    out, errors = folder / "tagged.jsonl", folder / "errors.jsonl"
    first = run("tag", folder, "-o", out, "--errors", errors, *MINI)
    assert first.exit_code == 1, first.stderr
    for what, path in [("the output", out), ("the errors report", errors)]:
        assert (
            f"Warning: {what} {path} lies inside the input directory {folder}: `tagger tag "
            f"{folder}` leaves tagger's own output out, but other tools read it all; write "
            "outputs outside the directories of papers\n"
        ) in first.stderr
    assert first.stderr.splitlines()[-1] == f"tagged 3 papers to {out}, 1 rejected: see {errors}"
    again = run("tag", folder, *MINI)
    assert again.exit_code == 1, again.stderr
    assert [json.loads(line)["paper"]["id"] for line in again.stdout.splitlines()] == [
        "p0",
        "p1",
        "p2",
    ]
    assert again.stderr.splitlines()[:2] == [
        f"Note: {folder} is a directory: reading the papers of p.jsonl",
        f"Note: {folder}: skipping tagger's own output, not papers: errors.jsonl (an errors "
        "report), tagged.jsonl (tagged output); name a file to tag its papers again",
    ]


@pytest.mark.parametrize(
    ("command", "target"),
    [
        (["retag", "{dir}", "-o", "{out}"], "part-00002.jsonl"),
        (["retag", "{dir}", "-o", "{out}"], "new.jsonl"),
        (["retag", "{dir}", "-o", "{tmp}/r.jsonl", "--errors", "{out}"], "errors.jsonl"),
        (["report", "{dir}", "-o", "{out}"], "part-00001.jsonl"),
        (["retag", "{link}", "-o", "{out}"], "part-00002.jsonl"),  # through a symlink
    ],
    ids=["retag-over-a-part", "retag-new-file", "retag-errors", "report-over-a-part", "symlink"],
)
def test_an_output_inside_an_input_directory_is_refused(parts, tmp_path, command, target):
    (tmp_path / "link").symlink_to(parts)
    before = {p.name: p.read_bytes() for p in parts.iterdir()}
    args = [
        a.format(dir=parts, link=tmp_path / "link", out=parts / target, tmp=tmp_path)
        for a in command
    ]
    line = error_line(run(*args, *MINI))
    assert line.endswith(
        f"{parts / target} lies inside the input directory {args[1]}: writing there would "
        "change what is read; choose a file outside it"
    )
    assert {p.name: p.read_bytes() for p in parts.iterdir()} == before


def test_filter_to_stdout_inside_its_input_directory_is_refused(parts):
    target = parts / "part-00002.jsonl"
    before = target.read_bytes()
    with target.open("ab") as stdout:  # `tagger filter DIR >> DIR/part-00002.jsonl`
        proc = subprocess.run(
            [sys.executable, "-m", "tagger", "filter", str(parts), *MINI],
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines()[-1] == (
        f"Error: standard output lies inside the input directory {parts}: writing there would "
        "change what is read; choose a file outside it"
    )
    assert target.read_bytes() == before


# --- one writer per file -------------------------------------------------------------------------


def test_a_second_run_on_a_locked_output_is_refused(tmp_path):
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out.jsonl"
    out.write_text("another run's first line\n")
    with out.open("ab") as other_run:
        fcntl.flock(other_run.fileno(), fcntl.LOCK_EX)  # as a running tagger holds it
        line = error_line(run("tag", source, "-o", out, *MINI))
    assert line == (
        f"Error: {out} is being written by another tagger run (it holds a lock on "
        "it); wait for that run to end, or write to another file"
    )
    assert out.read_text() == "another run's first line\n"  # not emptied


# --- files that cannot be written ----------------------------------------------------------------


@pytest.mark.parametrize("option", ["-o", "--errors"])
def test_an_output_in_a_missing_or_forbidden_directory_is_one_error(tmp_path, option):
    source = papers(tmp_path / "p.jsonl")
    missing = tmp_path / "no" / "dir" / "out.jsonl"
    assert error_line(run("tag", source, option, missing, *MINI)) == (
        f"Error: cannot write {missing}: No such file or directory"
    )
    forbidden = Path("/sys/tagger-test.jsonl")  # sysfs refuses new files even to root
    assert error_line(run("tag", source, option, forbidden, *MINI)) == (
        f"Error: cannot write {forbidden}: Permission denied"
    )


def test_eval_save_tagged_into_a_missing_directory_fails_before_tagging(tmp_path):
    source = tmp_path / "l.jsonl"
    source.write_text(json.dumps({"abstract": ABSTRACTS[0], "primary_area": "x"}) + "\n")
    missing = tmp_path / "no" / "t.jsonl"
    result = run("eval", source, "--scheme", "iclr", "--save-tagged", missing, *MINI)
    assert error_line(result) == f"Error: cannot write {missing}: No such file or directory"


@pytest.mark.parametrize(
    "command",
    [
        ["filter", "{tagged}"],
        ["stats", "{tagged}"],
        ["report", "{tagged}"],
        ["schema"],
        ["taxonomy", "check"],
        pytest.param(["tag", "{papers}"], marks=pytest.mark.models),  # a subprocess: real model
    ],
    ids=["filter", "stats", "report", "schema", "check", "tag"],
)
def test_a_full_disk_on_stdout_is_one_error(tmp_path, command):
    tagged = write_tagged(
        tmp_path / "t.jsonl", [tagged_record(f"p{i}", [["rl"]]) for i in range(2000)]
    )
    source = papers(tmp_path / "p.jsonl")
    args = [a.format(tagged=tagged, papers=source) for a in command]
    with open("/dev/full", "wb") as full:
        taxonomy = [] if args[0] == "schema" else MINI
        proc = subprocess.run(
            [sys.executable, "-m", "tagger", *args, *taxonomy],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=300,
        )
    stderr = proc.stderr.decode()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0], stderr
    if args[0] == "tag":
        assert "--resume" not in errors[0] and "-o FILE" in errors[0]


def test_a_file_written_whole_through_a_symlink_or_into_a_fifo_keeps_them(tmp_path):
    """io.files.write_atomic replaces a symlink's target, not the link; what is no regular file
    (a FIFO here; /dev/stdout, /dev/null) is written into, never renamed over."""
    import stat
    import threading

    from tagger.io.files import write_atomic

    target, link = tmp_path / "target.bib", tmp_path / "link.bib"
    target.write_text("old\n")
    link.symlink_to(target)
    write_atomic(link, b"new\n")
    assert link.is_symlink() and target.read_bytes() == b"new\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, b"through\n")
    reader.join(10)
    assert got == [b"through\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link.bib", "target.bib"]


@pytest.mark.models
def test_a_library_written_to_dev_stdout_goes_to_stdout(tmp_path):
    """`tagger tag LIB -o /dev/stdout`: the library reaches stdout (a file here), and
    /dev/stdout stays what it was."""
    library = tmp_path / "lib.bib"
    library.write_text(
        "@article{a,\n  title = {T},\n  abstract = {" + ABSTRACTS[0] + "}\n}\n", encoding="utf-8"
    )
    out = tmp_path / "out.bib"
    before = os.lstat("/dev/stdout")
    with out.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "tagger", "tag", str(library), "-o", "/dev/stdout",
             "--output-format", "bibtex", *MINI],
            stdout=stdout, stderr=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8").count("tagger:") >= 1
    assert os.lstat("/dev/stdout").st_mode == before.st_mode


def test_a_file_replaced_whole_keeps_its_mode(tmp_path):
    """io.files.write_atomic: the new file has the old one's mode (a private file stays so),
    a new one the umask's; the temporary file is the one named, and none is left."""
    import stat

    from tagger.io.files import temporary_beside, write_atomic

    path = tmp_path / "f.jsonl"
    path.write_text("old\n")
    path.chmod(0o600)
    status = write_atomic(path, b"new\n", temporary=temporary_beside(path))
    assert path.read_bytes() == b"new\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (status.st_ino, status.st_size) == (path.stat().st_ino, 4)
    before = os.umask(0o077)
    try:
        write_atomic(tmp_path / "g.jsonl", b"g\n")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "g.jsonl").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.jsonl", "g.jsonl"]
