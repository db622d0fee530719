"""Which candidates are listed, and in what order: a threshold that behaves (a lower --min-score
lists a superset, with the same scores), specific areas before the areas above them, a parent or
a catch-all not repeated when a more specific area is likely, and every paper with a tag."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger import Paper, Tagger
from tagger.config import TaggerConfig
from tagger.io.readers import read_papers
from tagger.tagging.listing import _stepping_aside, select, select_facet
from tagger.tagging.model import FittedModel
from tagger.tagging.proposing import AreaCandidate
from tagger.taxonomy.loading import load_taxonomy, parse_taxonomy

from ..conftest import EXAMPLES, MINI_TAXONOMY, HashEmbedder, candidates

TREE = parse_taxonomy(
    """version: "1"
areas:
  - {id: lm, name: Language models, aliases: [language model]}
  - {id: lm.general, name: LMs in general, parent: lm, fallback: true, aliases: [llm]}
  - {id: lm.agents, name: LM agents, parent: lm, aliases: [agents]}
  - {id: lm.agents.tools, name: Tool use, parent: lm.agents, aliases: [tools]}
  - {id: rl, name: RL, aliases: [reinforcement learning]}
"""
)


class _Scored:
    """A stand-in model: a score by area, as a weigher's models give them (one row, or many)."""

    def __init__(self, by_area) -> None:
        self._by_area = by_area

    def __call__(self, features):
        return self._by_area(features["area"])

    def scores(self, rows):
        return [self(row) for row in rows]


class Scores:
    """A stand-in weigher: each candidate's right and main scores, by area."""

    def __init__(self, right: dict[str, float], main: dict[str, float] | None = None) -> None:
        main = main or {}
        self.right = _Scored(right.__getitem__)
        self.main = _Scored(lambda area: main.get(area, right[area]))

    def weigh(self, candidates):
        rows = [candidate.features for candidate in candidates]
        return self.right.scores(rows), self.main.scores(rows)


def _listed(right, main=None, **settings):
    """What select lists."""
    found = [AreaCandidate(area, [], 0.0, 0.0, {"area": area}) for area in right]
    config = TaggerConfig(**settings)
    return select(found, Scores(right, main), TREE, config)


def test_a_parent_is_not_listed_when_an_area_below_it_is_likely():
    listed = _listed({"lm": 0.99, "lm.agents": 0.9, "lm.agents.tools": 0.4, "rl": 0.8})
    assert [area for area, _ in listed] == ["lm.agents", "rl"]
    # below specific_at, the parent stays: at a low threshold it is listed beside its child
    listed = _listed({"lm": 0.99, "lm.agents": 0.6}, min_score=0.5)
    assert [area for area, _ in listed] == ["lm.agents", "lm"]  # the specific area first


def test_a_catch_all_is_not_listed_when_a_sibling_or_one_below_it_is_likely():
    assert [a for a, _ in _listed({"lm.general": 0.95, "lm.agents.tools": 0.8})] == [
        "lm.agents.tools"
    ]
    assert [a for a, _ in _listed({"lm.general": 0.95, "lm.agents": 0.5})] == ["lm.general"]


def test_every_paper_with_a_candidate_gets_its_likeliest_tag():
    assert _listed({"rl": 0.2, "lm": 0.3}) == [("lm", 0.3)]
    assert _listed({"rl": 0.2, "lm": 0.3}, min_tags=0) == []
    assert _listed({}) == []


def test_max_tags_keeps_the_likeliest_and_order_is_main_first():
    right = {"rl": 0.9, "lm.agents": 0.8, "lm.agents.tools": 0.75}
    main = {"rl": 0.1, "lm.agents": 0.2, "lm.agents.tools": 0.9}
    assert [a for a, _ in _listed(right, main, max_tags=2, specific_at=0.95)] == [
        "lm.agents",  # its subtree's main (0.2) is above rl's, and tools (0.75) was cut
        "rl",
    ]
    assert [a for a, _ in _listed(right, main, specific_at=0.95)] == [
        "lm.agents.tools",
        "lm.agents",  # after the area below it, which leads its subtree
        "rl",
    ]


