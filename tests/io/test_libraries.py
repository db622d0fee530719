"""Reference managers' libraries (io.libraries, io.bibtex, io.ris, io.csljson): told by name
and content, read entry by entry (every entry that is no paper reported with its line and key),
and written back with nothing changed but the tag field, the same file on a second run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tagger.errors import InputError, InputNotice, TaggerError
from tagger.io import bibtex, csljson, ris
from tagger.io.formats import detect_format, output_format
from tagger.io.libraries import read_blocks, write_back
from tagger.io.readers import iter_records

from ..conftest import DATA

LIBRARIES = DATA / "libraries"
REAL = {  # a real export: its format, entries, papers (entries with an abstract, readable)
    "zotero.bib": ("bibtex", 507, 429),
    "jabref.bib": ("bibtex", 16, 0),
    "scholar.bib": ("bibtex", 78, 0),
    "zotero.ris": ("ris", 5, 5),
    "manubot.csl.json": ("csl-json", 2, 1),
}
TAGS = ["rl", "graph.gnn"]

# A CSL JSON item in the shape of Zotero's export: tab-indented, Zotero's keys.
ZOTERO_CSL = """[
\t{
\t\t"id": "http://zotero.org/users/local/Lf4Kpn8q/items/NXPETHCG",
\t\t"type": "article-journal",
\t\t"title": "Policy gradients for robots",
\t\t"container-title": "Journal of Robot Learning",
\t\t"abstract": "We study policy gradient methods for reinforcement learning in robotics.",
\t\t"author": [
\t\t\t{
\t\t\t\t"family": "Smith",
\t\t\t\t"given": "Jo"
\t\t\t}
\t\t],
\t\t"issued": {
\t\t\t"date-parts": [
\t\t\t\t[
\t\t\t\t\t"2021"
\t\t\t\t]
\t\t\t]
\t\t}
\t},
\t{
\t\t"id": "http://zotero.org/users/local/Lf4Kpn8q/items/ABCDEFGH",
\t\t"type": "book",
\t\t"title": "No abstract here",
\t\t"keyword": "robots, control"
\t}
]
"""


def records(path: Path, **options):
    return list(iter_records(path, notices=True, **options))


def papers_of(path: Path, **options):
    return [r for r in records(path, **options) if not isinstance(r, (InputError, InputNotice))]


def written_back(path: Path, format: str, tags=TAGS, data: bytes | None = None) -> bytes:
    """The library at ``path`` written back with ``tags`` on every paper."""
    data = path.read_bytes() if data is None else data
    read = [p for p in iter_records("-", stdin=[data], format=format) if hasattr(p, "library")]
    return b"".join(write_back([(str(path), data)], format, [(p.library, tags) for p in read]))


# --- which format --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("refs.bib", b"anything", "bibtex"),
        ("refs.bibtex", b"", "bibtex"),
        ("refs.ris", b"", "ris"),
        ("", b"@article{smith2020,\n  title = {T}}", "bibtex"),
        ("", b"% Encoding: UTF-8\n\n@Article{k,", "bibtex"),
        ("", b"\n\n@string(jmlr = {JMLR})", "bibtex"),
        ("", b"TY  - JOUR\nTI  - T\nER  - \n", "ris"),
        ("", ZOTERO_CSL.encode(), "csl-json"),
        ("lib.json", ZOTERO_CSL.encode(), "csl-json"),
        # a plain array of papers with a 'type' and a string author is no CSL
        ("papers.json", b'[{"type": "poster", "author": "Jo", "abstract": "A"}]', "json"),
        ("", b'[{"id": "p1", "abstract": "A"}]', "json"),
        ("refs.txt", b"@article{k, title={T}}", "text"),  # the name decides
        ("", b"An abstract that starts with @ symbols in its text.", "text"),
    ],
)
def test_a_library_is_told_by_its_name_and_then_its_content(name, head, expected):
    assert detect_format(name, head) == expected


@pytest.mark.parametrize(
    ("name", "given", "expected"),
    [
        ("out.bib", None, "bibtex"),
        ("out.BIBTEX", None, "bibtex"),
        ("out.ris", None, "ris"),
        ("out.json", None, "jsonl"),  # a .json output has always been JSON Lines
        ("out.json", "csl-json", "csl-json"),
        (None, None, "jsonl"),
        ("out.parquet", None, "parquet"),
    ],
)
def test_the_output_format_is_given_or_implied_by_the_name(name, given, expected):
    assert output_format(name, given) == expected


# --- reading -------------------------------------------------------------------------------------


def test_a_bibtex_entry_is_read_as_a_paper_with_its_latex_as_text(tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text(
        "% my reading\n"
        '@string{jmlr = "Journal of Machine Learning Research"}\n'
        "@comment{jabref-meta: databaseType:bibtex;}\n"
        '@preamble{"\\newcommand{\\x}{y}"}\n\n'
        "@article{smith2020,\n"
        '  title = {A {\\"o}ffline {Study} of \\emph{RL} and \\textbf{GANs}},\n'
        "  journal = jmlr,\n"
        "  date = {2020-05-01},\n"
        "  abstract = {We bound $\\mathcal{O}(x^{2})$ regret -- in 50\\% of\n    runs.},\n"
        "  keywords = {offline rl; bandits; tagger:old.area}\n"
        "}\n",
        encoding="utf-8",
    )
    (paper,) = papers_of(path)
    assert paper.id == "smith2020"
    assert paper.title == "A öffline Study of RL and GANs"
    assert paper.abstract == "We bound $\\mathcal{O}(x^{2})$ regret – in 50% of runs."
    assert paper.venue == "Journal of Machine Learning Research"  # the @string macro
    assert paper.year == 2020
    assert paper.keywords == ["offline rl", "bandits"]  # tagger's own are no keywords of the user
    assert paper.library["format"] == "bibtex"
    assert paper.library["line"] == 6
    assert paper.library["uses"] == ['@string{jmlr = "Journal of Machine Learning Research"}']
    assert path.read_text().count(paper.library["entry"]) == 1


def test_ris_and_csl_json_entries_are_read_as_papers(tmp_path):
    path = tmp_path / "lib.ris"
    path.write_bytes(
        b"TY  - JOUR\r\nID  - r1\r\nT1  - Graph nets\r\nN2  - Graph neural networks.\r\n"
        b"JF  - J. Graphs\r\nY1  - 2019/01/02\r\nKW  - graphs\r\nKW  - tagger:x\r\nER  - \r\n"
    )
    (paper,) = papers_of(path)
    assert (paper.id, paper.title, paper.abstract) == ("r1", "Graph nets", "Graph neural networks.")
    assert (paper.venue, paper.year, paper.keywords) == ("J. Graphs", 2019, ["graphs"])
    assert paper.library["entry"].endswith("ER  - \r\n")  # the record's bytes, CRLF kept
    csl = tmp_path / "lib.json"
    csl.write_text(ZOTERO_CSL, encoding="utf-8")
    found = records(csl)
    paper = found[0]
    assert paper.id.endswith("/items/NXPETHCG")
    assert (paper.venue, paper.year) == ("Journal of Robot Learning", 2021)
    assert str(found[1]) == (
        f"{csl} line 22: entry 'http://zotero.org/users/local/Lf4Kpn8q/items/ABCDEFGH' has no "
        'abstract: it is not tagged, and written back as it is; add its abstract ("abstract") '
        "to tag it"
    )


NOT_WRITTEN = "it is not tagged, and written back as it is"


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "no-abstract.bib",
            "@misc{k1, title={T}}\n",
            f"line 1: entry 'k1' has no abstract: {NOT_WRITTEN}; add its abstract "
            "(abstract = {...}) to tag it",
        ),
        (
            "unbalanced.bib",
            "@article{ok, abstract={A}}\n@article{bad,\n  title = {Missing,\n  year = 2021\n}\n"
            "@misc{next, abstract={B}}\n",
            "line 2: entry 'bad': it cannot be read (is a brace or a quote unbalanced?): "
            "Unexpected block start: `@misc`. Was still looking for field-value closing `,` or "
            f"`}}`; {NOT_WRITTEN}",
        ),
        (
            "duplicate-key.bib",
            "@misc{k, abstract={A}}\n\n@misc{k, abstract={B}}\n",
            f"line 3: entry 'k': the key 'k' is used before at line 1; {NOT_WRITTEN}",
        ),
        (
            "duplicate-field.bib",
            "@misc{k, abstract={A}, year=2020, year=2021}\n",
            f"line 1: entry 'k': it gives a field twice (year); keep one; {NOT_WRITTEN}",
        ),
        (
            "empty-abstract.bib",
            "@misc{k, abstract={  }}\n",
            f"line 1: entry 'k' has no abstract: {NOT_WRITTEN}; add its abstract "
            "(abstract = {...}) to tag it",
        ),
        (
            "no-end.ris",
            "TY  - JOUR\nAB  - A\n",
            f"line 1: an entry: the record has no 'ER  - ' line ending it; {NOT_WRITTEN}",
        ),
        (
            "no-abstract.ris",
            "TY  - JOUR\nID  - r9\nTI  - T\nER  - \n",
            f"line 1: entry 'r9' has no abstract: {NOT_WRITTEN}; add its abstract (an AB line) "
            "to tag it",
        ),
        (
            "duplicate.ris",
            "TY  - JOUR\nID  - r\nAB  - A\nER  - \n\nTY  - JOUR\nID  - r\nAB  - B\nER  - \n",
            f"line 6: entry 'r': the ID 'r' is used before at line 1; {NOT_WRITTEN}",
        ),
        (
            "tabs.ris",  # a tab where RIS has two spaces: no record starts
            "TY\t- JOUR\nAB\t- A\nER\t- \n",
            "line 1: an entry: lines outside any record (a record runs from a 'TY  - ' line to an "
            "'ER  - ' line, each tag two capitals, two spaces, a hyphen and a space): they are not "
            f"read; {NOT_WRITTEN}",
        ),
        (
            "no-start.ris",
            "TY  - JOUR\nAB  - A\nER  - \nAB  - B\nER  - \n",
            "line 4: an entry: lines outside any record (a record runs from a 'TY  - ' line to an "
            "'ER  - ' line, each tag two capitals, two spaces, a hyphen and a space): they are not "
            f"read; {NOT_WRITTEN}",
        ),
        (
            "not-an-item.json",
            '[{"id": "a", "type": "book", "issued": {"date-parts": [[2020]]}, "abstract": "A"},'
            "\n 3]",
            f"line 2: an entry: the item is no JSON object; {NOT_WRITTEN}",
        ),
    ],
)
def test_an_entry_that_is_no_paper_is_reported_with_its_line_and_key(
    tmp_path, name, text, expected
):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    errors = [str(r) for r in records(path) if isinstance(r, InputError)]
    assert errors == [f"{path} {expected}"]
    # nothing lost: the bad entry, and all else, written back as it was
    assert written_back(path, detect_format(name, text.encode()), tags=[]) == path.read_bytes()


def test_a_ris_file_that_opens_with_a_byte_order_mark_is_read_and_keeps_it(tmp_path):
    path = tmp_path / "bom.ris"
    path.write_bytes(b"\xef\xbb\xbfTY  - JOUR\r\nID  - r1\r\nAB  - A paper.\r\nER  - \r\n")
    (paper,) = papers_of(path)
    assert (paper.id, paper.abstract) == ("r1", "A paper.")
    out = written_back(path, "ris")
    assert out.startswith(b"\xef\xbb\xbfTY  - JOUR\r\n") and out.count(b"KW  - tagger:") == 2
    assert written_back(path, "ris", tags=[], data=out) == path.read_bytes()


def test_a_ris_file_with_a_byte_order_mark_and_a_byte_that_is_not_utf8_is_read(tmp_path):
    path = tmp_path / "bom-cp1252.ris"
    path.write_bytes(b"\xef\xbb\xbfTY  - JOUR\nID  - r1\nAB  - Caf\xe9 graphs.\nER  - \n")
    (paper,) = papers_of(path)
    assert (paper.id, paper.abstract) == ("r1", "Café graphs.")
    assert written_back(path, "ris", tags=[]) == path.read_bytes()


@pytest.mark.parametrize(
    ("name", "data"),
    [("empty.bib", b""), ("random.bib", b"no entries, only words\n"), ("blank.ris", b"\n\n")],
)
def test_a_library_with_no_entry_says_so(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    said = [str(r) for r in records(path) if isinstance(r, (InputError, InputNotice))]
    kind = "BibTeX" if name.endswith(".bib") else "RIS"
    assert said[0] == f"{path}: no entry found in it: nothing to tag (is it a {kind} file?)"


def test_a_csl_json_file_that_is_no_array_says_where(tmp_path):
    path = tmp_path / "lib.json"
    path.write_text('[\n{"id": "a", "type": "book", "issued": {}, "abstract": "A"}\n{', "utf-8")
    with pytest.raises(InputError) as raised:
        records(path, format="csl-json")
    assert str(raised.value) == f"{path} line 3: invalid JSON: expected ',' or ']' after an item"


def test_a_latin1_library_is_read_with_a_warning_and_written_back_in_its_bytes(tmp_path):
    path = tmp_path / "latin1.bib"
    data = "@article{m\xfcller, title={\xdcber Graphen}, abstract={Graphen f\xfcr Molek\xfcle.}}\n"
    path.write_bytes(data.encode("latin-1"))
    found = records(path)
    assert str(found[0]) == (
        f"{path} line 1: not UTF-8 (byte 0xFC): read as Windows-1252; a library "
        "written back keeps its bytes as they are"
    )
    assert found[0].warning
    assert (found[1].id, found[1].title) == ("müller", "Über Graphen")
    out = written_back(path, "bibtex")
    assert out == data.replace("}}", "}, keywords={tagger:rl, tagger:graph.gnn}}").encode("cp1252")
    assert written_back(path, "bibtex", tags=[], data=out) == path.read_bytes()


def test_a_tag_a_librarys_encoding_cannot_hold_is_refused_and_nothing_written(tmp_path):
    path = tmp_path / "latin1.bib"
    path.write_bytes("@article{m, abstract={Graphen f\xfcr Molek\xfcle.}}\n".encode("latin-1"))
    with pytest.raises(TaggerError) as caught:
        written_back(path, "bibtex", tags=["Multi-agent RL \u2603"])
    assert str(caught.value) == (
        f"{path} is Windows-1252, which has no '\u2603' for a tag written into it: write tags by "
        "id (--tag-labels ids), or save the library as UTF-8; nothing is written"
    )


def test_libraries_joined_in_one_file_share_an_encoding_and_never_run_on(tmp_path):
    one = b"@misc{a, abstract={A}}\n% the end, with no line end"
    two = b"@misc{b, abstract={B}}\n"
    papers = [p for data in (one, two) for p in iter_records("-", stdin=[data], format="bibtex")]
    results = [(p.library, []) for p in papers if hasattr(p, "library")]
    out = b"".join(write_back([("one.bib", one), ("two.bib", two)], "bibtex", results))
    assert out == one + b"\n" + two  # b is an entry still, not the comment's tail
    latin = "@misc{c, abstract={Gr\xfcn}}\n".encode("latin-1")
    read = [p for p in iter_records("-", stdin=[latin], format="bibtex") if hasattr(p, "library")]
    with pytest.raises(TaggerError, match="two.bib is Windows-1252 and one.bib UTF-8: one file"):
        b"".join(
            write_back(
                [("one.bib", one), ("two.bib", latin)],
                "bibtex",
                results[:1] + [(read[0].library, [])],
            )
        )


# --- writing back --------------------------------------------------------------------------------


def test_bibtex_keywords_keep_the_users_words_as_written():
    entry = "@misc{k,\n\tkeywords = {b;a ;tagger:old; c},\n\tabstract={A}}"
    assert bibtex.with_tags(entry, TAGS, "tagger:") == (
        "@misc{k,\n\tkeywords = {b;a; c;tagger:rl;tagger:graph.gnn},\n\tabstract={A}}"
    )  # the separator before tagger's keyword goes with it
    assert bibtex.with_tags(entry, [], "tagger:") == (
        "@misc{k,\n\tkeywords = {b;a; c},\n\tabstract={A}}"
    )
    only_ours = "@misc{k,\n  abstract = {A},\n  keywords = {tagger:old}\n}"
    assert bibtex.with_tags(only_ours, [], "tagger:") == "@misc{k,\n  abstract = {A}\n}"


def test_a_field_is_added_in_the_entrys_own_style_and_a_second_run_changes_nothing():
    entry = "@misc{k,\n  title = {T},\n  abstract = {A},\n}"
    once = bibtex.with_tags(entry, ["rl"], "t:")
    assert once == "@misc{k,\n  title = {T},\n  abstract = {A},\n  keywords = {t:rl},\n}"
    assert bibtex.with_tags(once, ["rl"], "t:") == once
    assert bibtex.with_tags(once, [], "t:") == entry  # the field it added goes again
    assert bibtex.with_tags('@misc{k, Title="T", Abstract="A"}', ["rl"], "t:") == (
        '@misc{k, Title="T", Abstract="A", Keywords={t:rl}}'
    )
    assert bibtex.with_tags("@misc{k,\n\tTITLE\t= {T}}", ["a b", "x,y"], "t:") == (
        "@misc{k,\n\tTITLE\t= {T},\n\tKEYWORDS\t= {t:a b, t:x y}}"
    )


def test_ris_tags_are_kw_lines_and_csl_tags_the_keyword_variable():
    record = "TY  - JOUR\r\nKW  - mine\r\nKW  - tagger:old\r\nAB  - A\r\nER  - \r\n"
    once = ris.with_tags(record, TAGS, "tagger:")
    assert once == (
        "TY  - JOUR\r\nKW  - mine\r\nKW  - tagger:rl\r\nKW  - tagger:graph.gnn\r\nAB  - A\r\n"
        "ER  - \r\n"
    )
    assert ris.with_tags(once, TAGS, "tagger:") == once
    assert ris.with_tags("TY  - JOUR\nAB  - A\nER  - \n", ["rl"], "tagger:") == (
        "TY  - JOUR\nAB  - A\nKW  - tagger:rl\nER  - \n"
    )
    item = '{\n\t\t"id": "a",\n\t\t"keyword": "robots, tagger:old"\n\t}'
    once = csljson.with_tags(item, TAGS, "tagger:")
    assert once == '{\n\t\t"id": "a",\n\t\t"keyword": "robots, tagger:rl, tagger:graph.gnn"\n\t}'
    assert csljson.with_tags(once, TAGS, "tagger:") == once
    assert (
        csljson.with_tags(once, [], "tagger:") == '{\n\t\t"id": "a",\n\t\t"keyword": "robots"\n\t}'
    )


def test_a_csl_json_library_is_written_back_with_only_the_keyword_changed(tmp_path):
    path = tmp_path / "lib.json"
    path.write_text(ZOTERO_CSL, encoding="utf-8")
    out = written_back(path, "csl-json")
    before, after = json.loads(ZOTERO_CSL), json.loads(out)
    assert after[0].pop("keyword") == "tagger:rl, tagger:graph.gnn"
    assert after == before
    assert list(json.loads(out)[0]) == [*before[0], "keyword"]  # keys in their order
    changed = [line for line in out.decode().splitlines() if line not in ZOTERO_CSL.splitlines()]
    assert changed == ["\t\t},", '\t\t"keyword": "tagger:rl, tagger:graph.gnn"']
    assert written_back(path, "csl-json", data=out) == out
    assert written_back(path, "csl-json", tags=[], data=out) == path.read_bytes()


# --- real exports --------------------------------------------------------------------------------


def entry_texts(data: bytes, format: str) -> list[tuple[str | None, str]]:
    blocks, _ = read_blocks(data, "lib", format)
    return [(block.key, block.text) for block in blocks if block.is_entry]


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_export_round_trips_changing_only_the_tag_field(name):
    path = LIBRARIES / name
    format, entries, papers = REAL[name]
    data = path.read_bytes()
    assert detect_format(name, data[:65536]) == format
    assert len(papers_of(path)) == papers
    errors = [r for r in records(path) if isinstance(r, InputError)]
    assert len(errors) == entries - papers  # every entry a paper or reported
    out = written_back(path, format)
    before, after = entry_texts(data, format), entry_texts(out, format)
    assert len(before) == len(after) == entries  # entries in, entries out
    assert [key for key, _ in after] == [key for key, _ in before]  # the same keys, in order
    module = {"bibtex": bibtex, "ris": ris, "csl-json": csljson}[format]
    for (_, was), (_, now) in zip(before, after, strict=True):  # all but the tag field the same
        assert module.with_tags(now, [], "tagger:") == module.with_tags(was, [], "tagger:")
    assert parsed(out, format) == parsed(data, format)  # so bibtexparser and rispy read them too
    assert written_back(path, format, data=out) == out  # a second run: the same file
    assert written_back(path, format, tags=[], data=out) == data  # tags gone: the export again


def parsed(data: bytes, format: str, tags: list[str] | None = TAGS) -> list[tuple]:
    """A library as bibtexparser or rispy reads it, with no code of tagger's: each entry's key,
    type and fields, the tag field's user keywords apart from tagger's; and tagger's, which must
    be ``tags`` on every entry that has an abstract (unless None)."""
    text = data.decode("utf-8")
    if format == "csl-json":  # json itself: every item's keys and values, the keyword apart
        out = []
        for item in json.loads(text):
            words = [w for w in re.split(r"\s*[,;]\s*", item.pop("keyword", "")) if w]
            ours = [w.removeprefix("tagger:") for w in words if w.startswith("tagger:")]
            assert tags is None or ours in ([], tags if "abstract" in item else []), ours
            out.append((item, [w for w in words if not w.startswith("tagger:")]))
        return out
    if format == "bibtex":
        import bibtexparser

        library = bibtexparser.parse_string(text)
        found = [(e.key, e.entry_type, dict(e.fields_dict.items())) for e in library.entries]
        found += [(None, "failed", {"raw": b.raw}) for b in library.failed_blocks]  # as they were
        split = re.compile(r"\s*[,;]\s*")
    else:
        import rispy

        found = [(e.get("id"), e.get("type_of_reference"), dict(e)) for e in rispy.loads(text)]
        split = None
    out = []
    for key, kind, fields in found:
        if kind == "failed":
            out.append((key, kind, fields, []))
            continue
        if format == "bibtex":
            fields = {name: field.value for name, field in fields.items()}
            keywords = fields.pop("keywords", "")
            words = [w for w in split.split(keywords) if w]
            abstract = "abstract" in fields
        else:
            words = fields.pop("keywords", [])
            abstract = "abstract" in fields
        ours = [w.removeprefix("tagger:") for w in words if w.startswith("tagger:")]
        assert tags is None or ours in ([], tags if abstract else []), (key, ours)
        out.append((key, kind, fields, [w for w in words if not w.startswith("tagger:")]))
    return out


def test_a_jabref_librarys_groups_and_comments_pass_through():
    data = (LIBRARIES / "jabref.bib").read_bytes()
    assert b"@Comment{jabref-meta: grouping:" in data
    assert written_back(LIBRARIES / "jabref.bib", "bibtex") == data  # no abstracts: no change


@pytest.mark.slow
def test_a_10_mb_library_is_read_and_written_back(tmp_path):
    """Made of zotero.bib's entries with abstracts, each again under a new key: 10 MB."""
    text = (LIBRARIES / "zotero.bib").read_text(encoding="utf-8")
    entries = [b.text for b in bibtex.blocks(text) if b.fields and "abstract" in b.fields]
    parts, size, number = [], 0, 0
    while size < 10 * 2**20:
        entry = entries[number % len(entries)]
        parts.append(re.sub(r"^@(\w+)\{([^,]+),", rf"@\1{{\2-{number},", entry) + "\n\n")
        size += len(parts[-1].encode())
        number += 1
    path = tmp_path / "big.bib"
    path.write_text("".join(parts), encoding="utf-8")
    papers = papers_of(path)
    assert len(papers) == number
    data = path.read_bytes()
    out = b"".join(write_back([("big.bib", data)], "bibtex", [(p.library, []) for p in papers]))
    assert out == data
