"""`tagger tag LIB --output-format bibtex|ris|csl-json` and `tagger filter ... --output-format
bibtex`, as a user runs them: a library tagged and written back with only its tag field
changed, the same file on a second run, entries that are no paper reported and kept, clear
mistakes refused with a message, and a filtered .bib that bibtexparser and Debian's `bibtex`
read."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tagger.io import bibtex

from .conftest import DATA, MINI, run
from .io.test_libraries import parsed

LIBRARY = """% my reading list
@string{jmlr = "Journal of Machine Learning Research"}

@article{marl2021,
  title = {Multi-agent {RL} with graphs},
  journal = jmlr,
  year = {2021},
  abstract = {Multi-agent reinforcement learning (MARL) with graph neural networks.},
  keywords = {mine, tagger:stale}
}

@misc{noabstract, title = {A talk}}

@inproceedings{gnn2020,
  title = {Message passing for molecules},
  booktitle = {ICML},
  year = 2020,
  abstract = {Graph neural networks (GNNs) with message passing for molecules.},
}

@Comment{jabref-meta: grouping:
0 AllEntriesGroup:;
}
"""


def entries_without_tags(text: str) -> list[str]:
    return [bibtex.with_tags(b.text, [], "tagger:") for b in bibtex.blocks(text) if b.is_entry]


def test_a_library_is_tagged_and_written_back_with_only_its_keywords_changed(tmp_path):
    library = tmp_path / "refs.bib"
    library.write_text(LIBRARY, encoding="utf-8")
    out = tmp_path / "refs.tagged.bib"
    result = run("tag", library, "-o", out, "--errors", tmp_path / "errors.jsonl", *MINI)
    assert result.exit_code == 1  # a record was rejected, as for any input
    assert f"Warning: skipped {library} line 12: entry 'noabstract' has no abstract" in (
        result.stderr
    )
    assert result.stderr.splitlines()[-1] == (
        f"tagged 2 papers to {out}, 1 rejected: see {tmp_path / 'errors.jsonl'}"
    )
    reported = [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()]
    assert [(r["line"], r["id"]) for r in reported] == [(12, "noabstract")]
    jsonl = tmp_path / "refs.jsonl"
    run("tag", library, "-o", jsonl, *MINI)
    tags = [
        ", ".join(f"tagger:{tag['id']}" for tag in json.loads(line)["tags"])
        for line in jsonl.read_text().splitlines()
    ]
    assert all(tags)
    written = out.read_text(encoding="utf-8")
    changed = [line for line in written.splitlines() if line not in LIBRARY.splitlines()]
    assert changed == [  # the user's keyword kept, tagger's stale one replaced; one field added
        f"  keywords = {{mine, {tags[0]}}}",
        f"  keywords = {{{tags[1]}}},",
    ]
    assert entries_without_tags(written) == entries_without_tags(LIBRARY)
    again = tmp_path / "again.bib"
    assert run("tag", out, "-o", again, *MINI).exit_code == 1
    assert again.read_bytes() == out.read_bytes()  # a second run: the same file


def test_a_library_on_stdin_is_written_back_to_stdout(tmp_path):
    args = ["tag", "-", "--output-format", "bibtex", *MINI]
    result = run(*args, input=LIBRARY.encode())
    assert result.stdout.count("tagger:") == 3
    assert entries_without_tags(result.stdout) == entries_without_tags(LIBRARY)


@pytest.mark.parametrize(
    ("make", "args", "expected"),
    [
        (
            lambda p: p.write_text('{"id": "a", "abstract": "Graphs."}\n'),
            ["--output-format", "bibtex"],
            "Error: {lib} holds jsonl papers, not a bibtex library: --output-format bibtex "
            "writes bibtex libraries back with their tags. Tag it to JSONL, and write the "
            "papers as bibtex entries with `tagger filter TAGGED --output-format bibtex`",
        ),
        (
            lambda p: p.write_text(LIBRARY),
            ["--output-format", "ris"],
            "Error: {lib} holds a bibtex library, not a ris library: --output-format ris writes "
            "ris libraries back with their tags. Tag it to JSONL, and write the papers as ris "
            "entries with `tagger filter TAGGED --output-format ris`",
        ),
        (
            lambda p: p.write_text(LIBRARY),
            ["-o", "{lib}"],
            "Error: the output {lib} is the input {lib}: writing it would destroy what is read "
            "or written there; choose another file",
        ),
    ],
)
def test_a_library_output_that_cannot_be_is_refused(tmp_path, make, args, expected):
    lib = tmp_path / ("lib.jsonl" if "jsonl" in expected else "lib.bib")
    make(lib)
    result = run("tag", lib, *[a.format(lib=lib) for a in args], *MINI)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == expected.format(lib=lib)
    assert result.stdout == ""


def test_resume_is_refused_for_a_library(tmp_path):
    lib = tmp_path / "lib.bib"
    lib.write_text(LIBRARY)
    result = run("tag", lib, "-o", tmp_path / "out.bib", "--resume", *MINI)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: --resume continues JSONL output; a bibtex library is written whole at the end: "
        "run it again"
    )


@pytest.mark.parametrize("args", [["-o", "out.bib"], ["-o", "parts", "--output-format", "ris"]])
def test_a_cluster_run_refuses_a_library_output_by_name_or_by_format(tmp_path, args):
    lib = tmp_path / "lib.bib"
    lib.write_text(LIBRARY)
    out = [str(tmp_path / a) if a in ("out.bib", "parts") else a for a in args]
    result = run("tag", lib, *out, "--cluster", "local", *MINI)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: --cluster writes part files (--part-format); write a library back with a local "
        "run, or with `tagger filter` from the parts"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.bib"]


def test_a_library_written_into_the_directory_it_is_read_from_is_refused(tmp_path):
    folder = tmp_path / "refs"
    folder.mkdir()
    (folder / "lib.bib").write_text(LIBRARY)
    result = run("tag", folder, "-o", folder / "tagged.bib", *MINI)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: the output {folder / 'tagged.bib'} lies inside the input directory {folder}: "
        "writing there would change what is read; choose a file outside it"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["lib.bib"]


def test_names_a_librarys_encoding_cannot_hold_are_refused_before_any_tagging(
    tmp_path, monkeypatch
):
    import tagger.runs.local

    taxonomy = tmp_path / "t.yaml"
    mini = (DATA / "mini-taxonomy.yaml").read_text(encoding="utf-8")
    taxonomy.write_text(mini.replace("name: Graphs\n", "name: Graphs \u2603\n"), encoding="utf-8")
    lib = tmp_path / "latin.bib"
    lib.write_bytes(b"@article{m, title={Gr\xfcn}, abstract={Graph neural networks.}}\n")

    def read_for_tagging(*args, **kwargs):
        raise AssertionError("the papers were read for tagging")

    monkeypatch.setattr(tagger.runs.local, "read_inputs", read_for_tagging)
    result = run(
        "tag", lib, "-o", tmp_path / "out.bib", "--tag-labels", "names", "--taxonomy", taxonomy
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: {lib} is Windows-1252, which has no '\u2603' for a tag written into it: write "
        "tags by id (--tag-labels ids), or save the library as UTF-8; nothing is written"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latin.bib", "t.yaml"]


def tagged_library(tmp_path):
    """LIBRARY tagged to JSONL, and a paper from a JSON Lines file after it."""
    lib, other = tmp_path / "refs.bib", tmp_path / "more.jsonl"
    lib.write_text(LIBRARY, encoding="utf-8")
    other.write_text(
        '{"id": "x y,1", "title": "Policy {gradients}", "abstract": "Policy gradient methods '
        'for reinforcement learning in robotics.", "year": 2022}\n'
    )
    tagged = tmp_path / "tagged.jsonl"
    run("tag", lib, other, "-o", tagged, *MINI)
    return tagged


def test_tagged_output_keeps_what_writing_back_needs(tmp_path):
    tagged = tagged_library(tmp_path)
    first = json.loads(tagged.read_text().splitlines()[0])["paper"]
    assert first["library"]["key"] == "marl2021"
    assert first["library"]["entry"] in LIBRARY
    assert first["library"]["uses"] == ['@string{jmlr = "Journal of Machine Learning Research"}']


@pytest.mark.skipif(shutil.which("bibtex") is None, reason="Debian's bibtex is not installed")
def test_filter_writes_a_bib_that_bibtex_and_bibtexparser_read(tmp_path):
    import bibtexparser

    tagged = tagged_library(tmp_path)
    result = run("filter", tagged, "--area", "rl", "--output-format", "bibtex", *MINI)
    assert result.exit_code == 0
    selected = result.stdout
    assert selected.startswith('@string{jmlr = "Journal of Machine Learning Research"}\n\n')
    assert "@article{marl2021," in selected  # as in the library, keywords rewritten
    assert "  keywords = {mine, tagger:" in selected
    assert "@misc{x_y_1,\n  title = {Policy {gradients}},\n" in selected  # from JSONL: minimal
    parsed = bibtexparser.parse_string(selected)
    assert parsed.failed_blocks == []
    keys = [entry.key for entry in parsed.entries]
    assert keys == ["marl2021", "x_y_1"]
    (tmp_path / "rl.bib").write_text(selected, encoding="utf-8")
    (tmp_path / "doc.aux").write_text("\\relax\n\\citation{*}\n\\bibstyle{plain}\n\\bibdata{rl}\n")
    done = subprocess.run(
        ["bibtex", "doc"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout
    assert "error message" not in done.stdout
    bbl = (tmp_path / "doc.bbl").read_text()
    assert all(f"\\bibitem{{{key}}}" in bbl for key in keys)


def test_filter_says_which_paper_has_a_library_field_it_cannot_write(tmp_path):
    tagged = tagged_library(tmp_path)
    lines = tagged.read_text().splitlines()
    first = json.loads(lines[0])
    first["paper"]["library"]["uses"] = [1, 2]  # a hand edit
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    result = run("filter", edited, "--output-format", "bibtex", *MINI)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "Error: paper 'marl2021': its 'library' field cannot be written back (its fields are "
        "not those tagger writes): was it edited? Tag the library again"
    )


def test_filter_writes_one_encoding_whatever_the_libraries(tmp_path):
    latin = tmp_path / "latin.bib"
    latin.write_bytes(
        "@article{m, title={Graphen f\xfcr Molek\xfcle}, abstract={Graph neural networks "
        "(GNNs) with message passing for molecules.}}\n".encode("latin-1")
    )
    tagged = tmp_path / "latin.jsonl"
    run("tag", latin, "-o", tagged, *MINI)
    out = run("filter", tagged, "--output-format", "bibtex", *MINI).stdout_bytes
    assert "Graphen für Moleküle".encode() in out


def test_filter_writes_ris_and_csl_json(tmp_path):
    tagged = tagged_library(tmp_path)
    result = run("filter", tagged, "--output-format", "csl-json", "--tag-labels", "names", *MINI)
    items = json.loads(result.stdout)
    assert [item["id"] for item in items] == ["marl2021", "gnn2020", "x_y_1"]
    assert items[2]["keyword"].startswith("tagger:")
    result = run("filter", tagged, "--output-format", "ris", *MINI)
    assert result.stdout.count("TY  - GEN\n") == 3
    assert result.stdout.count("ER  - \n") == 3


@pytest.mark.models
def test_a_real_zotero_library_is_tagged_with_the_default_model_and_round_trips(tmp_path):
    """The first 200 blocks of the real Zotero export (its whole is round-tripped without the
    model in tests/io/test_libraries.py): tagged, written back, tagged again."""
    import bibtexparser

    blocks = bibtex.blocks((DATA / "libraries" / "zotero.bib").read_text(encoding="utf-8"))
    library = tmp_path / "zotero.bib"
    library.write_text("".join(block.text for block in blocks[:200]), encoding="utf-8")
    entries = sum(block.is_entry for block in blocks[:200])
    read = bibtexparser.parse_file(str(library))
    papers = sum(
        bool(e.fields_dict.get("abstract", "") and e["abstract"].strip()) for e in read.entries
    )
    out, again = tmp_path / "tagged.bib", tmp_path / "again.bib"
    result = run("tag", library, "-o", out)
    assert (
        result.stderr.splitlines()[-1]
        == f"tagged {papers} papers to {out}, {entries - papers} rejected"
    )
    before = library.read_text(encoding="utf-8")
    after = out.read_text(encoding="utf-8")
    assert entries_without_tags(after) == entries_without_tags(before)  # entries in, entries out
    read_by_bibtexparser = parsed(out.read_bytes(), "bibtex", tags=None)
    assert read_by_bibtexparser == parsed(library.read_bytes(), "bibtex", tags=None)
    assert len(entries_without_tags(after)) == entries > 80
    assert after.count("tagger:") > papers  # most papers get more than one area
    run("tag", out, "-o", again)
    assert again.read_bytes() == out.read_bytes()
