"""The spaCy component, in a real spaCy pipeline: with the stand-in embedder in the fast lane,
and once with the real model (test_the_component_with_the_real_model)."""

from __future__ import annotations

import pytest
import spacy

import tagger.tagging.spacy_component  # noqa: F401  (registers the factory)

from ..conftest import MINI_TAXONOMY

TEXT = (
    "Multi-agent reinforcement learning (MARL) is hard. We use graph neural networks (GNNs) "
    "with message passing, and our MARL agents coordinate."
)


def test_component_puts_tags_keyphrases_and_evidence_spans_on_the_doc():
    nlp = spacy.blank("en")
    nlp.add_pipe("taxonomy_tagger", config={"taxonomy": str(MINI_TAXONOMY), "min_score": 0.0})
    doc = nlp(TEXT)
    ids = [tag.id for tag in doc._.area_tags]
    assert {"rl.multi-agent", "graphs.gnn"} <= set(ids)  # their parents are in their paths
    assert {area for tag in doc._.area_tags for area in tag.path} >= {"rl", "graphs"}
    assert doc._.keyphrases and doc._.keyphrases[0].normalized
    spans = doc.spans["area_evidence"]
    assert {(span.text, span.label_) for span in spans} >= {
        ("Multi-agent reinforcement learning", "rl.multi-agent"),
        ("MARL", "rl.multi-agent"),
        ("graph neural networks", "graphs.gnn"),
    }
    docs = list(nlp.pipe([TEXT, "", "We bake bread."]))
    assert [bool(d._.area_tags) for d in docs] == [True, False, False]
    assert [t.id for t in docs[0]._.area_tags] == ids


@pytest.mark.models
def test_the_component_with_the_real_model():
    """The same pipeline as users build it: the component loads the default embedder itself."""
    nlp = spacy.blank("en")
    nlp.add_pipe("taxonomy_tagger", config={"taxonomy": str(MINI_TAXONOMY)})
    doc = nlp(TEXT)
    assert {"rl.multi-agent", "graphs.gnn"} <= {tag.id for tag in doc._.area_tags}
    assert "multi-agent reinforcement learning" in [k.text.lower() for k in doc._.keyphrases]
