"""Papers read (io.readers) from real files: the shipped examples, fixtures in tests/data/readers
and byte-exact files written to tmp_path, each record a Paper or an error naming its line; and,
through `tagger tag`, one file per fault (tests/data/faults): every record tagged or rejected
with its line and reason, the run going on, the exit code saying whether any was rejected."""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger.cli import main
from tagger.errors import InputError, InputNotice
from tagger.io.formats import FORMATS, detect_format
from tagger.io.readers import iter_records, read_papers
from tagger.records import Paper, stable_id

from ..conftest import ABSTRACTS, MINI, MINI_TAXONOMY, papers, run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = Path(__file__).resolve().parents[1] / "data" / "readers"
# one file per fault, and what `tagger tag` does with each
FAULTS = Path(__file__).resolve().parents[1] / "data" / "faults"
EXPECTED = {
    k: v
    for k, v in json.loads((FAULTS / "expected.json").read_text()).items()
    if not k.startswith("_")
}


def paragraphs_after_header(path: Path) -> list[str]:
    """The file's abstracts found independently of the reader: blank-line blocks, less line 1."""
    blocks = [block.strip() for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8"))]
    return [block for block in blocks[1:] if block]


def stdin_of(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)


# --- the shipped paper-list text files ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "venue"),
    [
        ("icml2025-abstracts.txt", "ICML"),
        ("iclr2025-abstracts-zh-header.txt", "ICLR"),
    ],
)
def test_shipped_paper_lists(name: str, venue: str) -> None:
    path = EXAMPLES / name
    papers = list(read_papers(path))
    expected = paragraphs_after_header(path)
    assert len(papers) == len(expected) == 19
    assert [paper.abstract for paper in papers] == expected
    assert {(paper.venue, paper.year) for paper in papers} == {(venue, 2025)}
    assert [paper.id for paper in papers] == [stable_id(venue, text) for text in expected]
    assert all(paper.title is None and paper.keywords is None for paper in papers)


def test_paper_list_keeps_latex_and_unicode_byte_for_byte() -> None:
    path = EXAMPLES / "icml2025-abstracts.txt"
    raw_line_3 = path.read_bytes().split(b"\n")[2]
    first = next(iter(read_papers(path)))
    assert first.abstract.encode("utf-8") == raw_line_3
    assert "($\\mu$P)" in first.abstract
    assert (
        "\\textit{early statistics effectively approximate global hyperparameter optima}"
        in first.abstract
    )


def test_paper_list_keeps_emphasis_and_curly_quotes() -> None:
    papers = list(read_papers(EXAMPLES / "iclr2025-abstracts-zh-header.txt"))
    assert papers[15].abstract.startswith("In recent years, *task arithmetic* has g")
    assert any("\u2019" in paper.abstract for paper in papers)  # curly apostrophe


def test_paper_list_lines_are_paragraph_starts() -> None:
    records = list(iter_records(EXAMPLES / "icml2025-abstracts.txt"))
    assert [record.abstract[:20] for record in records][:2] == [
        "Maximal Update Param",
        "We extend the standa",
    ]
    # Record-level errors carry the paragraph's first line; prove it with a broken paragraph.
    raw = (EXAMPLES / "icml2025-abstracts.txt").read_bytes().split(b"\n")
    raw[4] = raw[4].replace(b"We extend", b"We \xe9xtend")
    bad = list(iter_records("-", stdin=stdin_of(b"\n".join(raw)), format="text"))
    assert len(bad) == 19
    assert isinstance(bad[1], InputError)
    assert bad[1].line == 5
    assert bad[1].reason == ("invalid UTF-8: byte 0xE9 after 'We '; save the file as UTF-8")
    assert all(isinstance(record, Paper) for i, record in enumerate(bad) if i != 1)


