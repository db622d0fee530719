"""One bad file among many (hostile-input pass, item 3): `tagger tag DIR` stopped before anything
was tagged when one file of the directory was a truncated `.jsonl.gz` (0 of the 24 papers of the
intact files tagged, nor the 6 whole lines before the cut) or UTF-16 (0 of 22); a directory of
1,500 one-record files failed with "Too many open files". A damaged file is reported, in the
errors report and on stderr, the records it held before the damage are tagged, and so are the
other files; the exit code is 1, as for a rejected record. Files are opened one at a time."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib

from ..conftest import ABSTRACTS, MINI, ROOT, run


def lines(prefix, count):
    return "".join(
        json.dumps({"id": f"{prefix}{i}", "abstract": f"{ABSTRACTS[i % 3]} {prefix} case {i}."})
        + "\n"
        for i in range(count)
    )


def ids(result):
    return [json.loads(line)["paper"]["id"] for line in result.stdout.splitlines()]


def test_a_truncated_gzip_in_a_directory_costs_only_what_is_after_the_cut(tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "a.jsonl").write_text(lines("a", 12))
    whole = gzip.compress(lines("b", 400).encode())
    cut = whole[: len(whole) // 2]
    (folder / "b.jsonl.gz").write_bytes(cut)
    (folder / "c.jsonl").write_text(lines("c", 12))
    before_the_cut = zlib.decompressobj(31).decompress(cut).count(b"\n")  # whole lines
    assert 6 <= before_the_cut < 400
    errors = tmp_path / "errors.jsonl"
    result = run("tag", folder, "--errors", errors, *MINI)
    assert result.exit_code == 1, result.stderr
    assert ids(result) == (
        [f"a{i}" for i in range(12)]
        + [f"b{i}" for i in range(before_the_cut)]
        + [f"c{i}" for i in range(12)]
    )
    reason = (
        "cannot read it: Compressed file ended before the end-of-stream marker was reached; "
        f"the {before_the_cut} records before it are read, the rest of the file is not"
    )
    assert f"Warning: skipped {folder / 'b.jsonl.gz'}: {reason}\n" in result.stderr
    assert [json.loads(line) for line in errors.read_text().splitlines()] == [
        {"source": str(folder / "b.jsonl.gz"), "line": None, "record": None, "id": None}
        | {"reason": reason}
    ]
    assert result.stderr.splitlines()[-1] == (
        f"tagged {24 + before_the_cut} papers, 1 rejected: see {errors}"
    )


def test_a_utf16_file_among_utf8_ones_is_reported_and_the_others_tagged(tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "a.jsonl").write_text(lines("a", 11))
    (folder / "b.jsonl").write_bytes(lines("b", 5).encode("utf-16"))  # Excel's "Unicode text"
    (folder / "c.jsonl").write_text(lines("c", 11))
    result = run("tag", folder, *MINI)
    assert result.exit_code == 1, result.stderr
    assert ids(result) == [f"a{i}" for i in range(11)] + [f"c{i}" for i in range(11)]
    assert (
        f"Warning: skipped {folder / 'b.jsonl'}: the file is UTF-16; save it as UTF-8\n"
        in result.stderr
    )
    assert result.stderr.splitlines()[-1] == "tagged 22 papers, 1 rejected"


def test_a_file_damaged_at_the_start_of_a_run_of_one_file_is_reported(tmp_path):
    source = tmp_path / "excel.tsv"
    source.write_bytes("id\tabstract\n1\tAn abstract.\n".encode("utf-16"))
    result = run("tag", source, *MINI)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines()[-2:] == [
        f"Warning: skipped {source}: the file is UTF-16; save it as UTF-8",
        "tagged 0 papers, 1 rejected",
    ]


def test_a_missing_file_still_fails_before_anything_is_tagged(tmp_path):
    (tmp_path / "a.jsonl").write_text(lines("a", 3))
    result = run("tag", tmp_path / "a.jsonl", tmp_path / "nope.jsonl", *MINI)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.splitlines()[-1] == f"Error: {tmp_path / 'nope.jsonl'}: no such file"


def test_a_directory_of_more_files_than_may_be_open_at_once(tmp_path):
    """Under a limit of 256 open files (the common one is 1,024), 400 one-record files."""
    folder = tmp_path / "papers"
    folder.mkdir()
    for n in range(400):
        (folder / f"p{n:04d}.jsonl").write_text(lines(f"p{n:04d}-", 1))
    out = tmp_path / "out.jsonl"
    script = (
        "import resource, sys\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.conftest import HashEmbedder\n"
        "import tagger.language.embedders as embedders\n"
        "embedders.make_embedder = lambda *args, **kwargs: HashEmbedder()\n"
        "from tagger.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "tag", str(folder), "-o", str(out), "--workers", "1"] + MINI,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == f"tagged 400 papers to {out}"
    assert [json.loads(line)["paper"]["id"] for line in out.read_text().splitlines()] == [
        f"p{n:04d}-0" for n in range(400)
    ]
