"""Parquet files read (io.parquet), papers or tagged output, whatever they hold: a null, empty
or mistyped 'record' is said with its row or refused in one line; a corrupt page is blamed
on the file, the rows before it read; a decompression bomb is refused from its metadata,
or row by row, before it is decompressed; rows are read a few at a time; a field JSON
cannot keep exactly rejects its record."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from ..conftest import ABSTRACTS, MINI, error_line, run, tagged_record


def _tagged_parquet(path, records):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [str(i) for i in range(len(records))], "record": records}), path)
    return path


def _lines(count):
    from tagger.io.jsonl import dumps

    return [dumps(tagged_record(f"p{i}", [["rl"]])).decode().rstrip("\n") for i in range(count)]


def test_a_null_record_in_tagged_parquet_is_said_with_its_row(tmp_path):
    lines = _lines(4)
    path = _tagged_parquet(tmp_path / "t.parquet", [lines[0], None, lines[2], ""])
    result = run("stats", path, "--json", *MINI)
    assert result.exit_code == 1 and json.loads(result.stdout)["papers"] == 2
    assert result.stderr.splitlines() == [
        f"Warning: skipped {path} record 2: its 'record' is null: no tagged line there (was the "
        "column written by another program?)",
        f"Warning: skipped {path} record 4: its 'record' is empty: no tagged line there (was "
        "the column written by another program?)",
        "2 lines skipped",
    ]


def test_a_tagged_parquet_of_null_records_is_an_error(tmp_path):
    import pyarrow as pa

    path = _tagged_parquet(tmp_path / "t.parquet", pa.array([None] * 5, type=pa.string()))
    assert error_line(run("stats", path, *MINI)) == (
        f"Error: {path} record 1: its 'record' is null: no tagged line there (was the column "
        "written by another program?)"
    )


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([1, 2], "int64"),
        ([b"x", b"y"], "binary"),
        ([["a"], ["b"]], "list<element: string>"),
        ([{"a": 1}, {"a": 2}], "struct<a: int64>"),
    ],
    ids=["int", "binary", "list", "struct"],
)
def test_a_record_column_of_another_type_is_one_error(tmp_path, values, kind):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"record": pa.array(values)}), path)
    for command in ("stats", "filter"):
        assert error_line(run(command, path, *MINI)) == (
            f"Error: {path}: its 'record' column holds {kind}, not text: not tagged output "
            "(tagger writes each tagged line there as a string; run `tagger tag`)"
        )


def _corrupt(path):
    """Spoil a Parquet file's data pages, its header and footer intact."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    return path


