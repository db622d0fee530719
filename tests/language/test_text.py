"""Token normalisation, hyphen handling and acronym definitions."""

from __future__ import annotations

import pytest

from tagger.language.text import analyse, find_acronyms, normalize_word, paper_text, tokenize_phrase


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("Networks", "network"),
        ("policies", "policy"),
        ("processes", "process"),
        ("approaches", "approach"),
        ("databases", "database"),
        ("LLMs", "llm"),
        ("physics", "physics"),
        ("analysis", "analysis"),
        ("learning", "learning"),
        ("series", "series"),
        ("biases", "bias"),
        ("matrices", "matrix"),
        ("corpus", "corpus"),
        ("GPT-4", "gpt-4"),
        ("ＧＮＮs", "gnn"),
    ],
)
def test_normalize_word(word, expected):
    assert normalize_word(word) == expected


def test_hyphenated_phrase_also_matches_joined_spelling(nlp):
    assert tokenize_phrase(nlp, "pre-training") == [("pre", "training"), ("pretraining",)]
    assert tokenize_phrase(nlp, "Graph Neural Networks") == [("graph", "neural", "network")]


def test_analysis_maps_offsets_back_to_title_and_abstract(nlp):
    title = "Multi-Agent RL"
    abstract = "Large language models(LLMs) and graph neural networks (GNNs). Second sentence."
    analysis = analyse(nlp(paper_text(title, abstract)), title, abstract)
    for word in analysis.words:
        source = title if word.field == "title" else abstract
        assert source[word.start : word.end] == word.text
    assert [w.text for w in analysis.words if w.field == "title"] == ["Multi", "Agent", "RL"]
    assert [w.joined for w in analysis.words[:2]] == [False, True]
    # the glued bracket is split: 'models(LLMs' would hide the acronym
    assert "LLMs" in [w.text for w in analysis.words]
    sentence = {w.text: w.sentence for w in analysis.words if w.field == "abstract"}
    assert (sentence["Large"], sentence["GNNs"], sentence["Second"]) == (0, 0, 1)


def test_acronym_definitions_found_and_false_ones_refused(nlp):
    text = (
        "We study graph neural networks (GNNs) and multi-agent reinforcement learning (MARL). "
        "This works well (BEST) on large language models (LLMs)."
    )
    analysis = analyse(nlp(text), None, text)
    assert analysis.acronyms == {
        "GNN": ("graph", "neural", "network"),
        "MARL": ("multi", "agent", "reinforcement", "learning"),
        "LLM": ("large", "language", "model"),
    }
    assert find_acronyms(analysis.words[:3]) == {}
