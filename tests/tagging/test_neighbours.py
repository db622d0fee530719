"""Candidate areas from a paper's nearest papers: exact, batch-independent neighbours that never
include the paper itself nor a near-copy of it, votes a person can check (the papers are named),
and the shipped index made from the shipped data by the shipped first-stage weigher."""

from __future__ import annotations

import numpy as np
import pytest

from tagger import Paper, Tagger
from tagger.config import TaggerConfig
from tagger.io.readers import read_papers
from tagger.language import vectors
from tagger.tagging.model import FittedModel
from tagger.tagging.neighbours import NeighbourIndex, abstract_key, neighbour_votes
from tagger.tagging.proposing import propose_paper
from tagger.tagging.reading import Reader
from tagger.tagging.votes import NO_VOTES
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import MINI_TAXONOMY, ROOT, HashEmbedder, candidates, model_dir

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SHIPPED = [
    (
        "n1",
        "Message passing on molecules",
        "graph neural networks over molecules and atoms",
        {"graphs.gnn": 0.95},
    ),
    (
        "n2",
        None,
        "graph neural networks for atoms in molecules",
        {"graphs.gnn": 0.9, "graphs": 0.97},
    ),
    ("n3", "Policies", "agents learn policies from reward in games", {"rl": 0.92}),
]


def _index(tmp_path, rows=SHIPPED):
    embedder = HashEmbedder()
    encoded = [vectors.encode(v) for v in embedder.embed([r[2] for r in rows])]
    index = NeighbourIndex.build(
        [(r[0], r[1], r[2], code) for r, code in zip(rows, encoded, strict=True)],
        [r[3] for r in rows],
        about={"model": embedder.name},
    )
    path = tmp_path / "index.npz"
    index.save(path)
    return path


def test_the_index_round_trips_and_a_paper_never_finds_itself(tmp_path):
    path = _index(tmp_path)
    index = NeighbourIndex.load(path)
    assert index.ids == ("n1", "n2", "n3") and index.titles == (
        "Message passing on molecules",
        "",
        "Policies",
    )
    assert index.tags_of(1) == {"graphs": pytest.approx(0.97), "graphs.gnn": pytest.approx(0.9)}
    assert index.serves("test/hash-64") and not index.serves(
        "sentence-transformers/all-MiniLM-L6-v2 (onnx-int8)"
    )
    # the transformer's space, not the table distilled from it
    shipped = FittedModel.load().part("corpus")
    assert shipped.serves("sentence-transformers/all-MiniLM-L6-v2 (onnx-int8)")
    assert shipped.serves("sentence-transformers/all-MiniLM-L6-v2 (torch)")
    assert not shipped.serves("sentence-transformers/all-MiniLM-L6-v2 (static)")
    code = index.codes[0]
    [near] = index.nearest([code], [abstract_key(SHIPPED[0][2])], 3)
    assert [j for j, _ in near] == [1, 2]  # itself left out, by its abstract
    # nor with its spacing, case or punctuation changed, nor under another text with its vector
    edited = "  Graph  neural networks, over MOLECULES and atoms. "
    assert abstract_key(edited) == abstract_key(SHIPPED[0][2])
    [again] = index.nearest([code], [abstract_key("another text")], 3)
    assert [j for j, _ in again] == [1, 2]
    near_copy = code.copy()
    near_copy[0] += 1 if near_copy[0] < 127 else -1
    [alone] = index.nearest([near_copy], [abstract_key("another text")], 3)
    assert 0 not in [j for j, _ in alone]


def test_neighbours_do_not_depend_on_the_batch(tmp_path):
    index = NeighbourIndex.load(_index(tmp_path))
    queries = [
        vectors.decode(vectors.encode(v))
        for v in HashEmbedder().embed(["graph atoms", "reward games", "molecules"])
    ]
    keys = [abstract_key(str(k)) for k in range(3)]
    together = index.nearest(queries, keys, 2)
    alone = [index.nearest([q], [k], 2)[0] for q, k in zip(queries, keys, strict=True)]
    assert together == alone


