"""CSL JSON write-back (io.csljson): only the ``keyword`` value's text changes, the user's
keywords kept as written (a string with its separators, a list as a list), a ``keyword`` that is
neither reported and left alone; what is not JSON around the array reported, never dropped."""

from __future__ import annotations

import json

import pytest

from tagger.errors import InputError
from tagger.io import csljson
from tagger.io.formats import detect_format, is_csl_json

from .test_libraries import TAGS, ZOTERO_CSL, records, written_back

P = "tagger:"


def item_file(tmp_path, *items: str, tail: str = "\n]\n"):
    path = tmp_path / "lib.json"
    path.write_text("[\n" + ",\n".join(items) + tail, encoding="utf-8")
    return path


def item(keyword: str | None = None, **extra: str) -> str:
    members = ['"id": "a"', '"type": "article-journal"', '"abstract": "We study robots."']
    members += [f'"{key}": {value}' for key, value in extra.items()]
    if keyword is not None:
        members.append(f'"keyword": {keyword}')
    return "  {\n    " + ",\n    ".join(members) + "\n  }"


def errors_of(path):
    return [str(r) for r in records(path, format="csl-json") if isinstance(r, InputError)]


# --- F3: a keyword that is a list, or neither text nor a list of texts --------------------------


def test_a_keyword_list_stays_a_list_with_the_users_strings():
    text = '{"id": "a", "keyword": ["graphs", "tagger:old", "robot arms"]}'
    once = csljson.with_tags(text, TAGS, P)
    assert once == (
        '{"id": "a", "keyword": ["graphs", "robot arms", "tagger:rl", "tagger:graph.gnn"]}'
    )
    assert csljson.with_tags(once, TAGS, P) == once
    assert csljson.with_tags(once, [], P) == '{"id": "a", "keyword": ["graphs", "robot arms"]}'
    assert csljson.paper_fields(json.loads(once), P)["keywords"] == ["graphs", "robot arms"]
    lines = '{\n  "keyword": [\n    "a",\n    "b"\n  ]\n}'
    once = csljson.with_tags(lines, ["rl"], P)
    assert once == '{\n  "keyword": [\n    "a",\n    "b",\n    "tagger:rl"\n  ]\n}'
    assert csljson.with_tags(once, [], P) == lines
    for empty, tagged in (("[]", '["tagger:rl"]'), ("[ ]", '[ "tagger:rl"]')):
        once = csljson.with_tags('{"keyword": ' + empty + "}", ["rl"], P)
        assert once == '{"keyword": ' + tagged + "}"
        assert csljson.with_tags(once, [], P) == '{"keyword": ' + empty + "}"


@pytest.mark.parametrize("keyword", ["5", '{"a": 1}', '["a", 2]', "null"])
def test_a_keyword_neither_text_nor_texts_is_reported_and_written_back_as_it_is(tmp_path, keyword):
    path = item_file(tmp_path, item(keyword))
    assert errors_of(path) == [
        f"{path} line 2: entry 'a': its keyword is neither text nor a list of texts; it is not "
        "tagged, and written back as it is"
    ]
    assert written_back(path, "csl-json") == path.read_bytes()


# --- F15: only the keyword's text changes -------------------------------------------------------


def test_only_the_keyword_value_is_rewritten_never_the_item():
    text = (
        '{"id": "a", "n": 1E400, "x": 1.10, "id": "b",\n'
        '  "issued": {"date-parts": [[2020]]}, "keyword": "mine", "t": "caf\\u00e9"}'
    )
    once = csljson.with_tags(text, ["rl"], P)
    assert once == text.replace('"mine"', '"mine, tagger:rl"')
    assert csljson.with_tags(once, [], P) == text


def test_a_csl_file_with_odd_json_is_written_back_with_only_the_keyword_span_changed(tmp_path):
    odd = (
        '  {"id": "a", "type": "article-journal", "abstract": "We study robots.", "n": 1E400,\n'
        '   "x": 1.10, "issued": {"date-parts": [[2020]]}, "keyword": "old", "keyword": "mine"}'
    )
    path = item_file(tmp_path, odd)
    out = written_back(path, "csl-json").decode()
    original = path.read_text("utf-8")
    prefix = original[: original.rindex('"mine"')]
    suffix = original[original.rindex('"mine"') + len('"mine"') :]
    assert out.startswith(prefix) and out.endswith(suffix)
    assert out[len(prefix) : len(out) - len(suffix)] == '"mine, tagger:rl, tagger:graph.gnn"'
    assert "Infinity" not in out


def test_a_keyword_is_added_after_the_last_member_in_its_line_end_and_indentation():
    crlf = '{\r\n\t"id": "a",\r\n\t"type": "book"\r\n}'
    assert csljson.with_tags(crlf, ["rl"], P) == (
        '{\r\n\t"id": "a",\r\n\t"type": "book",\r\n\t"keyword": "tagger:rl"\r\n}'
    )
    assert csljson.with_tags('{"id": "a"}', ["rl"], P) == '{"id": "a", "keyword": "tagger:rl"}'
    assert csljson.with_tags('{"id":"a","t":1}', ["rl"], P) == (
        '{"id":"a","t":1,"keyword":"tagger:rl"}'
    )
    for text in (crlf, '{"id": "a"}', '{"id":"a","t":1}'):
        assert csljson.with_tags(csljson.with_tags(text, ["rl"], P), [], P) == text


