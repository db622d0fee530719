"""The readers' keyphrase ranking (language.readers): its parts on their own, then the shipped
ranking with the real model."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tagger.config import TaggerConfig
from tagger.language.keyphrases import (
    PHRASE_FEATURES,
    AcceptanceModel,
    KeyphraseExtractor,
    _parse_model,
)
from tagger.language.readers import (
    AUTHOR_COLUMNS,
    READER_COLUMNS,
    Linear,
    Priors,
    ReadersRanking,
    opening_contexts,
)
from tagger.language.text import analyse, paper_text
from tagger.language.trees import fitted_trees

from ..conftest import HashEmbedder

ABSTRACT = (
    "We propose graph neural networks for molecular property prediction. Graph neural networks "
    "pass messages between atoms, and our message passing scheme is invariant to rotations. "
    "Experiments on QM9 show that large language models and deep learning baselines trail "
    "rotation-invariant message passing by a wide margin."
)


def test_a_regression_gives_scikit_learns_probability_whatever_rows_beside_it():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 40))
    y = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(size=300) > 0).astype(int)
    linear = Linear.fitted(x, y)
    expected = LogisticRegression(max_iter=3000).fit(x, y).predict_proba(x)[:, 1]
    assert np.allclose(linear.probability(x), expected, atol=1e-12)
    alone = [linear.probability(x[n : n + 1])[0] for n in range(0, 300, 37)]
    assert alone == linear.probability(x)[::37]  # bit for bit: a row's sum is its own


def test_a_phrases_context_is_the_mean_state_of_its_first_occurrence_in_the_opening():
    opening = "Graph nets work. We propose graph nets for molecules."
    # one token a word; a state per token: its position, so a mean says which tokens it took
    words = [(0, 0)] + [(m.start(), m.end()) for m in re.finditer(r"\w+", opening)]
    hidden = np.array([[float(n), 1.0] for n in range(len(words))], dtype=np.float32)
    rows = opening_contexts(hidden, words, opening, [("graph nets", "graph net"), ("trees",)])
    first = hidden[1:3].mean(0)  # "Graph nets" of the first sentence: tokens 1 and 2
    assert np.allclose(rows[0, :2], first / np.linalg.norm(first)) and rows[0, 2] == 1.0
    assert not rows[1].any()  # not in the opening: zeros, and no flag


def test_a_phrase_never_coded_or_listed_carries_the_smoothing_shares():
    priors = Priors({"graph net": (4, 0, 4)}, {"graph net": (10, 5)})
    assert priors.readers("unseen") == {"coded": 0.0, "coded_generic": 0.7, "coded_accept": 0.2}
    assert priors.readers("graph net")["coded_accept"] == pytest.approx((4 + 0.4) / 6)
    assert priors.authors("unseen")["listed_share"] == pytest.approx(0.02)
    assert priors.authors("graph net")["listed_share"] == pytest.approx((5 + 0.1) / 15)


def _small_ranking(seed: int = 0) -> ReadersRanking:
    """A ranking fitted to random rows: every part real, none of it meaningful."""
    rng = np.random.default_rng(seed)

    def rows(names):
        return [dict(zip(names, rng.normal(size=len(names)).tolist(), strict=True)) for _ in x]

    x = rng.normal(size=(200, 8))
    labels = rng.integers(0, 2, size=200).tolist()
    readers_names = (*PHRASE_FEATURES, *READER_COLUMNS)
    authors_names = (*PHRASE_FEATURES, *AUTHOR_COLUMNS)
    return ReadersRanking(
        readers=fitted_trees(rows(readers_names), labels, names=readers_names),
        authors=fitted_trees(rows(authors_names), labels, names=authors_names),
        reading=Linear.fitted(x, labels),
        listing=Linear.fitted(x, labels[::-1]),
        priors=Priors({"graph net": (3, 1, 2)}, {"graph net": (8, 2)}),
        t=0.7,
        w=4.0,
        single=0.6,
    )


def test_a_model_with_a_ranking_is_written_and_read_back_as_it_was(tmp_path):
    old = AcceptanceModel.load()
    model = AcceptanceModel(old.accept, {"fitted_on": "test"}, _small_ranking())
    path = tmp_path / "keyphrases.json"
    model.save(path)
    again = _parse_model(path.read_bytes())
    assert again == model
    again.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    rows = [dict.fromkeys(PHRASE_FEATURES, 0.5) | {"single": 0.0}]
    embedded = np.full((1, 8), 0.1)
    assert again.ranking.rank(rows, [0.5], embedded, ["graph net"]) == model.ranking.rank(
        rows, [0.5], embedded, ["graph net"]
    )


def test_an_embedder_without_hidden_states_ranks_as_the_old_model_does(nlp):
    """An embedder of one's own gives vectors in its own space and no hidden states: the
    readers' ranking, fitted in the transformer's, is not applied to it."""
    hash_embedder = HashEmbedder()
    old = AcceptanceModel.load()
    texts = [ABSTRACT]
    analyses = [analyse(nlp(paper_text(None, ABSTRACT)), None, ABSTRACT)]
    plain = KeyphraseExtractor(hash_embedder, TaggerConfig())
    plain.model = old
    ranked = KeyphraseExtractor(hash_embedder, TaggerConfig())
    ranked.model = AcceptanceModel(old.accept, old.about, _small_ranking())
    assert ranked.extract(texts, analyses) == plain.extract(texts, analyses)


def test_embed_with_states_gives_embeds_vectors_and_each_tokens_state(embedder, torch_embedder):
    texts = ["Graph neural networks for molecules.", ABSTRACT]
    for backend in (embedder, torch_embedder):
        vectors, states = backend.embed_with_states(texts)
        assert np.array_equal(vectors, backend.embed(texts))
        for text, state in zip(texts, states, strict=True):
            assert state.hidden.shape == (len(state.offsets), 384)
            assert text[slice(*state.offsets[1])] == text.split()[0]  # after [CLS]
    onnx, reference = (b.embed_with_states(texts)[1][1].hidden for b in (embedder, torch_embedder))
    cosine = (
        (onnx * reference).sum(1) / np.linalg.norm(onnx, axis=1) / np.linalg.norm(reference, axis=1)
    )
    assert cosine.min() > 0.95  # the 7-bit model's states are torch's, nearly


def test_the_readers_ranking_lists_each_term_once_with_a_readers_probability(nlp, embedder):
    model = AcceptanceModel.load()
    assert model.ranking is not None  # the shipped model ranks as readers read
    extractor = KeyphraseExtractor(embedder, TaggerConfig(top_n=10))
    title = "Rotation-Invariant Message Passing for Molecules"
    analyses = [analyse(nlp(paper_text(title, ABSTRACT)), title, ABSTRACT)]
    [listed] = extractor.extract([paper_text(title, ABSTRACT)], analyses)
    keys = [k.normalized for k in listed]
    assert len(keys) >= 5
    assert not any(a != b and f" {a} " in f" {b} " for a in keys for b in keys), keys
    assert all(0.0 <= k.score <= 1.0 for k in listed)
    # the broad fields the paper only compares against are not what it lists first
    assert not {"large language model", "deep learning"} & set(keys[:3]), keys
    # the same keyphrases, alone or in a batch, with or without the vector already made
    texts = [paper_text(title, ABSTRACT), "Diffusion models denoise images with a learned score."]
    both = [analyses[0], analyse(nlp(texts[1]), None, texts[1])]
    assert extractor.extract(texts, both)[0] == listed
    vectors, states = extractor.embed_openings(texts)
    assert extractor.extract(texts, both, vectors, states)[0] == listed


@pytest.mark.parametrize(
    "form",
    ["graph nets", "gnn", "(gnns)", "-based", "nets.", "l2", "_x", "é", "graph", "nets for"],
)
def test_a_phrase_is_found_between_word_boundaries_as_the_regular_expression_finds_it(form):
    from tagger.language.readers import _whole

    text = "graph nets (gnns) -based l2 _x é, graph-nets. we propose gnn-based graph nets for é."
    found = re.search(r"\b" + re.escape(form) + r"\b", text)
    assert _whole(text, form) == (found.span() if found else None)
