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
    assert entry.read_text(encoding="utf-8").startswith('{"texts": [')
    assert compiled(RuleSet(taxonomy)) == compiled(first)


def test_a_pipeline_of_ones_own_is_not_cached(cache, nlp):
    RuleSet(load_taxonomy(MINI_TAXONOMY), nlp=nlp)
    assert not cache.exists()
