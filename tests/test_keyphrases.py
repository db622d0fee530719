"""Keyphrase candidates (spaCy noun phrases) and their KeyBERT ranking with the real model."""

from __future__ import annotations

import numpy as np

from tagger.config import TaggerConfig
from tagger.keyphrases import KeyphraseExtractor, candidates
from tagger.text import analyse, paper_text

ABSTRACT = (
    "Policy gradient methods are a cornerstone of reinforcement learning. We study stochastic "
    "and deterministic policies in continuous control, and show that graph neural networks "
    "(GNNs) improve sample efficiency. Our GNNs and the graph neural network baseline are "
    "evaluated on MuJoCo locomotion tasks."
)


def _analysis(nlp, text, title=None):
    return analyse(nlp(paper_text(title, text)), title)


def test_candidates_are_noun_phrases_not_ngrams(nlp):
    found = candidates(_analysis(nlp, ABSTRACT), max_words=3)
    assert "policy gradient" in found
    assert "reinforcement learning" in found
    # n-grams across a conjunction or a verb are not noun phrases
    assert "stochastic deterministic policy" not in found
    assert not any(key.startswith(("are ", "we ", "show ")) for key in found)
    assert all(len(key.split()) <= 3 for key in found if "graph neural network" not in key)


def test_variants_share_one_normalised_form_with_every_span(nlp):
    found = candidates(_analysis(nlp, ABSTRACT), max_words=3)
    gnn = found["graph neural network"]
    texts = [ABSTRACT[s.start : s.end] for s in gnn.spans]
    assert texts == ["graph neural networks", "GNNs", "GNNs", "graph neural network"]
    assert "gnn" not in found


def test_hyphenated_compound_is_one_word_and_never_cut(nlp):
    text = "We propose multi-agent reinforcement learning for large-scale traffic control."
    found = candidates(_analysis(nlp, text), max_words=3)
    assert "multi agent reinforcement learning" in found
    assert found["multi agent reinforcement learning"].text == "multi-agent reinforcement learning"
    assert "agent reinforcement learning" not in found  # would cut 'multi-agent' in half


def test_extract_with_real_model_ranks_topical_phrases_first(nlp, embedder):
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=5))
    docs = [ABSTRACT, "Diffusion models generate images by denoising. We speed up the sampler."]
    analyses = [_analysis(nlp, d) for d in docs]
    result = extractor.extract(docs, analyses)
    assert len(result) == 2
    first = [k.normalized for k in result[0]]
    assert len(first) == 5
    assert {"policy gradient", "reinforcement learning", "policy gradient method"} & set(first[:3])
    assert [k.score for k in result[0]] == sorted((k.score for k in result[0]), reverse=True)
    assert any("diffusion" in k.normalized for k in result[1][:2])


def test_one_result_per_input_even_without_candidates(nlp, embedder):
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=3))
    docs = ["We do it.", ABSTRACT, "It is what it is."]
    result = extractor.extract(docs, [_analysis(nlp, d) for d in docs])
    assert [len(r) for r in result] == [0, 3, 0]
    single = extractor.extract([ABSTRACT], [_analysis(nlp, ABSTRACT)])
    assert len(single) == 1 and len(single[0]) == 3  # a one-paper batch keeps its shape


class CountingEmbedder:
    """A fake embedder for a unit test of caching: vectors from a hash, calls counted."""

    name = "fake"

    def __init__(self):
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8) for t in texts]
        return np.array(rows, dtype=np.float32).reshape(len(texts), 8)


def test_phrase_embeddings_are_cached_across_batches(nlp):
    fake = CountingEmbedder()
    extractor = KeyphraseExtractor(fake, TaggerConfig(top_n=3))
    analysis = _analysis(nlp, ABSTRACT)
    extractor.extract([ABSTRACT], [analysis])
    first = len(fake.seen)
    extractor.extract([ABSTRACT], [analysis])
    assert len(fake.seen) == first + 1  # only the document itself is embedded again
