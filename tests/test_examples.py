"""The shipped taxonomy on real and clear-cut abstracts, with the real model and spaCy."""

from __future__ import annotations

import pytest

from tagger import Paper
from tagger.io.readers import read_papers

from .conftest import EXAMPLES, candidates


@pytest.fixture(scope="module")
def examples(tagger):
    papers = [p for path in sorted(EXAMPLES.glob("*.txt")) for p in read_papers(path)]
    return list(tagger.tag_many(papers))


def test_example_abstracts_get_tags_with_exact_evidence(examples):
    assert len(examples) == 38
    # every paper gets a topic (min_tags 1); below min_score only its one likeliest, and the
    # shipped lists are clear enough that most papers have a likely tag
    assert all(tagged.tags for tagged in examples)
    assert sum(any(tag.score >= 0.7 for tag in tagged.tags) for tagged in examples) >= 35
    for tagged in examples:
        below = [tag for tag in tagged.tags if tag.score < 0.7]
        assert below == [] or below == tagged.tags == tagged.tags[:1]
        assert all(tag.score >= 0.7 for tag in tagged.facets)
        for tag in tagged.tags:
            # checkable evidence: rule hits in the text, or the judged or shipped papers behind
            # a tag the neighbours or the area model proposed. A contribution type the area
            # model alone finds likely names neither yet (the judged index keeps no types): a
            # known gap, so facets are not held to it here
            assert tag.evidence or tag.neighbours, (tagged.paper.id, tag.id)
        for tag in tagged.tags + tagged.facets:
            for ev in tag.evidence:
                source = tagged.paper.title if ev.field == "title" else tagged.paper.abstract
                assert source[ev.start : ev.end] == ev.text
        for phrase in tagged.keyphrases:
            for span in phrase.spans:
                assert 0 <= span.start < span.end <= len(tagged.paper.abstract)


def test_contribution_types_are_facets_with_their_own_evidence(examples):
    """Most shipped papers are typed; a type is never a topic tag, and never the bare facet."""
    assert sum(bool(tagged.facets) for tagged in examples) >= len(examples) // 2
    for tagged in examples:
        assert all(tag.path[0] != "type" for tag in tagged.tags)
        assert all(tag.path[0] == "type" and len(tag.path) == 2 for tag in tagged.facets)
        assert [t.score for t in tagged.facets] == sorted(
            (t.score for t in tagged.facets), reverse=True
        )


def test_a_theory_abstract_is_typed_theory(tagger):
    paper = Paper(
        title="Minimax regret bounds for linear bandits",
        abstract="We study stochastic linear bandits. We prove a regret upper bound of order "
        "d sqrt(T) and a matching lower bound, so the algorithm is minimax optimal. The analysis "
        "gives the first non-asymptotic guarantee for this setting.",
    )
    tagged = tagger.tag(paper)
    assert "type.theory" in [tag.id for tag in tagged.facets]
    assert "theory.bandits" in [tag.id for tag in tagged.tags]


def test_every_example_abstract_gets_a_candidate_topic_from_a_rule(tagger):
    """The rules propose a topic (not only a contribution type, which every paper is offered)
    for every shipped abstract, with evidence; the weigher decides what is listed."""
    papers = [p for path in sorted(EXAMPLES.glob("*.txt")) for p in read_papers(path)]
    for paper, found in zip(papers, candidates(tagger, papers), strict=True):
        topics = [c for c in found if tagger.taxonomy.facet(c.area) is None]
        assert any(c.features["evidence"] > 0 for c in topics), paper.abstract[:80]


# Abstracts written for these tests, each squarely in one area that no expert would dispute.
CLEAR_CUT = [
    (
        "rl.multi_agent",
        "rl",
        "multi-agent reinforcement learning",
        "We study cooperative multi-agent reinforcement learning, where several agents learn "
        "decentralized policies from a shared team reward. We propose a value decomposition method "
        "trained with centralized training and decentralized execution, and show that it improves "
        "coordination on the StarCraft Multi-Agent Challenge.",
    ),
    (
        "rl.offline",
        "rl",
        "offline reinforcement learning",
        "Offline reinforcement learning learns a policy from a fixed dataset of logged transitions "
        "without further interaction with the environment. We propose a conservative value "
        "estimate that penalizes out-of-distribution actions and evaluate it on D4RL locomotion.",
    ),
    (
        "graph.gnn",
        "graph",
        "graph neural networks",
        "Graph neural networks aggregate information from neighboring nodes through message "
        "passing. We analyze oversmoothing in deep graph neural networks and propose a residual "
        "normalization that keeps node representations distinct on node classification benchmarks.",
    ),
    (
        "gen.diffusion",
        "gen",
        "diffusion models",
        "Diffusion models generate images by reversing a gradual noising process. We propose a "
        "sampler for denoising diffusion probabilistic models that needs ten network evaluations "
        "while matching the sample quality of a thousand-step sampler.",
    ),
    (
        "safety.llm",
        "safety",
        "jailbreak attacks",
        "Aligned large language models can still be manipulated by jailbreak attacks that elicit "
        "harmful content. We present an automated red teaming method that finds adversarial "
        "prompts, and a defense that detects them before the model responds.",
    ),
]


@pytest.mark.parametrize(
    ("child", "root", "phrase", "abstract"), CLEAR_CUT, ids=[case[0] for case in CLEAR_CUT]
)
def test_clear_cut_abstracts_get_their_area_first(tagger, child, root, phrase, abstract):
    tagged = tagger.tag(Paper(abstract=abstract))
    ids = [tag.id for tag in tagged.tags]
    assert ids[0] == child, ids  # the specific area first; its parent is in its path
    assert tagged.tags[0].path == [root, child]
    assert tagged.tags[0].score >= 0.9
    tag = next(t for t in tagged.tags if t.id == child)
    start = abstract.lower().index(phrase)
    spans = {(ev.start, ev.end) for ev in tag.evidence}
    # the evidence points at the words that name the area
    assert any(s < start + len(phrase) and start < e for s, e in spans), (spans, start)
    for ev in tag.evidence:
        assert abstract[ev.start : ev.end] == ev.text
