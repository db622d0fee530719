"""Keyphrase candidates (spaCy noun phrases) and their KeyBERT ranking with the real model."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from tagger.config import TaggerConfig
from tagger.language.candidates import candidates
from tagger.language.keyphrases import AcceptanceModel, KeyphraseExtractor
from tagger.language.names import Names
from tagger.language.text import analyse, paper_text

ABSTRACT = (
    "Policy gradient methods are a cornerstone of reinforcement learning. We study stochastic "
    "and deterministic policies in continuous control, and show that graph neural networks "
    "(GNNs) improve sample efficiency. Our GNNs and the graph neural network baseline are "
    "evaluated on MuJoCo locomotion tasks."
)


def _analysis(nlp, text, title=None):
    return analyse(nlp(paper_text(title, text)), title, text)


def test_candidates_are_noun_phrases_not_ngrams(nlp):
    found = candidates(_analysis(nlp, ABSTRACT), max_words=3)
    assert "policy gradient method" in found
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
    spans = found["multi agent reinforcement learning"].spans
    assert [text[s.start : s.end] for s in spans] == ["multi-agent reinforcement learning"]
    assert "agent reinforcement learning" not in found  # would cut 'multi-agent' in half


def test_a_left_piece_is_a_candidate_only_where_the_paper_uses_it_alone(nlp):
    text = (
        "Large language models write code. We train offline multi-task reinforcement learning "
        "agents with policy gradient methods."
    )
    found = candidates(_analysis(nlp, text), max_words=4)
    assert "large language model" in found and "language model" in found  # tails keep the head
    assert "reinforcement learning agent" in found
    for piece in ("large language", "large", "offline multi task reinforcement", "policy gradient"):
        assert piece not in found, piece
    used_alone = text + " We analyse policy gradient."
    found = candidates(_analysis(nlp, used_alone), max_words=4)
    spans = found["policy gradient"].spans
    assert len(spans) == 2  # inside the longer phrase, and alone: in reading order
    assert spans[0].start < spans[1].start and used_alone[spans[1].start :].startswith("policy")
    assert found["policy gradient"].whole == 1


def test_a_hyphenated_compound_ends_a_phrase_whole(nlp):
    text = "We study the bias-variance trade-off of end-to-end training for text-to-CAD models."
    found = candidates(_analysis(nlp, text), max_words=3)
    assert "bias variance trade off" in found
    assert "end to end training" in found
    assert not any(key.endswith(("trade", "text", "end to")) for key in found), list(found)


def test_a_candidate_cut_from_a_name_takes_the_rest_of_it_past_max_words(nlp):
    text = "We sample with Stein variational gradient descent and open-vocabulary object detectors."
    names = Names({"variational gradient": "stein", "object detector": "vocabulary"}, about={})
    plain = candidates(_analysis(nlp, text), max_words=3)
    assert "variational gradient descent" in plain and "vocabulary object detector" not in plain
    found = candidates(_analysis(nlp, text), max_words=3, names=names)
    assert "stein variational gradient descent" in found
    assert "variational gradient descent" not in found  # a fragment of the name
    assert "gradient descent" in found and "descent" in found  # the word before is not bound
    # the word before is the second part of a compound: the name takes the compound whole
    assert "open vocabulary object detector" in found
    assert "object detector" not in found and "detector" in found
    spans = found["stein variational gradient descent"].spans
    assert [text[s.start : s.end] for s in spans] == ["Stein variational gradient descent"]
    assert found["stein variational gradient descent"].whole == 1


def test_markup_is_read_as_nothing_and_spans_point_into_the_original(nlp):
    text = (
        r"We propose D**igraph knowl**E**dge graphs and \textit{sparse mixture of experts} "
        r"with \textbf{P}arametric \textbf{M}emory for <i>in vivo</i> imaging."
    )
    analysis = _analysis(nlp, text)
    found = candidates(analysis, max_words=3)
    graph = found["digraph knowledge graph"]
    assert analysis.text(graph.spans[0]) == "D**igraph knowl**E**dge graphs"
    assert analysis.surface(graph.spans[0]) == "Digraph knowledge graphs"  # the bold letters of DKG
    memory = found["parametric memory"]
    assert analysis.surface(memory.spans[0]) == "Parametric Memory"
    assert "vivo imaging" in found and not any("*" in key or "textit" in key for key in found)


def test_a_citation_gives_no_candidate(nlp):
    """Venues, authors and years in a bracketed citation are no keyphrases ('SODA', 'Teng')."""
    text = (
        "Building on sparsifiers (Spielman and Teng, SODA 2004) and expanders [Chen et al., "
        "STOC'22], we give a faster max-flow algorithm for directed graphs (NeurIPS 2023), "
        "evaluated on CIFAR-10 (a standard benchmark)."
    )
    found = candidates(_analysis(nlp, text), max_words=4)
    assert {"sparsifier", "expander", "directed graph", "cifar-10"} <= set(found)
    assert not {"soda", "spielman", "teng", "chen et al", "stoc'22", "neurip"} & set(found)


def test_extract_with_real_model_ranks_topical_phrases_first(nlp, embedder):
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=5))
    docs = [ABSTRACT, "Diffusion models generate images by denoising. We speed up the sampler."]
    analyses = [_analysis(nlp, d) for d in docs]
    result = extractor.extract(docs, analyses)
    assert len(result) == 2
    first = [k.normalized for k in result[0]]
    assert len(first) == 5
    assert {"policy gradient", "reinforcement learning", "policy gradient method"} & set(first[:3])
    assert all(0.0 <= k.score <= 1.0 for r in result for k in r)  # a probability
    assert any("diffusion" in k.normalized for k in result[1][:2])


def test_the_shipped_names_table_keeps_a_name_whole_in_what_is_listed(nlp, embedder):
    """With the real model and the shipped table, a name longer than ``max_words`` is listed
    whole and its tail is not; without the table, the tail is what is listed."""
    doc = (
        "Markov chain Monte Carlo mixes slowly on Bayesian neural networks. We speed up Markov "
        "chain Monte Carlo with Stein variational gradient descent."
    )
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=5))
    [listed] = extractor.extract([doc], [_analysis(nlp, doc)])
    texts = [k.text for k in listed]
    assert "Markov chain Monte Carlo" in texts
    assert not {"chain Monte Carlo", "variational gradient descent"} & set(texts)
    extractor.names = Names({}, about={})
    [cut] = extractor.extract([doc], [_analysis(nlp, doc)])
    assert "chain Monte Carlo" in [k.text for k in cut]


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


def test_the_surface_form_is_the_abstracts_not_the_titles_capitals(nlp, embedder):
    title = (
        "Bandit Algorithms for Wasserstein Gradient Flows in Robot Fleets: A Multi-Agent Framework"
    )
    abstract = (
        "We study bandit algorithms for sampling. Our analysis of Wasserstein gradient flows "
        "gives regret bounds for bandit algorithms. The Framework is a framework."
    )
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=10))
    [phrases] = extractor.extract([paper_text(title, abstract)], [_analysis(nlp, abstract, title)])
    texts = {k.normalized: k.text for k in phrases}
    assert texts["bandit algorithm"] == "bandit algorithms"  # the abstract's form
    assert texts["wasserstein gradient flow"] == "Wasserstein gradient flows"
    title_only = [k for k in phrases if all(span.field == "title" for span in k.spans)]
    assert title_only  # the title's style is dropped: lower case, but names and acronyms
    for k in title_only:
        for part in re.split(r"[ -]", k.text):
            assert part == "Wasserstein" or not (part[:1].isupper() and part[1:].islower()), k.text
    for k in phrases:  # every span still points at the phrase in the original field
        source = title if k.spans[0].field == "title" else abstract
        assert source[k.spans[0].start : k.spans[0].end].lower() == k.text.lower()


def test_a_phrase_and_its_part_are_listed_together_only_when_both_carry_weight(nlp, embedder):
    """Where the first model ranks (no readers' ranking: the fast mode's, an own embedder's)."""
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=10))
    extractor.model = replace(AcceptanceModel.load(), ranking=None)
    docs = [
        "Deep reinforcement learning for robust control: robust reinforcement learning agents "
        "learn robust policies with reinforcement learning from robust rewards.",
        ABSTRACT,
    ]
    listed = extractor.extract(docs, [_analysis(nlp, d) for d in docs])
    # the case arises: the first paper lists the short phrase, so a longer one beside it is checked
    assert "reinforcement learning" in [k.normalized for k in listed[0]], listed[0]
    for phrases in listed:
        keys = [f" {k.normalized} " for k in phrases]
        for n, short in enumerate(phrases):
            for m, long in enumerate(phrases):
                if n != m and keys[n] in keys[m]:
                    assert min(short.score, long.score) >= 0.8, (short.text, long.text)


