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


LABELLED = [
    {
        "id": "fitted-on",
        "abstract": "Multi-agent reinforcement learning (MARL) with value decomposition.",
        "primary_area": "reinforcement learning",
        "judged": {"areas": ["rl.multi-agent"], "main": ["rl.multi-agent"]},
    },
    {
        "id": "indexed",
        "abstract": "Graph neural networks (GNNs) with message passing for molecules.",
        "primary_area": "learning on graphs and other geometries & topologies",
        "judged": {"areas": ["graphs.gnn"], "main": ["graphs.gnn"]},
    },
    {
        "id": "unseen",
        "abstract": "Policy gradient methods for reinforcement learning in robotics.",
        "primary_area": "reinforcement learning",
        "judged": {"areas": ["rl"], "main": ["rl"]},
    },
]


def _model_that_saw(tmp_path, fitted, indexed):
    """A model directory whose judged-paper index holds ``fitted`` and whose neighbour index
    holds ``indexed`` (abstracts)."""
    import json

    from tagger.language import vectors
    from tagger.tagging.neighbours import NeighbourIndex

    from ..conftest import MINI_TAXONOMY, HashEmbedder, model_dir

    def index(name, abstracts):
        codes = [vectors.encode(v) for v in HashEmbedder().embed(abstracts)]
        made = NeighbourIndex.build(
            [
                (f"{name}{k}", None, a, c)
                for k, (a, c) in enumerate(zip(abstracts, codes, strict=True))
            ],
            [{"rl": 0.9}] * len(abstracts),
            about={"model": HashEmbedder().name},
        )
        made.save(tmp_path / f"{name}.npz")
        return tmp_path / f"{name}.npz"

    model = model_dir(
        tmp_path / "model",
        MINI_TAXONOMY,
        judged=index("judged", fitted),
        corpus=index("corpus", indexed),
    )
    papers = tmp_path / "labelled.jsonl"
    papers.write_text("".join(json.dumps(r) + "\n" for r in LABELLED))
    return model, papers


def test_a_model_knows_the_papers_it_was_fitted_on_and_those_it_indexed(tmp_path):
    from tagger.tagging.model import FittedModel

    texts = [r["abstract"] for r in LABELLED]
    model, _ = _model_that_saw(tmp_path, [f"  {texts[0]}\n"], texts[1:2])
    assert FittedModel.load(model).known(texts) == ["fitted", "indexed", ""]


def test_eval_gives_the_figures_on_the_papers_no_part_of_the_model_saw(tmp_path):
    """Both modes: how many papers the model saw, and the figures on the others beside the
    whole (a figure in sample is said to be)."""
    import json

    from ..conftest import MINI, MINI_TAXONOMY, model_dir, run

    texts = [r["abstract"] for r in LABELLED]
    model, papers = _model_that_saw(tmp_path, texts[:1], texts[1:2])
    labels = run("eval", str(papers), "--scheme", "iclr", "--model", str(model), *MINI)
    assert labels.exit_code == 0, labels.stderr
    assert (
        "Of the 3 labelled papers, 1 were judged papers the model was fitted on and 1 are in its "
        "neighbour index (in sample: optimistic).\nOn the other 1, which no part of it saw:"
    ) in labels.stdout
    data = json.loads(
        run("eval", str(papers), "--scheme", "iclr", "--model", str(model), "--json", *MINI).stdout
    )
    assert data["known_to_the_model"] == {"fitted": 1, "indexed": 1}
    assert [r["papers"] for r in data["unseen"]] == [1]

    judged = run("eval", "--judged", str(papers), "--model", str(model), "--json", *MINI)
    assert judged.exit_code == 0, judged.stderr
    report = json.loads(judged.stdout)
    assert report["known_to_the_model"] == {"fitted": 1, "indexed": 1}
    assert report["unseen"]["papers"] == 1 and report["papers"] == 3
    text = run("eval", "--judged", str(papers), "--model", str(model), *MINI).stdout
    assert (
        "Of these papers, 1 were judged papers the model was fitted on and 1 are in its neighbour "
        "index (in sample)" in text
    )

    alone = model_dir(tmp_path / "alone", MINI_TAXONOMY)  # no index: it saw no paper
    clean = run("eval", "--judged", str(papers), "--model", str(alone), "--json", *MINI)
    assert json.loads(clean.stdout)["known_to_the_model"] == {}
