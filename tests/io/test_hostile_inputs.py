"""Hostile inputs, third pass (issue 24): outputs inside a part directory that is read, part
directories that are not a whole run's output, Parquet files that lie (null or mistyped
records, values JSON cannot keep, decompression bombs, corrupt pages), tagged lines whose spans
run past their text, and judged files that judge nothing or are malformed. Each case ends in its
own outcome and one `Error:` line at most, never a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest

from ..conftest import (
    ABSTRACTS,
    MINI,
    MINI_TAXONOMY,
    HashEmbedder,
    run,
    tagged_record,
    write_tagged,
)


def error_line(result, code=1):
    """The one line a failed command prints: its last, starting 'Error: '."""
    assert result.exit_code == code, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: ") and result.stderr.count("Error: ") == 1, result.stderr
    return last


def papers(path, count=12):
    path.write_text(
        "".join(
            json.dumps({"id": f"p{i}", "abstract": f"{ABSTRACTS[i % 3]} Case {i}."}) + "\n"
            for i in range(count)
        )
    )
    return path


# --- a part directory, as `tagger tag --cluster` writes it -------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A part directory of 12 papers in 4 parts, written by tag_on_cluster on a Dask cluster in
    this process (HashEmbedder, as the fast lane tags), and the local output of the same run."""
    from dask.distributed import Client, LocalCluster

    import tagger.language.embedders as embedders
    import tagger.language.model_files as model_files
    from tagger import Tagger, tag_files
    from tagger.runs.cluster import tag_on_cluster

    root = tmp_path_factory.mktemp("parts")
    source = papers(root / "p.jsonl")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedders, "make_embedder", lambda *a, **k: HashEmbedder())
        patch.setattr(model_files, "onnx_model_dir", lambda: root / "no-export")
        tagger = Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder())
        tag_files(tagger, [source], root / "local.jsonl")
        with (
            LocalCluster(
                processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            tag_on_cluster(
                tagger, [str(source)], root / "out", size=4, client=client, warn=print, note=print
            )
    return root / "out", (root / "local.jsonl").read_bytes()


@pytest.fixture
def parts(written, tmp_path):
    """A copy of the part directory to spoil."""
    directory = tmp_path / "out"
    shutil.copytree(written[0], directory)
    return directory


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


# --- 1. no output inside an input directory ----------------------------------------------------


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


# --- 3. a part directory is read as its manifest says ------------------------------------------


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


# --- 4, 13, 15. tagged Parquet whose records are null, mistyped or corrupt ----------------------


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


# --- 8. a Parquet decompression bomb -----------------------------------------------------------


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


# --- 5. extra fields through Parquet kept exactly, or the record rejected -----------------------


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


# --- 6. tagged lines whose spans run past the text ---------------------------------------------


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


# --- 7, 14. judged files that judge nothing, or are malformed ----------------------------------


def _judged_file(path, judged_fields):
    path.write_text(
        "".join(
            json.dumps({"id": paper_id, "abstract": "x", **({"judged": j} if j else {})}) + "\n"
            for paper_id, j in judged_fields
        )
    )
    return path


@pytest.fixture
def judged_tagged(tmp_path):
    """Tagged papers that carry judgments of their own (what --judged must not fall back to)."""
    records = []
    for paper_id in ("a", "b"):
        record = tagged_record(paper_id, [["rl"]])
        record.paper.__pydantic_extra__["judged"] = {"areas": ["rl"], "main": ["rl"]}
        records.append(record)
    return write_tagged(tmp_path / "t.jsonl", records)


def test_eval_against_a_file_of_no_judgments_is_refused(tmp_path, judged_tagged):
    judged = _judged_file(tmp_path / "j.jsonl", [("a", None), ("b", None)])
    line = error_line(run("eval", judged_tagged, "--judged", judged, *MINI))
    assert line == (
        f"Error: {judged}: holds no judgments: no paper has a 'judged' field (judged/README.md "
        "says how one is written)"
    )


def test_eval_with_no_judged_paper_matched_is_refused(tmp_path, judged_tagged):
    judged = _judged_file(tmp_path / "j.jsonl", [("x", {"areas": ["rl"], "main": ["rl"]})])
    line = error_line(run("eval", judged_tagged, "--judged", judged, *MINI))
    assert line == (
        f"Error: {judged_tagged}: nothing to measure: none of its 2 papers has a judgment in "
        f"{judged} (1 papers judged, matched by id): are they the same papers?"
    )


def test_eval_says_how_many_papers_were_matched(tmp_path, judged_tagged):
    judged = _judged_file(
        tmp_path / "j.jsonl",
        [("a", {"areas": ["graphs"], "main": ["graphs"]}), ("z", {"areas": ["rl"]})],
    )
    result = run("eval", judged_tagged, "--judged", judged, "--json", *MINI)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        f"Note: 1 of the 2 papers of {judged_tagged} have a judgment in {judged} (2 papers "
        "judged, matched by id)\n"
    )
    data = json.loads(result.stdout)
    assert (data["papers"], data["wrong"]) == (1, 1)  # judged by j.jsonl, not by its own field


def test_eval_judged_of_a_file_without_judgments_is_refused(tmp_path):
    tagged = write_tagged(tmp_path / "t.jsonl", [tagged_record("a", [["rl"]])])
    line = error_line(run("eval", "--judged", tagged, *MINI))
    assert line == (
        f"Error: {tagged}: nothing to measure: none of its 1 paper is judged (has a 'judged' field)"
    )


@pytest.mark.parametrize(
    ("judgment", "reason"),
    [
        (
            {"areas": ["rl"], "keyphrases": ["graph neural network"]},
            "'judged.keyphrases': must be an object",
        ),
        ({"areas": [{"id": "rl"}]}, "'judged.areas.0': must be a string"),
        ({"areas": "rl", "main": "rl"}, "'judged.areas': must be a list"),
        (
            {"keyphrases": {"graphs": "good"}},
            "'judged.keyphrases.graphs': input should be "
            "'accept', 'fragment', 'generic', 'vague', 'passing' or 'noise'",
        ),
        ("rl", "'judged': must be an object"),
    ],
    ids=["keyphrases-list", "areas-objects", "areas-string", "label-unknown", "judged-string"],
)
def test_a_malformed_judgment_is_one_error(tmp_path, judged_tagged, judgment, reason):
    judged = _judged_file(tmp_path / "j.jsonl", [("a", judgment)])
    for args in (["eval", judged_tagged, "--judged", judged], ["eval", "--judged", judged]):
        line = error_line(run(*args, *MINI))
        assert line == f"Error: {judged}: paper 'a': {reason} (judged/README.md gives the format)"