def test_paper_list_error_names_the_paragraphs_first_line(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_bytes(
        b"ICML 2025 Papers\n\nfine\n\n\nwrapped first line\nsecond caf\xe9 line\n\nok\n"
    )
    records = list(iter_records(path))
    assert [r.abstract if isinstance(r, Paper) else (r.line, r.reason) for r in records] == [
        "fine",
        (6, "invalid UTF-8: byte 0xE9 after 'second caf'; save the file as UTF-8"),
        "ok",
    ]


@pytest.mark.parametrize(
    ("header", "venue", "year"),
    [
        ("ICML 2025 Papers", "ICML", 2025),
        ("ICLR 2024 Accepted Papers", "ICLR", 2024),
        ("ICLR 2025 论文列表", "ICLR", 2025),
        ("NeurIPS 2023", "NeurIPS", 2023),
        ("  CoRL 1999 accepted papers  ", "CoRL", 1999),
        # as people write them, with words beside the venue and year: a header, not a paper
        ("ICLR 2025 Oral Papers", "ICLR", 2025),
        ("Papers from NeurIPS 2025", "NeurIPS", 2025),
        ("NeurIPS'25 Papers", "NeurIPS", 2025),
        ("Accepted papers at ICML 2024", "ICML", 2024),
        ("ICML 2025: Spotlight Posters", "ICML", 2025),
        ("NeurIPS ’24 Spotlights", "NeurIPS", 2024),
    ],
)
def test_paper_list_header(tmp_path: Path, header: str, venue: str, year: int) -> None:
    path = tmp_path / "list.txt"
    path.write_text(f"{header}\n\nFirst abstract.\n\n\n \nSecond abstract.\n", encoding="utf-8")
    records = list(iter_records(path))
    assert [(r.abstract, r.venue, r.year) for r in records] == [
        ("First abstract.", venue, year),
        ("Second abstract.", venue, year),
    ]


@pytest.mark.parametrize(
    "first",
    [
        "We study federated learning at ICLR 2025 scale with many clients and a long first line "
        "here.",
        "Papers 2025",  # no venue word
        "ICML Papers",  # no year
        "ICML 2025 Papers\nwith a second line",  # more than one line
        "We train GNNs in 2024.",  # a sentence
    ],
)
def test_paper_list_without_header(tmp_path: Path, first: str) -> None:
    path = tmp_path / "list.txt"
    path.write_text(f"{first}\n\nAnother abstract.\n", encoding="utf-8")
    papers = list(read_papers(path))
    assert [(paper.abstract, paper.venue, paper.year) for paper in papers] == [
        (first, None, None),
        ("Another abstract.", None, None),
    ]


def test_a_first_line_that_looks_like_a_header_is_warned_of(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("Accepted Papers, Twenty Twenty-Five\n\nAnother abstract.\n")
    notices = [r for r in iter_records(path, notices=True) if isinstance(r, InputNotice)]
    assert [(n.warning, str(n)) for n in notices] == [
        (
            True,
            f"{path} line 1: 'Accepted Papers, Twenty Twenty-Five' is read as a paper, but "
            "looks like a header: a header names a venue and a year, like 'ICML 2025 Papers' or "
            "'Papers from NeurIPS 2025'. If it is one, remove it and give the venue and year "
            "(--venue, --year)",
        )
    ]


def _abstracts(count: int) -> list[str]:
    """Real abstracts, one line each (the shipped list's paragraphs)."""
    return paragraphs_after_header(EXAMPLES / "icml2025-abstracts.txt")[:count]


def test_abstracts_one_per_line_are_papers_each_with_a_warning(tmp_path: Path) -> None:
    """Five abstracts one per line, no blank lines: one paper with the tags of five, before."""
    path = tmp_path / "list.txt"
    lines = [line.encode() for line in ["ICLR 2025 Oral Papers", *_abstracts(5)]]
    lines[3] = b"\xe9" + lines[3]  # the third abstract, on line 4
    path.write_bytes(b"\n".join(lines) + b"\n")
    records = list(iter_records(path, notices=True))
    notices = [(r.line, r.warning) for r in records if isinstance(r, InputNotice)]
    papers = [(r.abstract, r.venue, r.year) for r in records if isinstance(r, Paper)]
    assert papers == [(text, "ICLR", 2025) for k, text in enumerate(_abstracts(5)) if k != 2]
    assert [(r.line, r.reason) for r in records if isinstance(r, InputError)] == [
        (4, "invalid UTF-8: byte 0xE9 at the start; save the file as UTF-8")
    ]
    assert notices == [(1, True), (1, False)]  # the paragraph split; its first line the header
    assert str(records[0]) == (
        f"{path} line 1: the paragraph holds several lines of 300 characters or more, each long "
        "enough to be an abstract: each is read as a paper (with the shorter lines before it, "
        "such as a title); put a blank line between papers to say where each ends"
    )


def test_titles_and_abstracts_without_blank_lines_are_a_paper_each(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    first, second, third = _abstracts(3)
    path.write_text(
        f"A title\n{first}\nAnother title\n{second}\n\nWrapped abstract,\nshort lines.\n\n"
        f"Third title\n{third}\nand a short last line\n"
    )
    papers = list(read_papers(path))
    assert [p.abstract for p in papers] == [
        f"A title\n{first}",
        f"Another title\n{second}",
        "Wrapped abstract,\nshort lines.",  # one long line or none: a paragraph is one paper
        f"Third title\n{third}\nand a short last line",
    ]
    assert [p.venue for p in papers] == [None] * 4


def test_venue_and_year_given_fill_what_papers_lack(tmp_path: Path) -> None:
    text, headed, jsonl = tmp_path / "list.txt", tmp_path / "headed.txt", tmp_path / "p.jsonl"
    text.write_text("First abstract.\n\nSecond abstract.\n")
    headed.write_text("ICML 2024 Papers\n\nFirst abstract.\n")
    jsonl.write_text(
        '{"id": "a", "abstract": "x", "conference": "CoRL"}\n'
        '{"abstract": "y", "year": 2023}\n'
        '{"abstract": "z", "venue": ""}\n'
    )

    def read(path):
        return [(p.venue, p.year) for p in read_papers(path, venue="NeurIPS", year=2025)]

    assert read(text) == [("NeurIPS", 2025)] * 2
    assert read(headed) == [("ICML", 2024)]  # the header says, for its papers
    assert read(jsonl) == [("CoRL", 2025), ("NeurIPS", 2023), ("NeurIPS", 2025)]
    given = next(iter(read_papers(text, venue="NeurIPS")))
    assert given.id == stable_id("NeurIPS", "First abstract.")  # as if the file said so


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"year": 25}, "The 'year' parameter must be an int from 1900 to 2100. Got 25 instead."),
        ({"year": "2025"}, "The 'year' parameter must be an int from 1900 to 2100. Got '2025'"),
        ({"venue": " "}, "The 'venue' parameter must be a line of text (not blank, no line "),
        ({"venue": "ICML\n2025"}, "The 'venue' parameter must be a line of text"),
    ],
)
def test_venue_and_year_given_are_checked(tmp_path: Path, given, message) -> None:
    path = tmp_path / "list.txt"
    path.write_text("An abstract.\n")
    with pytest.raises(ValueError) as caught:
        read_papers(path, **given)
    assert str(caught.value).startswith(message)


