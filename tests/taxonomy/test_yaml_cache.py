"""A taxonomy's YAML read once is kept in the cache as JSON (taxonomy.yamlfile): a second read
parses nothing and gives the same document, the same line numbers and the same messages; a
document JSON would change is not kept, and a damaged entry is read afresh."""

from __future__ import annotations

import pytest

import tagger.taxonomy.yamlfile as yamlfile
from tagger.errors import TaxonomyError
from tagger.taxonomy.loading import load_taxonomy, parse_taxonomy

from ..conftest import MINI_TAXONOMY


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    return tmp_path / "yaml"


def no_parser(monkeypatch):
    def refuse(text, source):
        raise AssertionError("parsed the YAML again")

    monkeypatch.setattr(yamlfile, "_read", refuse)


def test_a_second_read_is_the_same_document_without_parsing(kept, monkeypatch):
    text = MINI_TAXONOMY.read_text(encoding="utf-8")
    first = yamlfile.read_yaml(text, "mini")
    assert len(list(kept.glob("*.json"))) == 1
    no_parser(monkeypatch)
    assert yamlfile.read_yaml(text, "mini") == first
    assert load_taxonomy(MINI_TAXONOMY).sha256 == parse_taxonomy(text).sha256


def test_a_message_names_the_same_line_from_the_kept_document(kept, monkeypatch):
    text = MINI_TAXONOMY.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "parent:" in line)
    lines[at] = lines[at].split("parent:")[0] + "parent: no-such-area\n"
    broken = "".join(lines)
    with pytest.raises(TaxonomyError) as first:
        parse_taxonomy(broken, source="mine.yaml")
    assert f"mine.yaml line {at + 1}" in str(first.value)
    no_parser(monkeypatch)
    with pytest.raises(TaxonomyError) as second:
        parse_taxonomy(broken, source="mine.yaml")
    assert str(second.value) == str(first.value)


@pytest.mark.parametrize(
    "text",
    ["when: 2026-12-02\n", "1: one\n", "x: .nan\n", "flag: yes\nn: 1.0\n"],
    ids=["date", "number as key", "nan", "bool and float"],
)
def test_a_document_json_would_change_is_not_kept(kept, text):
    data, _ = yamlfile.read_yaml(text, "t.yaml")
    entries = list(kept.glob("*.json"))
    if text.startswith("flag"):  # JSON keeps True and 1.0 as they are
        assert len(entries) == 1 and yamlfile.read_yaml(text, "t.yaml")[0] == data
    else:
        assert entries == []


def test_a_damaged_entry_is_read_afresh(kept):
    text = MINI_TAXONOMY.read_text(encoding="utf-8")
    first = yamlfile.read_yaml(text, "mini")
    (entry,) = kept.glob("*.json")
    entry.write_bytes(entry.read_bytes()[:-40])
    assert yamlfile.read_yaml(text, "mini") == first
