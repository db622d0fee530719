"""Tagged output read back through the one reader: the same records, from files or stdin, and
one-line errors for anything else. Through the commands that read it: a line that is not tagged
output (spans outside its text among them) is skipped and named, a last line cut short is said
to be, and a paper id that comes again is warned of."""

from __future__ import annotations

import io
import json
import sys

import pytest

from tagger import InputError, read_tagged
from tagger.io.jsonl import dumps
from tagger.io.tagged import read_tagged_lines, sniff_tagged

from ..conftest import MINI, run, tagged_record, write_tagged

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


# --- through the commands: lines that are not tagged output --------------------------------------


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (lambda r: {**r, "paper": None}, "not a line of tagged JSONL (run `tagger tag` first)"),
        (lambda r: {**r, "paper": [1]}, "not a line of tagged JSONL (run `tagger tag` first)"),
        (lambda r: {**r, "tags": ["rl"]}, "'tags.0': input should be an object"),
        (lambda r: {**r, "keyphrases": "x"}, "'keyphrases': input should be a valid array"),
        (lambda r: {**r, "tags": [{**r["tags"][0], "score": "high"}]}, "'tags.0.score'"),
        (
            lambda r: {
                **r,
                "tags": [
                    {
                        **r["tags"][0],
                        "evidence": [
                            {
                                "area": "rl",
                                "kind": "alias",
                                "rule": "r",
                                "text": "x",
                                "field": "abstract",
                                "start": "zero",
                                "end": 1,
                                "weight": 1.0,
                            }
                        ],
                    }
                ],
            },
            "'tags.0.evidence.0.start'",
        ),
    ],
    ids=[
        "paper-null",
        "paper-list",
        "tags-strings",
        "keyphrases-string",
        "score-string",
        "start-string",
    ],
)
@pytest.mark.parametrize("command", ["stats", "filter", "report"])
def test_bad_lines_of_a_tagged_file_are_skipped_and_said(tmp_path, command, mangle, reason):
    good = json.loads(json.dumps(tagged_record("a", [["rl"]]).model_dump(mode="json")))
    bad = mangle(json.loads(json.dumps(good)))
    tagged = tmp_path / "t.jsonl"
    tagged.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n" + json.dumps(good) + "\n")
    result = run(command, tagged, *MINI)
    assert result.exit_code == 1
    warning = next(line for line in result.stderr.splitlines() if line.startswith("Warning"))
    assert warning.startswith(f"Warning: skipped {tagged} line 2: ") and reason in warning
    assert result.stderr.splitlines()[-1] == "1 line skipped"
    if command == "filter":
        assert result.stdout.count("\n") == 2  # the two good lines


def test_a_truncated_tagged_file_is_read_up_to_its_last_whole_line(tmp_path):
    tagged = write_tagged(
        tmp_path / "t.jsonl", [tagged_record("a", [["rl"]]), tagged_record("b", [["rl"]])]
    )
    tagged.write_bytes(tagged.read_bytes()[:-40])
    result = run("stats", tagged, "--json", *MINI)
    assert json.loads(result.stdout)["papers"] == 1
    assert f"{tagged} line 2: the file ends in the middle of this line" in result.stderr


def _spoiled(tmp_path, change):
    good = tagged_record(
        "a",
        [["rl"]],
        abstract="Offline RL here.",
        evidence=[("rl", "rl")],
        keyphrases=["offline rl"],
    )
    data = json.loads(json.dumps(good.model_dump(mode="json")))
    data["keyphrases"][0]["spans"] = [{"field": "abstract", "start": 0, "end": 10}]
    bad = json.loads(json.dumps(data))
    change(bad)
    path = tmp_path / "t.jsonl"
    last = json.loads(json.dumps(data))
    last["paper"]["id"], bad["paper"]["id"] = "c", "b"
    path.write_text("".join(json.dumps(d) + "\n" for d in (data, bad, last)))
    return path


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            lambda d: d["keyphrases"][0]["spans"][0].update(start=10**9, end=10**9 + 5),
            "'keyphrases.0.spans.0': characters 1,000,000,000 to 1,000,000,005 of the abstract, "
            "which has 16: not in this paper's text",
        ),
        (
            lambda d: d["keyphrases"][0]["spans"][0].update(field="title"),
            "'keyphrases.0.spans.0': characters 0 to 10 of the title, which has 0",
        ),
        (
            lambda d: d["tags"][0]["evidence"][0].update(start=3, end=2),
            "'tags.0.evidence.0': characters 3 to 2 of the abstract",
        ),
        (
            lambda d: d["tags"][0]["evidence"][0].update(text="Other"),
            "'tags.0.evidence.0': its text 'Other' is not the abstract's characters 0 to 5",
        ),
    ],
    ids=["keyphrase-past-the-end", "keyphrase-in-no-title", "evidence-backwards", "evidence-text"],
)
def test_spans_outside_the_text_are_not_tagged_output(tmp_path, change, reason):
    path = _spoiled(tmp_path, change)
    result = run("stats", path, *MINI)
    assert result.exit_code == 1
    [warning] = [line for line in result.stderr.splitlines() if line.startswith("Warning")]
    assert warning.startswith(f"Warning: skipped {path} line 2: not a line of tagged JSONL: ")
    assert reason in warning


def test_retag_rejects_a_line_whose_spans_run_past_the_text(parts, tmp_path):
    lines = (parts / "part-00001.jsonl").read_bytes().splitlines(keepends=True)
    data = json.loads(lines[1])
    data["keyphrases"][0]["spans"][0].update(start=10**9, end=10**9 + 3)
    tagged = tmp_path / "t.jsonl"
    tagged.write_bytes(lines[0] + json.dumps(data).encode() + b"\n" + lines[2])
    out, errors = tmp_path / "r.jsonl", tmp_path / "e.jsonl"
    result = run("retag", tagged, "-o", out, "--errors", errors, *MINI)
    assert result.exit_code == 1
    assert out.read_text().count("\n") == 2
    [rejected] = map(json.loads, errors.read_text().splitlines())
    assert rejected["line"] == 2 and "'keyphrases.0.spans.0'" in rejected["reason"]
    assert b'"start":1000000000' not in out.read_bytes()


# --- through the commands: repeated ids ----------------------------------------------------------


def test_repeated_ids_are_warned_of_when_tagged_output_is_read(tmp_path):
    records = [tagged_record("a", [["rl"]]), tagged_record("b", [["rl"]])]
    tagged = write_tagged(tmp_path / "t.jsonl", records + records)
    result = run("stats", tagged, "--json", *MINI)
    assert result.exit_code == 0 and json.loads(result.stdout)["papers"] == 4
    assert result.stderr.splitlines() == [
        f"Warning: {tagged} line 3: paper id 'a' appears again in {tagged}; every line is read, "
        "so counts include it twice",
        f"Warning: 2 paper ids appear more than once in {tagged}",
    ]


def test_retag_of_a_directory_given_twice_warns_of_repeated_ids(parts, tmp_path):
    result = run("retag", parts, parts, "-o", tmp_path / "r.jsonl", *MINI)
    assert result.exit_code == 0
    assert (
        f"Warning: {parts / 'part-00000.jsonl'} line 1: paper id 'p0' appears again"
    ) in result.stderr
    assert f"Warning: 12 paper ids appear more than once in {parts} and {parts}" in result.stderr
