"""A tagging run whose memory does not grow with the corpus: spaCy's strings and tokenizer cache
entries for a batch's words are freed after the batch (spaCy's memory zones), and compiling the
rules keeps none of spaCy's copies of their words."""

from __future__ import annotations

from tagger import Paper, Tagger
from tagger.taxonomy.loading import load_taxonomy
from tagger.taxonomy.rules import RuleSet

from ..conftest import MINI_TAXONOMY, HashEmbedder


def unseen_papers(n: int, start: int) -> list[Paper]:
    """Papers full of words spaCy has never seen, a few hundred each."""
    return [
        Paper(
            id=f"p{i}",
            title=f"Zorblax{i} networks",
            abstract=" ".join(f"We quuxify{i}x{k} the flerb{i}y{k} model." for k in range(40)),
        )
        for i in range(start, start + n)
    ]


def test_spacys_strings_do_not_grow_with_the_papers_tagged():
    tagger = Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder())
    list(tagger.tag_many(unseen_papers(2, 0)))  # everything loaded
    strings = len(tagger.reader.nlp.vocab.strings)
    tagged = list(tagger.tag_many(unseen_papers(20, 2)))
    assert [t.paper.id for t in tagged] == [f"p{i}" for i in range(2, 22)]
    assert tagged[0].keyphrases  # the papers were read
    assert len(tagger.reader.nlp.vocab.strings) == strings


def test_compiling_the_rules_adds_no_strings_to_spacy(nlp):
    before = len(nlp.vocab.strings)
    rules = RuleSet(load_taxonomy(MINI_TAXONOMY), nlp=nlp)
    assert rules.phrases  # the words are kept, as Python strings
    assert len(nlp.vocab.strings) == before


def test_the_memory_a_worker_needs_is_known_for_every_backend():
    """`tag --workers N` checks N workers fit in memory, by backend: one left out was a KeyError
    (the static backend's, once)."""
    from tagger.config import EMBEDDING_BACKENDS
    from tagger.tagging.workers import WORKER_MEMORY

    assert set(WORKER_MEMORY) == set(EMBEDDING_BACKENDS)
