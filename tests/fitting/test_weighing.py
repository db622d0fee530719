"""The fit's steps (fitting.weighing), each on papers made by hand: which candidates the weigher's
models learn from and with which labels, which areas an index paper is tagged with, and what the
judged index holds."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tagger.corpus.judged import Judgment
from tagger.fitting import weighing
from tagger.fitting.papers import IndexPaper
from tagger.language import trees, vectors
from tagger.tagging.proposing import AreaCandidate
from tagger.tagging.weigher import ANY_FACET
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import MINI_TAXONOMY, HashEmbedder

TAXONOMY = load_taxonomy(MINI_TAXONOMY)
NAMES = ("evidence",)


def _candidate(area: str, x: float) -> AreaCandidate:
    return AreaCandidate(area, [], 0.0, 0.0, {"evidence": x})


def _judged(k: int, judgment: Judgment) -> SimpleNamespace:
    vector = vectors.encode(HashEmbedder().embed([f"paper {k} about things"])[0])
    paper = SimpleNamespace(id=f"p{k}", title=None, abstract=f"paper {k} about things")
    return SimpleNamespace(paper=paper, judgment=judgment, reading=SimpleNamespace(vector=vector))


@pytest.fixture
def learned(monkeypatch):
    """What each model of the weigher was fitted to: (rows, labels) by call, in order."""
    calls = []

    def fitted(rows, labels, *, names, c=None):
        calls.append(([row["evidence"] for row in rows], list(labels)))
        return weighing.never(names)

    monkeypatch.setattr(weighing, "fitted", fitted)  # the logistic models: the facets'
    monkeypatch.setattr(trees, "fitted_trees", fitted)  # right and main's, by default
    return calls


@pytest.mark.parametrize("learner", ["logistic", "trees"])
def test_the_weigher_learns_right_from_verdicts_main_from_the_main_area_and_types_apart(
    learned, learner
):
    judgment = Judgment(
        areas=("rl.multi-agent",), main=("rl.multi-agent",), acceptable=("graphs",),
        types=("theory",),
    )  # fmt: skip
    candidates = [
        _candidate("rl.multi-agent", 1.0),  # right, and the main area
        _candidate("rl", 2.0),  # above a right area: right too
        _candidate("graphs", 3.0),  # acceptable: left out of right
        _candidate("graphs.gnn", 4.0),  # wrong
        _candidate("type.theory", 5.0),  # the type named
        _candidate("type.dataset", 6.0),
    ]
    papers = [_judged(k, judgment) for k in range(weighing.MIN_EXAMPLES)]
    weigher = weighing.fit_weigher(
        papers, [candidates] * len(papers), TAXONOMY, names=NAMES, about={"x": 1}, learner=learner
    )
    facets, (right, main) = learned[:-2], learned[-2:]
    n = len(papers)
    assert right == ([1.0, 2.0, 4.0] * n, [1, 1, 0] * n)  # the acceptable one left out
    assert main == ([1.0, 2.0, 3.0, 4.0] * n, [1, 0, 0, 0] * n)  # every topic candidate
    # each type's own model when it has MIN_EXAMPLES right and wrong: here none has both, so
    # the one shared by every type (ANY_FACET) learns from both, and is the only facet model
    assert facets == [([5.0, 6.0] * n, [1, 0] * n)]
    assert set(weigher.facets) == {ANY_FACET} and weigher.about == {"x": 1}


def test_with_no_type_judged_no_type_is_ever_likely():
    judgment = Judgment(areas=("rl",), main=("rl",))
    papers = [_judged(k, judgment) for k in range(6)]
    found = [[_candidate("rl", 1.0 + k % 2), _candidate("graphs", float(k))] for k in range(6)]
    weigher = weighing.fit_weigher(papers, found, TAXONOMY, names=NAMES)
    assert weigher.facet("type.theory", {"evidence": 100.0}) < 1e-20


def test_an_index_paper_is_tagged_with_what_the_first_stage_finds_likely():
    right = SimpleNamespace(scores=lambda rows: [features["evidence"] for features in rows])
    first = SimpleNamespace(right=right)  # a first stage
    vector = vectors.encode(HashEmbedder().embed(["an index paper"])[0])
    topics = [
        ("rl", {"evidence": 0.9}),
        ("graphs", {"evidence": 0.5}),
        ("rl.x", {"evidence": 0.49}),
    ]
    paper = IndexPaper("i1", None, "an index paper", vector, topics, "corpus.jsonl")
    index = weighing.index_of([paper], first, about={"space": "test"})
    assert index.tags_of(0) == {"rl": pytest.approx(0.9), "graphs": pytest.approx(0.5)}
    assert weighing.FIRST_STAGE_AT == 0.5 and index.about == {"space": "test"}


def test_the_judged_index_holds_the_readers_areas_and_the_acceptable_ones_at_half():
    judgment = Judgment(areas=("rl.multi-agent",), main=("rl.multi-agent",), acceptable=("graphs",))
    index = weighing.judged_index_of([_judged(0, judgment)], about={})
    assert index.tags_of(0) == {"rl.multi-agent": 1.0, "graphs": 0.5}
    assert index.ids == ("p0",)
