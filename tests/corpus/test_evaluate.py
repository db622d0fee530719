"""The metrics themselves, on tiny hand-made cases whose answers are worked out by hand."""

from __future__ import annotations

import pytest

from tagger.corpus.evaluate import (
    area_report,
    keyphrase_f1,
    mean_keyphrase_f1,
    ranked_labels,
    stem_phrase,
)
from tagger.records import AreaTag


def _tag(area, **crosswalk):
    return AreaTag(id=area, name=area, path=[area], score=0.5, evidence=[], crosswalk=crosswalk)


RL = _tag("rl", icml=["Reinforcement Learning"])
MARL = _tag("rl.multi_agent", icml=["Reinforcement Learning->Multi-agent"])
GNN = _tag("graph.gnn", icml=["Deep Learning->Graph Neural Networks"])
NONE = _tag("other")


def test_ranked_labels_levels():
    tags = [RL, NONE, GNN, MARL]
    assert ranked_labels(tags, "icml") == [
        "Reinforcement Learning",
        "Deep Learning->Graph Neural Networks",
        "Reinforcement Learning->Multi-agent",
    ]
    assert ranked_labels(tags, "icml", level="area") == ["Reinforcement Learning", "Deep Learning"]
    # a tagged sub-area takes its area's place at the subtopic level
    assert ranked_labels(tags, "icml", level="subtopic") == [
        "Reinforcement Learning->Multi-agent",
        "Deep Learning->Graph Neural Networks",
    ]
    assert ranked_labels([NONE], "icml") == []


def test_a_contribution_types_label_comes_before_the_topics():
    dataset = _tag("type.dataset", iclr=["datasets and benchmarks"])
    theory = _tag("type.theory")  # no crosswalk: no label
    rl = _tag("rl", iclr=["reinforcement learning"])
    assert ranked_labels([rl], "iclr", facets=[theory, dataset]) == [
        "datasets and benchmarks",
        "reinforcement learning",
    ]


def test_area_report_counts():
    pairs = [
        ("A", ["A", "B"]),  # right at 1
        ("A", ["B", "C", "A"]),  # right at 3 only
        ("B", ["B"]),  # right at 1
        ("C", []),  # untagged
    ]
    report = area_report(pairs)
    assert report.papers == 4
    assert report.coverage == 0.75
    assert report.acc_at_1 == 0.5
    assert report.acc_at_3 == 0.75
    assert report.labels_per_paper == (2 + 3 + 1 + 0) / 4
    stats = {s.label: s for s in report.per_label}
    assert (stats["A"].support, stats["A"].predicted, stats["A"].correct) == (2, 1, 1)
    assert stats["A"].precision == 1.0 and stats["A"].recall == 0.5
    assert stats["A"].f1 == pytest.approx(2 / 3)
    assert (stats["B"].support, stats["B"].predicted, stats["B"].correct) == (1, 2, 1)
    assert stats["C"].f1 == 0.0
    assert report.confusions == [("A", "B", 1)]


def test_stemming_makes_variants_equal():
    assert stem_phrase("Graph Neural Networks") == stem_phrase("graph neural network")
    assert stem_phrase("multi-agent reinforcement learning") == "multi agent reinforc learn"
    assert stem_phrase("") == ""


def test_keyphrase_f1_by_hand():
    gold = ["reinforcement learning", "policy gradients", "robotics"]
    predicted = ["Policy Gradient", "robot arms", "reinforcement-learning", "benchmarks"]
    # top 2: one match of 2 predicted, 3 gold: P=1/2, R=1/3 -> F1=0.4
    assert keyphrase_f1(predicted, gold, 2) == pytest.approx(0.4)
    # top 4: two matches: P=2/4, R=2/3 -> F1=4/7
    assert keyphrase_f1(predicted, gold, 4) == pytest.approx(4 / 7)
    # duplicates after stemming count once; fewer predictions than k use their own count
    assert keyphrase_f1(["robotics", "Robotics"], gold, 5) == pytest.approx(
        2 * 1 * (1 / 3) / (1 + 1 / 3)
    )
    assert keyphrase_f1([], gold, 5) == 0.0
    assert keyphrase_f1(["x"], [], 5) == 0.0


def test_mean_keyphrase_f1_skips_papers_without_keywords():
    runs = [(["a b"], ["a b"]), (["c"], ["d"]), (["e"], [])]
    assert mean_keyphrase_f1(runs, 5) == 0.5
