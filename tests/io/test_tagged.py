"""Tagged output read back through the one reader: the same records, from files or stdin, and
one-line errors for anything else."""

from __future__ import annotations

import io
import sys

import pytest

from tagger import InputError, read_tagged
from tagger.io.jsonl import dumps
from tagger.io.tagged import read_tagged_lines, sniff_tagged

from ..conftest import tagged_record, write_tagged

RECORDS = [
    tagged_record("a", [["rl"]], venue="ICML", year=2025, keyphrases=["policy"]),
    tagged_record("b", [], title="T", extra_field={"kept": [1, 2]}),
]


def test_records_read_back_equal_what_was_written(tmp_path):
    path = write_tagged(tmp_path / "t.jsonl", RECORDS)
    assert list(read_tagged(path)) == RECORDS
    lines = list(read_tagged_lines(path))
    assert [(line.number, line.raw) for line in lines] == [
        (1, dumps(RECORDS[0])),
        (2, dumps(RECORDS[1])),
    ]


def test_a_line_is_one_line_to_every_splitter(tmp_path):
    """U+0085, U+2028 and U+2029 are legal raw in JSON, but str.splitlines (and older JavaScript)
    breaks lines there: tagger writes them escaped, and reads them back the same."""
    title = "a\x85b\u2028c\u2029d"
    line = dumps(tagged_record("a", [["rl"]], title=title))
    assert len(line.decode().splitlines()) == 1
    path = write_tagged(tmp_path / "t.jsonl", [tagged_record("a", [["rl"]], title=title)])
    assert [r.paper.title for r in read_tagged(path)] == [title]


def test_blank_lines_and_a_missing_last_newline(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n" + dumps(RECORDS[0]) + b"  \n" + dumps(RECORDS[1]).rstrip(b"\n"))
    lines = list(read_tagged_lines(path))
    assert [line.number for line in lines] == [2, 4]
    assert lines[1].raw == dumps(RECORDS[1])  # completed with its newline
    assert [line.record for line in lines] == RECORDS


def _stdin(monkeypatch, data):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_is_sniffed_then_read_once_and_whole(monkeypatch):
    _stdin(monkeypatch, b"\n" + b"".join(dumps(r) for r in RECORDS))
    is_tagged, rest = sniff_tagged("-")
    assert is_tagged
    assert list(read_tagged("-", stdin=rest)) == RECORDS
    _stdin(monkeypatch, b"".join(dumps(r) for r in RECORDS))
    assert list(read_tagged("-")) == RECORDS


def test_papers_are_not_tagged_output(tmp_path, monkeypatch):
    papers = tmp_path / "p.jsonl"
    papers.write_text('{"abstract": "x"}\n')
    assert sniff_tagged(papers) == (False, None)
    assert sniff_tagged(write_tagged(tmp_path / "t.jsonl", RECORDS)) == (True, None)
    _stdin(monkeypatch, b'{"abstract": "x"}\n')
    is_tagged, rest = sniff_tagged("-")
    assert not is_tagged and list(rest) == [b'{"abstract": "x"}\n']


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"abstract": "x"}', "not a line of tagged JSONL (run `tagger tag` first)"),
        (b"{oops", "not a line of tagged JSONL (run `tagger tag` first)"),
        (b"[1, 2]", "not a line of tagged JSONL (run `tagger tag` first)"),
        (
            dumps(RECORDS[0]).replace(b'"provenance"', b'"provenanc"').rstrip(),
            "not a line of tagged JSONL: 'provenance': field required",
        ),
        (
            dumps(RECORDS[0]).replace(b'"score":0.5', b'"score":"high"', 1).rstrip(),
            "not a line of tagged JSONL: 'keyphrases.0.score': input should be a valid number, "
            "unable to parse string as a number",
        ),
    ],
)
def test_anything_else_is_an_error_with_its_line(tmp_path, line, reason):
    path = tmp_path / "t.jsonl"
    path.write_bytes(dumps(RECORDS[0]) + line + b"\n")
    with pytest.raises(InputError) as caught:
        list(read_tagged(path))
    assert str(caught.value) == f"{path} line 2: {reason}"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="nope.jsonl: no such file"):
        read_tagged(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a directory, not a file"):
        read_tagged(tmp_path)