def test_paper_list_keeps_inner_newlines_and_strips_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "wrapped.txt"
    path.write_bytes(b"\n\n   A hard-wrapped abstract\n  second line $x^2$  \n\t\n\nNext one.  ")
    records = list(iter_records(path))
    assert [(record.abstract, record.venue) for record in records] == [
        ("A hard-wrapped abstract\n  second line $x^2$", None),
        ("Next one.", None),
    ]


def test_paper_list_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_bytes(
        b"\xef\xbb\xbfICML 2025 Papers\r\n\r\n"
        b"Line one\r\nline two \xe2\x80\x9cquoted\xe2\x80\x9d\r\n\r\nThird.\r\n"
    )
    papers = list(read_papers(path))
    assert [(p.abstract, p.venue, p.year) for p in papers] == [
        ("Line one\nline two \u201cquoted\u201d", "ICML", 2025),
        ("Third.", "ICML", 2025),
    ]


# --- JSON Lines ----------------------------------------------------------------------------------


def test_jsonl_malformed_line_in_the_middle() -> None:
    records = list(iter_records(DATA / "papers.jsonl"))
    assert len(records) == 3
    first, error, third = records
    assert isinstance(first, Paper) and isinstance(third, Paper)
    assert (first.id, first.venue, first.year) == ("j-1", "ICML", 2025)
    assert first.abstract == (
        "Maximal Update Parameterization ($\\mu$P) allows zero-shot hyperparameter transfer."
    )
    assert isinstance(error, InputError)
    assert error.line == 2
    assert error.reason.startswith("invalid JSON: ")
    assert str(error).startswith(f"{DATA / 'papers.jsonl'} line 2: invalid JSON: ")
    # aliases: forum -> id, summary -> abstract
    assert (third.id, third.abstract, third.keywords) == (
        "j-3",
        "In recent years, *task arithmetic* has gained attention.",
        ["model merging"],
    )
    with pytest.raises(InputError, match="line 2: invalid JSON"):
        list(read_papers(DATA / "papers.jsonl"))