def test_a_corrupt_parquet_input_is_blamed_on_the_input(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = tmp_path / "papers.parquet"
    abstracts = [f"{ABSTRACTS[i % 3]} {'word ' * (i % 97)} {i}" for i in range(3000)]
    pq.write_table(pa.table({"abstract": abstracts}), source, compression="zstd")
    result = run("tag", _corrupt(source), "-o", tmp_path / "o.jsonl", *MINI)
    assert result.exit_code == 1, result.stderr
    skipped = [line for line in result.stderr.splitlines() if line.startswith("Warning: ")]
    assert len(skipped) == 1 and skipped[0].startswith(f"Warning: skipped {source}: cannot read ")
    assert "output" not in skipped[0]
    tagged = len((tmp_path / "o.jsonl").read_text().splitlines())
    assert tagged < 3000  # the rows before the corrupt page are tagged
    assert result.stderr.splitlines()[-1] == (
        f"tagged {tagged:,} papers to {tmp_path / 'o.jsonl'}, 1 rejected"
    )


def test_a_corrupt_tagged_parquet_is_blamed_on_it(tmp_path):
    from tagger.io.jsonl import dumps

    lines = [
        dumps(tagged_record(f"p{i}", [["rl"]], abstract=f"{ABSTRACTS[i % 3]} {i} " * 5))
        .decode()
        .rstrip("\n")
        for i in range(2000)
    ]
    path = _corrupt(_tagged_parquet(tmp_path / "t.parquet", lines))
    result = run("stats", path, *MINI)
    assert result.exit_code == 1, result.stderr
    # the damage is said, of the file or of each row it reaches (where the bytes were spoilt
    # decides which: a page that no longer decompresses, or text that is no longer UTF-8)
    said = [line for line in result.stderr.splitlines() if str(path) in line]
    assert said and all("cannot read it: " in line for line in said), result.stderr
    rows = [line for line in said if line.startswith("Warning: skipped")]
    assert not rows or all("not UTF-8 text" in line and " record " in line for line in rows)


# --- a decompression bomb ------------------------------------------------------------------------


def _bomb(path, rows=12, megabytes=8, same=False, column="abstract"):
    """``rows`` abstracts of ``megabytes`` MB each, in one row group: a few KB on disk. Distinct
    values are written plainly (the metadata says how large they are); one value repeated is
    written once, as a dictionary (the metadata says 8 MB for all)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = "bomb " * (megabytes * 2**20 // 5)
    values = [text] * rows if same else [f"{i:02d}{text}" for i in range(rows)]
    pq.write_table(pa.table({column: values}), path, compression="zstd")
    return path


@pytest.fixture
def no_reading(monkeypatch):
    """Reading any row of a Parquet file fails the test."""
    import pyarrow.parquet as pq

    def refuse(*args, **kwargs):
        raise AssertionError("the bomb was read")

    for method in ("read_row_group", "iter_batches", "read", "read_row_groups"):
        monkeypatch.setattr(pq.ParquetFile, method, refuse)


def test_a_decompression_bomb_is_refused_from_its_metadata(tmp_path, no_reading):
    """A 10 KB file of twelve 8 MB abstracts (96 MB decompressed): refused in one line from its
    metadata (the limit is 4 MB a row here, 64 MB as shipped), before anything is decompressed
    or the output opened."""
    import tagger.io.parquet

    papers, tagged = _bomb(tmp_path / "p.parquet"), _bomb(tmp_path / "t.parquet", column="record")
    assert papers.stat().st_size < 16 * 1024
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tagger.io.parquet, "MAX_ROW_BYTES", 4 * 2**20)
        for bomb, command in [(papers, ["tag", "-o", tmp_path / "o.jsonl"]), (tagged, ["stats"])]:
            assert error_line(run(command[0], bomb, *command[1:], *MINI)) == (
                f"Error: {bomb}: row group 1 holds 12 rows that take 96 MB once decompressed "
                "(8 MB a row); a row may take at most 4 MB, as a line of JSON Lines may: this "
                "file is not read (is it a decompression bomb?)"
            )
    assert not (tmp_path / "o.jsonl").exists()


def test_a_dictionary_bomb_is_rejected_row_by_row_without_decoding_it(tmp_path, monkeypatch):
    """One 8 MB value in twelve rows: the metadata says 8 MB, the rows hold 96 MB. Each row is
    rejected for its size before it becomes a Python string (it never reaches the Paper, which
    would reject its length)."""
    import tagger.io.parquet

    monkeypatch.setattr(tagger.io.parquet, "MAX_ROW_BYTES", 4 * 2**20)
    bomb = _bomb(tmp_path / "bomb.parquet", same=True)
    errors = tmp_path / "e.jsonl"
    result = run("tag", bomb, "--errors", errors, *MINI)
    assert result.exit_code == 1 and result.stdout == ""
    reasons = [json.loads(line) for line in errors.read_text().splitlines()]
    assert [r["record"] for r in reasons] == list(range(1, 13))
    assert {r["reason"] for r in reasons} == {
        "the row holds 8 MB of text; a row may hold at most 4 MB, as a line of JSON Lines may "
        "(a decompression bomb?)"
    }


def test_big_rows_are_read_a_few_at_a_time(tmp_path, monkeypatch):
    """Rows under the limit are read in batches of about PARQUET_BATCH_BYTES (64 MB: eight of
    these 8 MB rows), never a whole row group at once."""
    import pyarrow.parquet as pq

    from tagger.io.readers import iter_records

    sizes = []
    real = pq.ParquetFile.iter_batches

    def spy(self, batch_size=65536, **kwargs):
        sizes.append(batch_size)
        return real(self, batch_size=batch_size, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    records = list(iter_records(_bomb(tmp_path / "big.parquet")))
    assert sizes == [7]  # 64 MB over 8 MB and a little: a few bytes of metadata each
    assert [str(r).split(": ")[0] for r in records] == [
        f"{tmp_path / 'big.parquet'} record {n}" for n in range(1, 13)
    ]
    assert all("the abstract is 8,388,607 characters long" in str(r) for r in records)


# --- fields kept exactly, or the record rejected -------------------------------------------------


def test_parquet_fields_are_kept_exactly_or_the_record_rejected(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    abstract = ABSTRACTS[0]
    columns = {
        "id": pa.array(["kept", "nan", "inf", "map-int", "map-twice", "binary"]),
        "abstract": pa.array([abstract] * 6),
        "score": pa.array([0.5, float("nan"), float("inf"), 1.0, 1.0, 1.0]),
        "price": pa.array([Decimal("1.10")] * 6, type=pa.decimal128(5, 2)),
        "meta": pa.array(
            [[("a", 1)], [("a", 1)], [("a", 1)], [("a", 1)], [("a", 1), ("a", 2)], [("a", 1)]],
            type=pa.map_(pa.string(), pa.int64()),
        ),
        "ranks": pa.array(  # an int-keyed map, in one row only
            [None, None, None, [(1, "y")], None, None], type=pa.map_(pa.int64(), pa.string())
        ),
        "raw": pa.array([b"ok", b"ok", b"ok", b"ok", b"ok", b"\xff"], type=pa.binary()),
    }
    table = pa.table(columns)
    source = tmp_path / "papers.parquet"
    pq.write_table(table, source)
    errors = tmp_path / "errors.jsonl"
    result = run("tag", source, "--errors", errors, *MINI)
    assert result.exit_code == 1
    [line] = result.stdout.splitlines()
    paper = json.loads(line)["paper"]
    assert (paper["id"], paper["score"], paper["price"], paper["meta"], paper["raw"]) == (
        "kept",
        0.5,
        "1.10",
        {"a": 1},
        "ok",
    )
    reasons = {r["record"]: r["reason"] for r in map(json.loads, errors.read_text().splitlines())}
    assert reasons == {
        2: "field 'score' holds NaN or an infinity, which JSON has no number for; tagger keeps "
        "fields it does not know, and cannot keep this one",
        3: "field 'score' holds NaN or an infinity, which JSON has no number for; tagger keeps "
        "fields it does not know, and cannot keep this one",
        4: "field 'ranks' is a map with int keys, and JSON keys are text: convert the keys to "
        "strings",
        5: "a map gives the key 'a' twice; JSON keeps one value a key",
        6: "field 'raw' holds binary data that is not UTF-8 text (byte 0xFF), which JSON cannot "
        "hold: drop the column or encode it",
    }
