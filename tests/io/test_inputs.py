"""Which files a run reads (io.inputs): a missing file, or a directory with no papers in it,
is one clear error before anything is tagged; a directory stands for the files of papers in
it, leaving out tagger's own output, and says so; a file that holds no papers (a README, a
taxonomy a shell glob caught) is refused unless --input-format says to read it; a damaged
file among many costs only what is in it after the damage, the others are tagged and the
exit code is 1; files are opened one at a time, however many a directory holds."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import zlib

import pytest
from click.testing import CliRunner

from tagger.cli import main
from tagger.errors import InputError
from tagger.io.inputs import paper_inputs
from tagger.io.readers import iter_records

from ..conftest import ABSTRACTS, EXAMPLES, MINI, MINI_TAXONOMY, ROOT, run


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


# --- files and directories a shell glob hands `tagger tag` ---------------------------------------


NOT_PAPERS = (
    "not a file of papers: {suffix!r} is no paper format (paper-list text .txt, JSON Lines "
    ".jsonl, JSON .json, CSV .csv or .tsv, Parquet .parquet, BibTeX .bib, RIS .ris), nor does its "
    "start look like one; leave it out, or give --input-format to read it as papers "
    "(--input-format text for a paper list)"
)


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """A copy of examples/, and the working directory its parent, as after a clone."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "examples"


def tag(*args):
    return CliRunner().invoke(main, ["tag", *args, *MINI])


@pytest.mark.parametrize(("name", "suffix"), [("README.md", ".md"), ("overlay.yaml", ".yaml")])
def test_a_file_that_holds_no_papers_is_refused_before_anything_is_tagged(examples, name, suffix):
    result = tag("examples/icml2025-abstracts.txt", f"examples/{name}")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: examples/{name}: {NOT_PAPERS.format(suffix=suffix)}\n"


def test_format_says_otherwise(examples):
    result = tag("examples/README.md", "--input-format", "text")
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) > 3  # its paragraphs, tagged as asked


def test_content_that_is_papers_is_read_whatever_the_name(tmp_path):
    papers = tmp_path / "papers.export"
    papers.write_text('{"id": "a", "abstract": "Reinforcement learning for robots."}\n')
    result = tag(str(papers))
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1


def test_a_directory_reads_the_paper_files_in_it_and_says_so(examples):
    result = tag("examples", "-o", "out.jsonl")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "Note: examples is a directory: reading the papers of "
        "iclr2025-abstracts-zh-header.txt, iclr2025-sample.jsonl, icml2025-abstracts.txt, "
        "library.bib (not README.md, iclr-areas.yaml, overlay.yaml, tagged/)"
    )
    assert result.stderr.splitlines()[-1] == "tagged 53 papers to out.jsonl"  # 19 + 12 + 19 + 3


def test_the_glob_of_a_folder_stops_at_its_readme_not_at_its_subdirectory(examples):
    given = sorted(str(path.relative_to(examples.parent)) for path in examples.iterdir())
    result = tag(*given)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "Note: examples/tagged: skipping tagger's own output, not papers: "
        "icml2025-abstracts.jsonl (tagged output); name a file to tag its papers again",
        f"Error: examples/README.md: {NOT_PAPERS.format(suffix='.md')}",
    ]
    for name in ("README.md", "iclr-areas.yaml", "overlay.yaml"):
        given.remove(f"examples/{name}")
    assert paper_inputs(given) == given[:-1]  # examples/tagged holds tagged output only


def test_paper_inputs_keeps_files_and_stdin_as_given(examples):
    notes = []
    given = ["-", "examples/overlay.yaml", "examples/tagged/icml2025-abstracts.jsonl"]
    assert paper_inputs(given, notes.append) == given
    assert notes == []


def test_a_directory_leaves_out_tagger_own_output(tmp_path):
    """Tagged output (JSON Lines, gzipped or not, or Parquet) and an errors report in a
    directory are not its papers: told by their first line or columns, whatever their names,
    they are left out, so `tagger tag DIR -o DIR/tagged.jsonl`, then `tagger tag DIR`, does
    not read the tagged lines back as papers."""
    from tagger.io.jsonl import rejected_line
    from tagger.io.parquet import ParquetWriter

    from ..conftest import tagged_record, write_tagged

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "papers.jsonl").write_text('{"id": "a", "abstract": "Graph neural networks."}\n')
    (folder / "tagged-by-hand.json").write_text('[{"paper": {}, "tags": []}]')  # papers, badly
    write_tagged(folder / "papers-tagged.jsonl", [tagged_record("a"), tagged_record("b")])
    (folder / "old.jsonl.gz").write_bytes(
        gzip.compress((folder / "papers-tagged.jsonl").read_bytes())
    )
    writer = ParquetWriter(folder / "tagged.parquet")
    writer.write(tagged_record("a"))
    writer.close()
    error = InputError("the abstract is empty", source="x.jsonl", line=2)
    (folder / "errors.jsonl").write_bytes(rejected_line(error))
    notes = []
    assert paper_inputs([folder], notes.append) == [
        str(folder / "papers.jsonl"),
        str(folder / "tagged-by-hand.json"),
    ]
    assert notes == [
        f"{folder} is a directory: reading the papers of papers.jsonl, tagged-by-hand.json",
        f"{folder}: skipping tagger's own output, not papers: errors.jsonl (an errors report), "
        "old.jsonl.gz (tagged output), papers-tagged.jsonl (tagged output), tagged.parquet "
        "(tagged output); name a file to tag its papers again",
    ]


def test_gzipped_paper_files_in_a_directory_are_papers(tmp_path):
    import gzip

    (tmp_path / "in").mkdir()
    with gzip.open(tmp_path / "in" / "a.jsonl.gz", "wt") as handle:
        handle.write('{"abstract": "Graph neural networks."}\n')
    (tmp_path / "in" / "notes.md.gz").write_bytes(gzip.compress(b"# notes\n"))
    [source] = paper_inputs([tmp_path / "in"])
    assert source.endswith("a.jsonl.gz")
    with pytest.raises(Exception, match="not a file of papers"):
        iter_records(tmp_path / "in" / "notes.md.gz")


# --- one damaged file among many -----------------------------------------------------------------


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