def test_shipped_jsonl_sample_matches_its_source() -> None:
    source = ROOT / "data" / "iclr2025-keywords.jsonl"  # shipped in data/
    papers = list(read_papers(EXAMPLES / "iclr2025-sample.jsonl"))
    assert len(papers) == 12
    assert all((paper.venue, paper.year) == ("ICLR", 2025) for paper in papers)
    assert all(paper.title and paper.keywords for paper in papers)
    with source.open(encoding="utf-8") as lines:
        originals = [json.loads(line) for line in itertools.islice(lines, 12)]
    assert [(p.id, p.abstract, p.keywords) for p in papers] == [
        (o["id"], o["abstract"], o["keywords"]) for o in originals
    ]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"title": "no abstract"}', "'abstract': field required"),
        (b'{"abstract": ""}', "the abstract is empty"),
        (b'{"abstract": "  \\n\\t "}', "the abstract is empty"),
        (b'{"abstract": 42}', "'abstract': input should be a valid string"),
        (
            b'{"abstract": "ok", "year": "soon"}',
            "'year': input should be a valid integer, unable to parse string as an integer",
        ),
        (b'["a list"]', "expected a JSON object, got an array"),
        (b'"a string"', "expected a JSON object, got a string"),
        (
            b'{"abstract": "caf\xe9"}',
            'invalid UTF-8: byte 0xE9 after \'{"abstract": "caf\'; save the file as UTF-8',
        ),
        (
            b'{"abstract": "x",}',
            "invalid JSON: Expecting property name enclosed in double quotes at column 18",
        ),
        (
            b'{"abstract": "x \\ud83d"}',
            "invalid JSON: a \\u escape is half a surrogate pair at column 17",
        ),
    ],
)
def test_jsonl_record_errors(tmp_path: Path, line: bytes, reason: str) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_bytes(b'{"abstract": "before"}\n' + line + b'\n\n{"abstract": "after"}\n')
    records = list(iter_records(path))
    assert [r.abstract for r in records if isinstance(r, Paper)] == ["before", "after"]
    errors = [r for r in records if isinstance(r, InputError)]
    assert [(e.reason, e.line, e.source) for e in errors] == [(reason, 2, str(path))]