def test_a_root_the_paper_is_mainly_about_steps_aside_for_the_likeliest_area_below_it():
    right = {"lm": 0.95, "lm.agents": 0.3, "lm.agents.tools": 0.55, "rl": 0.9}
    main = {"lm": 0.8, "lm.agents": 0.2, "lm.agents.tools": 0.3, "rl": 0.4}
    stepped = _listed(right, main, step_aside_at=0.5)
    assert stepped == [("lm.agents.tools", 0.55), ("lm", 0.95), ("rl", 0.9)]  # its own score
    assert [a for a, _ in _listed(right, main)] == ["lm.agents.tools", "lm", "rl"]  # default 0.4
    off = {"step_aside_at": 1.0}
    assert [a for a, _ in _listed(right, main, **off)] == ["lm", "rl"]
    # the likeliest area below must score step_aside_at
    assert [a for a, _ in _listed(right, main, step_aside_at=0.6)] == ["lm", "rl"]
    # only below the root of what the paper is mainly about: here rl, with nothing below it
    mainly_rl = main | {"rl": 0.9}
    assert [a for a, _ in _listed(right, mainly_rl)] == ["rl", "lm"]
    # with max_tags listed, it takes the place of the least likely
    assert _listed(right, main, max_tags=2) == [("lm.agents.tools", 0.55), ("lm", 0.95)]


scores = st.dictionaries(
    st.sampled_from(["lm", "lm.general", "lm.agents", "lm.agents.tools", "rl"]),
    st.floats(0, 1),
    min_size=0,
    max_size=5,
)


@given(
    scores,
    scores,
    st.floats(0, 1),
    st.floats(0, 1),
    st.integers(0, 2),
    st.integers(1, 4),
)
def test_a_lower_threshold_lists_a_superset_with_the_same_scores(
    right, main, low, high, least, most
):
    main = {area: main.get(area, score) for area, score in right.items()}
    low, high = min(low, high), max(low, high)
    settings = {"min_tags": least, "max_tags": most, "step_aside_at": 0.5}
    at_low = dict(_listed(right, main, min_score=low, **settings))
    at_high = dict(_listed(right, main, min_score=high, **settings))
    assert at_high.items() <= at_low.items()


@pytest.fixture(scope="module")
def real_candidates():
    """Every candidate of the shipped paper-list abstracts, with the shipped taxonomy and weigher
    (HashEmbedder: no neighbours, real rules and spaCy)."""
    tagger = Tagger.from_taxonomy(embedder=HashEmbedder())
    papers = list(read_papers(EXAMPLES / "icml2025-abstracts.txt"))
    return tagger, candidates(tagger, papers)


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1))
def test_on_real_papers_a_lower_threshold_keeps_every_tag_and_score(real_candidates, a, b):
    tagger, found = real_candidates
    low, high = min(a, b), max(a, b)
    weigher = FittedModel.load().part("weigher")
    taxonomy = tagger.taxonomy
    for paper in found:
        topics = [c for c in paper if taxonomy.facet(c.area) is None]
        facets = [c for c in paper if taxonomy.facet(c.area) is not None]
        for choose, group in ((select, topics), (select_facet, facets)):
            at_low = dict(choose(group, weigher, taxonomy, replace(tagger.config, min_score=low)))
            at_high = dict(choose(group, weigher, taxonomy, replace(tagger.config, min_score=high)))
            assert at_high.items() <= at_low.items()


def test_tagging_end_to_end_at_two_thresholds_agrees(real_candidates):
    tagger, _ = real_candidates
    papers = list(read_papers(EXAMPLES / "icml2025-abstracts.txt"))[:6]
    low = Tagger(tagger.taxonomy, TaggerConfig(min_score=0.3), embedder=HashEmbedder())
    high = Tagger(tagger.taxonomy, TaggerConfig(min_score=0.8), embedder=HashEmbedder())
    typed = 0
    for a, b in zip(low.tag_many(papers), high.tag_many(papers), strict=True):
        assert {(t.id, t.score) for t in b.tags} <= {(t.id, t.score) for t in a.tags}
        assert {(t.id, t.score) for t in b.facets} <= {(t.id, t.score) for t in a.facets}
        assert a.tags  # every paper is about something (its likeliest area at least)
        typed += bool(a.facets)
    # a kind is said only when likely (select_facet): most papers, not necessarily all
    assert typed >= len(papers) // 2


def test_every_contribution_type_is_a_candidate_of_every_paper():
    tagger = Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder())
    [found] = candidates(tagger, [Paper(abstract="We bake bread and measure its crust.")])
    assert {c.area for c in found} == {"type.theory", "type.dataset"}
    assert all(c.features["evidence"] == 0 for c in found)
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    assert taxonomy.facet("type.theory") == "type"


def test_a_root_never_steps_aside_when_turned_off_even_for_a_certain_child():
    taxonomy = load_taxonomy()
    kept, listable = ["rl"], ["rl", "rl.offline"]
    right = {"rl": 1.0, "rl.offline": 1.0}
    args = (kept, listable, right, "rl", taxonomy)
    assert _stepping_aside(*args, 0.5) == "rl.offline"  # on: the certain child leads
    assert _stepping_aside(*args, 1.0) is None  # off (the default): not even at a score of 1