def test_non_ascii_tags_are_escaped_in_an_ascii_file_only():
    assert csljson.with_tags('{"id": "a"}', ["Réseaux"], P) == (
        '{"id": "a", "keyword": "tagger:R\\u00e9seaux"}'
    )
    assert csljson.with_tags('{"id": "é"}', ["Réseaux"], P) == (
        '{"id": "é", "keyword": "tagger:Réseaux"}'
    )


def test_an_empty_keyword_stays_one_tagger_left_alone_is_removed():
    assert csljson.with_tags('{"keyword": ""}', [], P) == '{"keyword": ""}'
    assert csljson.with_tags('{"keyword": "tagger:x", "id": 1}', [], P) == '{"id": 1}'


# --- F23: the user's keyword string as written ---------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("a,b", "a,b,tagger:rl"),
        ("a;b", "a;b;tagger:rl"),
        ("a ;  b", "a ;  b ;  tagger:rl"),
        ("tagger:old,a,b", "a,b,tagger:rl"),
        ("a, tagger:old; b", "a; b; tagger:rl"),
        ("a", "a, tagger:rl"),
        ("", "tagger:rl"),
    ],
)
def test_the_users_keyword_string_is_kept_as_written(before, after):
    text = json.dumps({"id": "a", "keyword": before})
    once = csljson.with_tags(text, ["rl"], P)
    assert json.loads(once)["keyword"] == after
    assert csljson.with_tags(once, ["rl"], P) == once


def test_the_keywords_read_are_the_users_split_at_commas_and_semicolons():
    fields = {"id": "a", "keyword": "a; b ,tagger:x, c"}
    assert csljson.paper_fields(fields, P)["keywords"] == ["a", "b", "c"]


# --- F25: what is no JSON around the array ------------------------------------------------------


def test_text_after_the_array_is_reported_and_written_back(tmp_path):
    path = item_file(tmp_path, item(), tail="\n]\nnot json\n")
    assert errors_of(path) == [
        f"{path} line 8: an entry: text after the array's end: not JSON; it is not tagged, and "
        "written back as it is"
    ]
    out = written_back(path, "csl-json")
    assert out.endswith(b"\n]\nnot json\n") and b'"keyword": "tagger:rl' in out
    assert written_back(path, "csl-json", tags=[], data=out) == path.read_bytes()


def test_a_trailing_comma_in_the_array_is_reported_and_written_back(tmp_path):
    path = item_file(tmp_path, item(), tail=",\n]\n")
    assert errors_of(path) == [
        f"{path} line 6: an entry: a comma after the last item: not JSON (remove it); it is not "
        "tagged, and written back as it is"
    ]
    out = written_back(path, "csl-json")
    assert out.endswith(b"  },\n]\n")
    assert written_back(path, "csl-json", tags=[], data=out) == path.read_bytes()


# --- F4: nested too deeply ----------------------------------------------------------------------


def test_an_item_nested_too_deeply_is_no_csl_and_a_problem_not_a_traceback(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    text = '[{"type": "article-journal", "issued": {}, "x": ' + deep + "}]"
    assert not is_csl_json(text)
    assert detect_format("lib.json", text.encode()) == "json"
    path = item_file(tmp_path, '  {"id": "d", "x": ' + deep + "}", item())
    errors = errors_of(path)
    assert errors == [
        f"{path} line 2: an entry: nested too deeply to read; it is not tagged, and written back "
        "as it is"
    ]
    assert len(records(path, format="csl-json")) == 2
    assert written_back(path, "csl-json", tags=[]) == path.read_bytes()


# --- round trips --------------------------------------------------------------------------------


def test_the_zotero_shape_written_back_with_tags_then_without_is_the_export(tmp_path):
    path = tmp_path / "lib.json"
    path.write_text(ZOTERO_CSL, encoding="utf-8")
    once = written_back(path, "csl-json")
    assert once != path.read_bytes()
    assert written_back(path, "csl-json", data=once) == once  # a second run: the same file
    assert written_back(path, "csl-json", tags=[], data=once) == path.read_bytes()
    crlf = ZOTERO_CSL.replace("\n", "\r\n").encode()
    once = written_back(path, "csl-json", data=crlf)
    assert b'\t\t},\r\n\t\t"keyword": "tagger:rl, tagger:graph.gnn"\r\n\t}' in once
    assert written_back(path, "csl-json", tags=[], data=once) == crlf


def test_a_csl_library_whose_first_item_outruns_the_head_read_is_still_told():
    """The format is told from a file's first 64 KB: an item with a long abstract first is
    told by the members before the cut (type, container-title), not taken for plain JSON."""
    item = {"id": "a", "type": "article-journal", "container-title": "J", "abstract": "x" * 99_999}
    head = json.dumps([item], indent=2).encode()[: 1 << 16]
    assert detect_format("library.json", head) == "csl-json"
    plain = json.dumps([{"id": "a", "type": "poster", "abstract": "x" * 99_999}]).encode()
    assert detect_format("papers.json", plain[: 1 << 16]) == "json"


def test_a_keyword_of_white_space_only_is_kept_and_a_second_run_is_the_same():
    item = '{"id": "a", "keyword": "   "}'
    once = csljson.with_tags(item, ["rl"], "tagger:")
    assert once == '{"id": "a", "keyword": "   tagger:rl"}'
    assert csljson.with_tags(once, ["rl"], "tagger:") == once
    assert csljson.with_tags(once, [], "tagger:") == item
