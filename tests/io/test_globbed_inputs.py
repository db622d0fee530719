"""What a shell glob hands `tagger tag`: directories and files that hold no papers (issue 25,
item 9). `tagger tag examples/*` met the directory examples/tagged and stopped; `examples/*.*`
tagged the paragraphs of README.md and overlay.yaml as papers and exited 0."""

from __future__ import annotations

import gzip
import shutil

import pytest
from click.testing import CliRunner

from tagger.cli import main
from tagger.errors import InputError
from tagger.io.inputs import paper_inputs
from tagger.io.readers import iter_records

from ..conftest import EXAMPLES, MINI

NOT_PAPERS = (
    "not a file of papers: {suffix!r} is no paper format (paper-list text .txt, JSON Lines "
    ".jsonl, JSON .json, CSV .csv or .tsv, Parquet .parquet), nor does its start look like one; "
    "leave it out, or give --input-format to read it as papers (--input-format text for a "
    "paper list)"
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
        "iclr2025-abstracts-zh-header.txt, iclr2025-sample.jsonl, icml2025-abstracts.txt "
        "(not README.md, iclr-areas.yaml, overlay.yaml, tagged/)"
    )
    assert result.stderr.splitlines()[-1] == "tagged 50 papers to out.jsonl"  # 19 + 12 + 19


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
    """`tagger tag DIR -o DIR/tagged.jsonl`, then `tagger tag DIR`, read 6 papers from 3: the
    tagged lines came back as papers (hostile-input pass, item 4). Tagged output (JSON Lines,
    gzipped or not, or Parquet) and an errors report are told by their first line or columns,
    whatever their names."""
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
