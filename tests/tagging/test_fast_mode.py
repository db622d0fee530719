"""The fast mode (``--embedding-backend static``) reads fits of its own space, shipped beside the
default's (config.packaged_fit): the weigher, neighbour indexes and area model of
tagger/data/model-static and the keyphrase model keyphrases-static.json, all fitted on the static
table's vectors; the default backends read tagger/data/model and keyphrases.json."""

from __future__ import annotations

import pytest

from tagger import Paper, Tagger, TaggerConfig
from tagger.config import packaged_fit
from tagger.language.keyphrases import AcceptanceModel
from tagger.tagging.model import FittedModel

FAST = TaggerConfig(embedding_backend="static")


def test_each_space_has_its_own_packaged_fits():
    assert packaged_fit("model", "onnx-int8") == "model"
    assert packaged_fit("model", "torch") == "model"
    assert packaged_fit("model", "static") == "model-static"
    assert packaged_fit("keyphrases.json", "static") == "keyphrases-static.json"
    default, fast = FittedModel.load(), FittedModel.load(backend="static")
    assert default.where.name == "model" and fast.where.name == "model-static"
    assert default.record["space"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert fast.record["space"] == "sentence-transformers/all-MiniLM-L6-v2 (static)"
    assert default.identity != fast.identity
    same = ("judged", "labels", "papers", "index_papers", "excluded")
    assert all(  # the same judged papers, index papers and sealed split left out
        fast.record["fitted_on"][key] == default.record["fitted_on"][key] for key in same
    )
    slow_phrases, fast_phrases = AcceptanceModel.load(), AcceptanceModel.load(backend="static")
    assert fast_phrases is not slow_phrases
    assert fast_phrases.about["fitted_on"] == slow_phrases.about["fitted_on"]


@pytest.mark.models
def test_the_fast_mode_tags_with_its_neighbours_and_area_model():
    abstract = (
        "We study offline reinforcement learning for robotic manipulation. Our method learns a "
        "conservative value function from logged demonstrations and improves the policy "
        "without further interaction, outperforming behaviour cloning on six manipulation tasks."
    )
    with Tagger.from_taxonomy(config=FAST) as tagger:
        learned = tagger.learned
        assert learned.model.where.name == "model-static" and learned.serving
        assert set(learned.neighbour_indexes) == {"corpus", "judged"}  # in its space: both are read
        assert learned.area_model is not None
        assert tagger.reader.keyphrases.model is AcceptanceModel.load(backend="static")
        [record] = tagger.tag_batch([Paper(id="p1", abstract=abstract)])
    assert record.provenance.embedding_model.endswith("(static)")
    assert record.provenance.model == learned.identity
    assert record.tags and record.tags[0].path[0] == "rl"
    assert any(tag.neighbours for tag in record.tags)  # checkable evidence: papers that support it