def test_a_phrase_that_only_adds_a_generic_head_is_never_listed_beside_it():
    from tagger.language.keyphrases import _overlap

    found = {}  # not consulted: the rule needs no spans
    assert _overlap((0.95, "federated learning"), (0.9, "federated learning framework"), found)
    assert _overlap((0.9, "federated learning method"), (0.95, "federated learning"), found)
    assert not _overlap((0.9, "federated learning"), (0.9, "graph neural network"), found)


def test_an_acronym_is_never_listed_beside_a_phrase_it_spells(nlp, embedder):
    """The paper's definition makes an acronym and its long form one candidate; an acronym of
    a phrase's initials it never defines ('EvoCF' beside 'Evolutionary Counterfactual Planning')
    is caught when listing, the likelier kept."""
    from tagger.language.keyphrases import _spelled
    from tagger.language.text import spells

    assert _spelled("EvoCF", "Evolutionary Counterfactual Planning")
    assert _spelled("test-time adaptation", "TTA")
    assert not _spelled("TTA", "graph neural networks")
    assert not _spelled("LoRA", "LoRA adapters")  # contained, not spelled: see _overlap
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=10))
    docs = [
        "We propose EvoCF, which plans by Evolutionary Counterfactual Planning: EvoCF evolves "
        "counterfactual plans for multi-agent collaboration, and Evolutionary Counterfactual "
        "Planning beats every baseline on multi-agent collaboration benchmarks.",
        ABSTRACT,
    ]
    listed = extractor.extract(docs, [_analysis(nlp, d) for d in docs])
    # the case arises: one of the two is listed, so the other beside it would be caught here
    assert {"EvoCF", "Evolutionary Counterfactual Planning"} & {k.text for k in listed[0]}
    for phrases in listed:
        texts = [k.text for k in phrases]
        for a in texts:
            assert not any(" " not in a and spells(a, b.split()) for b in texts if " " in b), texts