def test_neighbours_propose_an_area_no_rule_found_and_are_named(tmp_path):
    fitted_with = TaggerConfig(neighbours=2, judged_neighbours=0)
    model = model_dir(tmp_path / "model", MINI_TAXONOMY, fitted_with, corpus=_index(tmp_path))
    config = TaggerConfig(model=str(model), neighbours=2, judged_neighbours=0, min_score=0.0)
    tagger = Tagger.from_taxonomy(MINI_TAXONOMY, config, embedder=HashEmbedder())
    paper = Paper(abstract="neural networks over molecules and atoms")  # no rule fires
    [found] = candidates(tagger, [paper])
    proposed = {c.area: c for c in found}
    assert {"graphs", "graphs.gnn"} <= proposed.keys()
    gnn = proposed["graphs.gnn"]
    assert gnn.features["evidence"] == 0 and gnn.features["corpus_count"] == 1.0
    assert gnn.features["judged_share"] == 0  # no judged neighbours read
    assert gnn.features["corpus_share"] > 0.9
    assert gnn.features["corpus_top"] == pytest.approx(0.95)
    tagged = tagger.tag(paper)
    named = {tag.id: [n.id for n in tag.neighbours] for tag in tagged.tags}
    # every listed graph area names the two papers that agree (tags >= 0.7), nearest first
    [near] = tagger.learned.neighbour_indexes["corpus"][0].nearest(
        [vectors.decode(tagged.vector)], [abstract_key(paper.abstract)], 2
    )
    nearest_first = [("n1", "n2")[j] for j, _ in near]
    graph_tags = [area for area in named if area.startswith("graphs")]
    assert graph_tags and all(named[area] == nearest_first for area in graph_tags)
    for tag in tagged.tags:
        for neighbour in tag.neighbours:
            assert 0 < neighbour.similarity <= 1


def test_votes_leave_out_areas_the_taxonomy_does_not_have(tmp_path):
    rows = [("x", None, "graph atoms", {"graphs.gnn": 0.9, "gone.area": 0.99})]
    index = NeighbourIndex.load(_index(tmp_path, rows))
    said = neighbour_votes("corpus", index, [(0, 0.8)], load_taxonomy(MINI_TAXONOMY))
    assert said.proposed() == {"graphs", "graphs.gnn"}
    assert said.features("graphs")["corpus_share"] == pytest.approx(0.9)
    assert said.features("rl") == {
        "corpus_share": 0.0,
        "corpus_exact": 0.0,
        "corpus_top": 0.0,
        "corpus_count": 0.0,
        "corpus_best": 0.0,
    }


def test_the_shipped_index_holds_the_data_papers_in_no_judged_set():
    """The packaged model's neighbours are the abstracts of the data files its record names, each
    once, less every judged paper (sealed ones included): a judged paper's neighbours are never
    itself, and no sealed paper reaches an index."""
    model = FittedModel.load()
    index = model.part("corpus")
    names = model.record["fitted_on"]["index_papers"]
    assert names == ["corpus-2020-2023.jsonl", "iclr2025-keywords.jsonl"]
    judged = {
        abstract_key(p.abstract)
        for name in ("judged.jsonl", "sealed.jsonl")
        for p in read_papers(ROOT / "judged" / name)
    }
    abstracts = {
        abstract_key(p.abstract) for name in names for p in read_papers(ROOT / "data" / name)
    }
    assert set(index.keys.tolist()) == abstracts - judged
    assert len(index) == len(set(index.keys.tolist()))
    assert index.about["space"] == MINILM
    assert index.codes.shape == (len(index), 384) and index.codes.dtype == np.int8


@pytest.mark.models
def test_shipped_entries_are_what_the_first_stage_makes_of_them(embedder):
    """Five index papers read again and weighed by the first-stage weigher: the same vectors, the
    same confident areas (scores >= 0.5) as the index holds."""
    model = FittedModel.load()
    index, first = model.part("corpus"), model.part("rules")
    reader = Reader(load_taxonomy(), TaggerConfig(), embedder=embedder)
    papers = list(read_papers(ROOT / "data" / "iclr2025-keywords.jsonl"))
    position = {key: k for k, key in enumerate(index.keys.tolist())}
    papers = [p for p in papers if abstract_key(p.abstract) in position][:5]
    assert len(papers) == 5
    for paper, reading in zip(papers, reader.read(papers), strict=True):
        k = position[abstract_key(paper.abstract)]
        assert index.ids[k] == paper.id
        assert np.array_equal(vectors.decode(reading.vector), index.codes[k])
        proposal = propose_paper(reading, NO_VOTES, reader.taxonomy, reader.config)
        scores = {
            c.area: round(first.right(c.features), 4)
            for c in proposal.candidates
            if reader.taxonomy.facet(c.area) is None and first.right(c.features) >= 0.5
        }
        assert scores == pytest.approx(index.tags_of(k), abs=1e-4)
