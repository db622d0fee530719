"""The words of a taxonomy's phrase rules kept in the cache directory under its sha256: a second
run compiles the same rules without spaCy's tokenizer; another taxonomy, or a damaged entry, is
tokenized afresh."""

from __future__ import annotations

import pytest

import tagger.taxonomy.rules as rules_module
from tagger.taxonomy.loading import load_taxonomy, parse_taxonomy
from tagger.taxonomy.rules import RuleSet

from ..conftest import MINI_TAXONOMY


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    return tmp_path / "rules"


def compiled(rules: RuleSet):
    return rules.rules, rules.phrases, rules.acronyms, rules.longest


def no_tokenizer(monkeypatch):
    def refuse(nlp, phrase):
        raise AssertionError(f"tokenized {phrase!r} again")

    monkeypatch.setattr(rules_module, "tokenize_phrase", refuse)


def test_a_second_compile_reads_the_words_from_the_cache(cache, monkeypatch):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    first = RuleSet(taxonomy)
    assert len(list(cache.glob("*.json"))) == 1
    no_tokenizer(monkeypatch)
    assert compiled(RuleSet(taxonomy)) == compiled(first)


def test_another_taxonomy_is_tokenized_afresh(cache, monkeypatch):
    text = MINI_TAXONOMY.read_text(encoding="utf-8")
    RuleSet(parse_taxonomy(text))
    edited = parse_taxonomy(text.replace("aliases: [", "aliases: [pre-training of agents, ", 1))
    seen = []
    real = rules_module.tokenize_phrase
    monkeypatch.setattr(
        rules_module, "tokenize_phrase", lambda nlp, p: seen.append(p) or real(nlp, p)
    )
    rules = RuleSet(edited)
    assert "pre-training of agents" in seen
    assert ("pre", "training", "of", "agent") in rules.phrases  # normalised: singular
    assert len(list(cache.glob("*.json"))) == 2


def test_a_damaged_entry_is_made_again(cache):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    first = RuleSet(taxonomy)
    (entry,) = cache.glob("*.json")
    entry.write_text('{"texts": ["x"], "wor', encoding="utf-8")
    assert compiled(RuleSet(taxonomy)) == compiled(first)
    header, body = entry.read_text(encoding="utf-8").split("\n", 1)  # io.cache's header
    assert header.startswith("tagger-cache 1 key=") and body.startswith('{"texts": [')
    assert compiled(RuleSet(taxonomy)) == compiled(first)


def test_a_pipeline_of_ones_own_is_not_cached(cache, nlp):
    RuleSet(load_taxonomy(MINI_TAXONOMY), nlp=nlp)
    assert not cache.exists()


def test_a_bit_flipped_in_a_word_is_found_and_the_entry_made_again(cache, monkeypatch):
    """Still valid JSON, the same texts: only the digest the entry carries tells that 'network'
    now reads 'oetwork', and that rule would match nothing."""
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    first = RuleSet(taxonomy)
    (entry,) = cache.glob("*.json")
    data = bytearray(entry.read_bytes())
    at = data.index(b'"network"') + 1
    data[at] ^= 0x01  # n -> o
    entry.write_bytes(bytes(data))
    assert compiled(RuleSet(taxonomy)) == compiled(first)
    assert entry.read_bytes().count(b'"oetwork"') == 0  # made again
    no_tokenizer(monkeypatch)
    assert compiled(RuleSet(taxonomy)) == compiled(first)