def test_keybert_measures_a_phrase_as_keybert_itself_does(embedder):
    """What tagger takes from KeyBERT is its measure of a candidate: the cosine of the phrase's
    and the paper's embeddings, rounded to four decimals (keybert_similarities, made in integers
    to be the same on every CPU). The keybert package, given the same candidates and embeddings,
    returns the same numbers (the last digit may differ where its float product rounds the
    other way)."""
    from keybert import KeyBERT
    from keybert.backend import BaseEmbedder

    from tagger.language.keyphrases import keybert_similarities

    doc = (
        "We study offline reinforcement learning with graph neural networks as value "
        "functions, and show that message passing improves sample efficiency on molecules."
    )
    phrases = [
        "offline reinforcement learning",
        "graph neural networks",
        "message passing",
        "sample efficiency",
        "value functions",
        "molecules",
    ]
    docs, words = embedder.embed([doc]), embedder.embed(phrases)
    [ours] = keybert_similarities(docs, words)

    class Given(BaseEmbedder):  # KeyBERT's backend: the embeddings are passed in, never made
        def embed(self, documents, verbose=False):
            raise AssertionError("KeyBERT was to use the embeddings it was given")

    theirs = dict(
        KeyBERT(model=Given()).extract_keywords(
            doc,
            candidates=phrases,
            keyphrase_ngram_range=(1, 3),
            top_n=len(phrases),
            doc_embeddings=docs,
            word_embeddings=words,
        )
    )
    assert set(theirs) == set(phrases)
    assert all(abs(theirs[p] - o) <= 1e-4 for p, o in zip(phrases, ours, strict=True)), (
        theirs,
        ours,
    )