def test_jsonl_error_names_the_record_id(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text('{"paper_id": "xyz", "abstract": ""}\n', encoding="utf-8")
    [error] = list(iter_records(path))
    assert isinstance(error, InputError)
    assert (error.record_id, str(error)) == ("xyz", f"{path} line 1: the abstract is empty")


def test_jsonl_bom_crlf_and_big_integers(tmp_path: Path) -> None:
    path = tmp_path / "papers.ndjson"
    path.write_bytes(
        b"\xef\xbb\xbf"
        b'{"id": 123456789012345678901234567890, "abstract": "A\\r\\nB"}\r\n'
        b'\r\n{"abstract": "tail \xe2\x80\x94 dash"}\r\n'
    )
    papers = list(read_papers(path))
    assert [(p.id, p.abstract) for p in papers] == [
        ("123456789012345678901234567890", "A\r\nB"),  # escaped \r inside JSON is data
        (stable_id(None, "tail \u2014 dash"), "tail \u2014 dash"),
    ]


def test_nan_in_json_lines_is_rejected_as_from_parquet(tmp_path):
    source = tmp_path / "p.jsonl"
    source.write_text(
        json.dumps({"id": "a", "abstract": ABSTRACTS[0], "x": 1.5})
        + "\n"
        + '{"id": "b", "abstract": "Graphs.", "x": [NaN]}\n'
    )
    result = run("tag", source, *MINI)
    assert result.exit_code == 1 and result.stdout.count("\n") == 1
    assert f"Warning: skipped {source} line 2: field 'x' holds NaN or an infinity" in result.stderr


# --- JSON arrays ---------------------------------------------------------------------------------


def test_json_array_with_aliases_and_extra_fields() -> None:
    papers = list(read_papers(DATA / "papers.json"))
    assert [(p.id, p.title, p.venue, p.year) for p in papers] == [
        ("a-1", "Federated LoRA", "ICLR", 2025),
        ("42", None, None, None),
        ("a-3", None, None, None),
    ]
    assert papers[0].abstract == "Low-Rank Adaptation (LoRA) for federated fine-tuning."
    assert papers[1].model_extra == {"track": "main"}


def test_json_array_bad_elements_are_numbered() -> None:
    records = list(iter_records(DATA / "bad-element.json"))
    assert [
        r.id if isinstance(r, Paper) else (r.record, r.line, r.record_id, r.reason) for r in records
    ] == [
        "b-1",
        (2, None, "b-2", "'abstract': field required"),
        (3, None, None, "expected a JSON object, got a string"),
        (4, None, "b-4", "the abstract is empty"),
        "b-5",
    ]
    assert str(records[1]) == f"{DATA / 'bad-element.json'} record 2: 'abstract': field required"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b'[{"abstract": "a"},\n {"abstract": }]',
            "line 2: invalid JSON: Expecting value at column 15",
        ),
        (b"42", "expected a JSON array of paper objects, got a number"),
        (b'[{"abstract": "caf\xe9"}]', "line 1: invalid UTF-8: byte 0xE9"),
    ],
)
def test_json_file_level_errors(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "papers.json"
    path.write_bytes(data)
    records = iter_records(path)
    with pytest.raises(InputError, match=re.escape(message)):
        next(records)


def test_json_single_object_is_one_paper(tmp_path: Path) -> None:
    path = tmp_path / "paper.json"
    path.write_text('{\n  "id": "one",\n  "abstract": "Just one."\n}\n', encoding="utf-8")
    assert [(p.id, p.abstract) for p in read_papers(path)] == [("one", "Just one.")]


def test_json_named_file_holding_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "papers.json"
    path.write_text('{"abstract": "one"}\n{"abstract": "two"}\n', encoding="utf-8")
    assert [p.abstract for p in read_papers(path)] == ["one", "two"]
    with pytest.raises(InputError, match="read it as format 'jsonl'"):
        list(read_papers(path, format="json"))


# --- CSV and TSV ---------------------------------------------------------------------------------


def test_csv_quoted_commas_newlines_and_quotes() -> None:
    records = list(iter_records(DATA / "papers.csv"))
    assert [(r.id, r.title, r.keywords, r.venue, r.year) for r in records] == [
        ("csv-1", "Scaling Laws, Revisited", ["scaling laws", "data quality"], "ICLR", 2025),
        ("csv-2", "Offline RL Without Rewards", ["offline RL"], "ICML", 2024),
        ("csv-3", 'The "Lottery" Ticket, Again', None, None, None),
    ]
    assert records[0].abstract == (
        "We revisit scaling laws for language models, and find that "
        "data quality, not size, dominates."
    )
    assert records[1].abstract == (
        "We learn policies from logged data\nwithout reward labels.\n\n"
        "A second paragraph stays inside the field."
    )


def test_csv_rows_report_their_first_line(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text('id,abstract\n1,"multi\nline"\n\n2,\n3,"ok"\n', encoding="utf-8")
    records = list(iter_records(path))
    assert [r.id if isinstance(r, Paper) else (r.line, r.reason) for r in records] == [
        "1",
        (5, "the abstract is empty"),
        "3",
    ]


def test_csv_ragged_row() -> None:
    records = list(iter_records(DATA / "ragged.csv"))
    assert [r.id if isinstance(r, Paper) else (r.line, r.reason) for r in records] == [
        "r-1",
        (3, "the row has 3 fields but the header has 2 (quote fields that contain the delimiter)"),
        "r-3",
    ]


def test_tsv_with_aliases() -> None:
    papers = list(read_papers(DATA / "papers.tsv"))
    assert [(p.id, p.title, p.abstract) for p in papers] == [
        ("t-1", "Graph Transformers", "We study attention over graphs, with positional encodings."),
        ("t-2", "Diffusion Policies", 'Diffusion models as policies; "quoted" words stay.'),
    ]


def test_tsv_extension_means_tab_even_with_commas(tmp_path: Path) -> None:
    path = tmp_path / "one-column.tsv"
    path.write_text("abstract\nWe propose A, B, and C.\n", encoding="utf-8")
    assert [p.abstract for p in read_papers(path)] == ["We propose A, B, and C."]


def test_csv_bom_crlf_and_excel_blank_rows(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(
        b'\xef\xbb\xbfforum,Title,summary\r\nf1,A,"first\r\nsecond"\r\n'
        b"f2,B,caf\xc3\xa9 \xe2\x80\x9cq\xe2\x80\x9d\r\n,,\r\n,,\r\n"
    )
    papers = list(read_papers(path))
    assert [(p.id, p.title, p.abstract) for p in papers] == [
        ("f1", "A", "first\nsecond"),
        ("f2", "B", "caf\u00e9 \u201cq\u201d"),
    ]


def test_csv_invalid_utf8_in_one_row(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_bytes(b"id,abstract\n1,good\n2,caf\xe9 au lait\n3,also good\n")
    records = list(iter_records(path))
    assert [r.id if isinstance(r, Paper) else (r.line, r.reason) for r in records] == [
        "1",
        (3, "invalid UTF-8: byte 0xE9 after 'caf'; save the file as UTF-8"),
        "3",
    ]


def test_csv_without_abstract_column(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text("id,title,text\n1,A,Some text\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        next(iter_records(path))
    assert str(caught.value) == (
        f"{path} line 1: no abstract column: the header has 'id', 'title', 'text'; name the "
        "column of abstracts one of abstract, summary, Abstract, abstractText"
    )


def test_csv_header_only_yields_nothing(tmp_path: Path) -> None:
    path = tmp_path / "papers.csv"
    path.write_text("id,abstract\n", encoding="utf-8")
    assert list(iter_records(path)) == []


def test_csv_long_abstract(tmp_path: Path) -> None:
    long = "token " * 25_000  # over the csv module's default 131072-character field limit
    path = tmp_path / "long.csv"
    path.write_text(f'id,abstract\n1,"{long}"\n', encoding="utf-8")
    assert [p.abstract for p in read_papers(path)] == [long]


# --- stdin and format detection ------------------------------------------------------------------

STDIN_CASES = {
    "text": b"ICLR 2024 Accepted Papers\n\nAbstract one.\n\nAbstract two.\n",
    "jsonl": b'{"abstract": "Abstract one.", "venue": "ICLR", "year": 2024}\n'
    b'{"abstract": "Abstract two.", "venue": "ICLR", "year": 2024}\n',
    "json": b'\n  [{"abstract": "Abstract one.", "venue": "ICLR", "year": 2024},\n'
    b'   {"abstract": "Abstract two.", "venue": "ICLR", "year": 2024}]\n',
    "csv": b"venue,year,abstract\nICLR,2024,Abstract one.\nICLR,2024,Abstract two.\n",
    "tsv": b"venue\tyear\tabstract\nICLR\t2024\tAbstract one.\nICLR\t2024\tAbstract two.\n",
}


@pytest.mark.parametrize("kind", STDIN_CASES)
def test_stdin_sniffs_each_format(kind: str) -> None:
    papers = list(read_papers("-", stdin=stdin_of(STDIN_CASES[kind])))
    assert [(p.abstract, p.venue, p.year) for p in papers] == [
        ("Abstract one.", "ICLR", 2024),
        ("Abstract two.", "ICLR", 2024),
    ]
    assert papers[0].id == stable_id("ICLR", "Abstract one.")


def test_stdin_errors_name_stdin() -> None:
    records = list(iter_records("-", stdin=stdin_of(b'{"abstract": "a"}\n{oops\n')))
    assert str(records[1]).startswith("<stdin> line 2: invalid JSON: ")


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("a.jsonl", b"", "jsonl"),
        ("a.NDJSON", b"", "jsonl"),
        ("a.json", b"[\n", "json"),
        ("a.json", b'{"abstract": "x"}\n', "jsonl"),
        ("a.json", b"{\n", "json"),
        ("a.csv", b"whatever", "csv"),
        ("a.tsv", b"", "csv"),
        ("a.txt", b"[1, 2]", "text"),
        ("a.md", b"{", "jsonl"),  # no paper suffix: the content decides
        ("README.md", b"# Example inputs\n", None),  # no papers
        ("overlay.yaml", b"extends: builtin\n", None),
        ("notes.md", b"id,abstract\n", "csv"),
        ("", b'  \n[{"abstract": 1}]', "json"),
        ("", b"\xef\xbb\xbf[", "json"),
        ("", b'{"abstract": "x"}', "jsonl"),
        ("", b"id,title,Summary\n", "csv"),
        ("", b'"id"\t"abstract"\n', "csv"),
        ("", b"abstract\n", "text"),
        ("", b"[Re] A reproduction study", "text"),
        ("papers", b"ICML 2025 Papers\n\n", "text"),
        ("", b"", "text"),
    ],
)
def test_detect_format(name: str, head: bytes, expected: str) -> None:
    assert detect_format(name, head) == expected


def test_format_override(tmp_path: Path) -> None:
    path = tmp_path / "papers.txt"
    path.write_text('{"abstract": "one"}\n{"abstract": "two"}\n', encoding="utf-8")
    assert [p.abstract for p in read_papers(path, format="jsonl")] == ["one", "two"]
    # Read as text (the extension says so), the same lines are one paragraph.
    assert [p.abstract for p in read_papers(path)] == ['{"abstract": "one"}\n{"abstract": "two"}']


def test_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "papers.txt"
    path.write_text("An abstract.\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"unknown format 'xml'; choose one of text, jsonl, json, csv, parquet"
    ):
        iter_records(path, format="xml")
    assert FORMATS == ("text", "jsonl", "json", "csv", "parquet", "bibtex", "ris", "csl-json")


# --- file-level problems -------------------------------------------------------------------------


def test_missing_file_raises_at_once(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"
    with pytest.raises(InputError) as caught:
        iter_records(path)
    assert str(caught.value) == f"{path}: no such file"
    assert caught.value.source == str(path)
    with pytest.raises(InputError, match="no such file"):
        read_papers(tmp_path / "missing-dir" / "papers.csv")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_papers(tmp_path)
    assert str(caught.value) == f"{tmp_path}: is a directory, not a file of papers"


def test_utf16_file(tmp_path: Path) -> None:
    path = tmp_path / "excel.tsv"
    path.write_bytes("id\tabstract\n1\tAn abstract.\n".encode("utf-16"))
    with pytest.raises(InputError) as caught:
        list(iter_records(path))
    assert str(caught.value) == f"{path}: the file is UTF-16; save it as UTF-8"


def test_unreadable_file(tmp_path: Path) -> None:
    """A file the user may not read is an InputError that says so. Root may read any file, so as
    root (CI) the check runs as the user nobody (setpriv), the file root's own."""
    path = tmp_path / "secret.jsonl"
    path.write_text('{"abstract": "x"}\n', encoding="utf-8")
    path.chmod(0)
    if os.geteuid() != 0:
        with pytest.raises(InputError) as caught:
            iter_records(path)
        assert str(caught.value) == f"{path}: permission denied: the file is not readable"
        return
    import shutil
    import subprocess
    import sys

    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) runs the check as another user"
    tmp_path.chmod(0o755)
    script = (
        "import sys\nfrom tagger.errors import InputError\nfrom tagger.io.readers import "
        "iter_records\ntry:\n    iter_records(sys.argv[1])\nexcept InputError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [
            setpriv,
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            sys.executable,
            "-c",
            script,
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
    )
    assert done.stdout.strip() == f"{path}: permission denied: the file is not readable", (
        done.stderr
    )


@pytest.mark.parametrize("suffix", [".txt", ".jsonl", ".json", ".csv", ".tsv", ""])
def test_empty_file_yields_nothing(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"empty{suffix}"
    path.write_bytes(b"\xef\xbb\xbf\n  \r\n")
    assert list(iter_records(path)) == []
    assert list(iter_records("-", stdin=stdin_of(b""))) == []


def test_dev_zero_is_refused_without_filling_the_memory():
    result = run("tag", "/dev/zero", *MINI)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-2:] == [
        "Warning: skipped /dev/zero: line 1 is longer than 64 MB: this is not a file of papers "
        "(or its lines have no ends)",
        "tagged 0 papers, 1 rejected",
    ]


def test_a_gzip_file_is_read_whatever_its_name(tmp_path):
    path = tmp_path / "papers.bin"
    path.write_bytes(gzip.compress(papers(tmp_path / "p.jsonl").read_bytes()))
    result = run("tag", path, "--input-format", "jsonl", *MINI)
    assert result.exit_code == 0 and result.stdout.count("\n") == 3


# --- stable ids and order ------------------------------------------------------------------------


def test_stable_ids(tmp_path: Path) -> None:
    body = "\n\nFirst abstract.\n\nSecond abstract.\n"
    icml, iclr = tmp_path / "icml.txt", tmp_path / "iclr.txt"
    icml.write_text("ICML 2025 Papers" + body, encoding="utf-8")
    iclr.write_text("ICLR 2025 Papers" + body, encoding="utf-8")
    once = [p.id for p in read_papers(icml)]
    assert once == [p.id for p in read_papers(icml)]
    assert once == [stable_id("ICML", "First abstract."), stable_id("ICML", "Second abstract.")]
    assert len(set(once)) == 2
    assert set(once).isdisjoint(p.id for p in read_papers(iclr))


def test_input_order_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    ids = [f"p{n:04d}" for n in range(2000, 0, -1)]
    lines = (json.dumps({"id": i, "abstract": f"Abstract {i}."}) + "\n" for i in ids)
    path.write_text("".join(lines), encoding="utf-8")
    assert [p.id for p in read_papers(path)] == ids


def test_jsonl_streams_record_by_record() -> None:
    """The first paper comes out before the stream is read to the end."""

    class Lines(io.BytesIO):
        lines_read = 0

        def __next__(self) -> bytes:
            Lines.lines_read += 1
            return super().__next__()

    stream = Lines(b"".join(b'{"abstract": "n%d"}\n' % n for n in range(1000)))
    records = iter_records("-", stdin=stream)
    assert next(records).abstract == "n0"
    assert Lines.lines_read < 10


# --- one file per fault, through `tagger tag` (tests/data/faults) --------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_record_is_tagged_or_rejected_with_its_line(name, tmp_path):
    expected = EXPECTED[name]
    errors = tmp_path / "errors.jsonl"
    result = CliRunner().invoke(
        main,
        ["tag", str(FAULTS / name), "--errors", str(errors), "--taxonomy", str(MINI_TAXONOMY)],
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
        assert error.startswith(f"Error: {FAULTS / name}") and expected["error"] in error
        return
    rejected = [json.loads(line) for line in errors.read_text().splitlines()]
    where = [(r["line"] if r["line"] is not None else r["record"]) for r in rejected]
    assert where == [n for n, _ in expected["rejected"]]
    for record, (_, reason) in zip(rejected, expected["rejected"], strict=True):
        assert record["reason"].startswith(reason), record
        assert record["source"] == str(FAULTS / name)
    summary = result.stderr.strip().splitlines()[-1]
    papers = "paper" if expected["tagged"] == 1 else "papers"
    assert summary.startswith(f"tagged {expected['tagged']} {papers}")
    if expected.get("stderr"):
        assert expected["stderr"].replace("/FAULTS", str(FAULTS)) in result.stderr


# --- properties ----------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=300), fmt=st.sampled_from(["text", "jsonl", "csv", None]))
def test_line_formats_never_raise_on_any_bytes(data: bytes, fmt: str | None) -> None:
    try:
        records = list(iter_records("-", stdin=stdin_of(data), format=fmt))
    except InputError:  # file-level: a CSV header without an abstract column, a JSON document
        return
    assert all(isinstance(record, (Paper, InputError)) for record in records)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1).filter(str.strip), max_size=8))
def test_jsonl_round_trip(abstracts: list[str]) -> None:
    data = "".join(json.dumps({"abstract": text}) + "\n" for text in abstracts).encode()
    assert [p.abstract for p in read_papers("-", stdin=stdin_of(data))] == abstracts


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1).filter(
            lambda text: text.strip() and not text.startswith(" ")
        ),
        max_size=8,
    )
)
def test_csv_round_trip(tmp_path_factory: pytest.TempPathFactory, abstracts: list[str]) -> None:
    path = tmp_path_factory.mktemp("csv") / "papers.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "abstract"])
        writer.writerows([str(n), text] for n, text in enumerate(abstracts))
    # Unquoted leading spaces are skipped (skipinitialspace), hence no abstract starts with one.
    # Line ends are universal: CRLF and a lone CR read as LF, in a quoted field too.
    expected = [text.replace("\r\n", "\n").replace("\r", "\n") for text in abstracts]
    assert [p.abstract for p in read_papers(path)] == expected
