"""The area model combines its blocks as it was fitted to: a model fitted now by the mean of
their logits, one fitted before 0.9.0 by the mean of their probabilities; a combination this
version does not know is refused, naming the file."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tagger.errors import TaggerError
from tagger.fitting.areas import AreaBlocks
from tagger.tagging.areas import AreaModel

AREAS = ["llm", "llm.finetuning", "rl"]
TEXTS = [
    "We fine-tune a large language model with low-rank adapters.",
    "A policy gradient agent learns to play games from rewards.",
]


def _blocks() -> AreaBlocks:
    rng = np.random.default_rng(7)
    vocabulary = ["language", "model", "policy", "rewards", "fine", "tune", "low rank"]
    idf = rng.uniform(1.0, 3.0, len(vocabulary))
    text = (
        vocabulary,
        idf,
        frozenset({"we", "a"}),
        rng.normal(0, 3, (7, 3)),
        rng.normal(0, 1, 3),
        1.0,
    )
    return AreaBlocks(AREAS, rng.normal(0, 4, (8, 3)), rng.normal(0, 1, 3), 4.0, text)


def _codes() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    return [rng.integers(-64, 64, 8).astype(np.int8) for _ in TEXTS]


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def _logits(model: AreaModel) -> tuple[np.ndarray, np.ndarray]:
    """Each block's logits, computed apart from AreaModel.probabilities."""
    x = np.stack(_codes()).astype(np.float64)
    norms = np.sqrt((x * x).sum(axis=1))
    embedding = (x @ (model.weights.astype(np.float64) * model.scales[:, None]).T) / norms[
        :, None
    ] + model.biases
    assert model.text is not None
    return embedding, model.text.logits(TEXTS)


def test_a_model_fitted_now_says_so_and_scores_the_sigmoid_of_its_blocks_mean_logit(tmp_path):
    model = _blocks().model(papers=40)
    assert model.about["combine"] == "logit"
    path = tmp_path / "areas.npz"
    model.save(path)
    loaded = AreaModel.load(path)
    assert loaded.combine == "logit"
    embedding, text = _logits(loaded)
    for row, found in enumerate(loaded.probabilities(_codes(), TEXTS)):
        for k, area in enumerate(AREAS):
            wanted = _sigmoid((embedding[row, k] + text[row, k]) / 2)
            assert found[area] == pytest.approx(wanted, abs=1e-12)


def test_a_model_fitted_before_0_9_scores_the_mean_of_its_blocks_probabilities(tmp_path):
    fitted = _blocks().model(papers=40)
    about = {k: v for k, v in fitted.about.items() if k != "combine"}  # as 0.8.0 wrote it
    old = AreaModel(fitted.areas, fitted.weights, fitted.scales, fitted.biases, about, fitted.text)
    path = tmp_path / "areas.npz"
    old.save(path)
    loaded = AreaModel.load(path)
    assert loaded.combine == "probability"
    embedding, text = _logits(loaded)
    by_logit = fitted.probabilities(_codes(), TEXTS)
    for row, found in enumerate(loaded.probabilities(_codes(), TEXTS)):
        for k, area in enumerate(AREAS):
            wanted = (_sigmoid(embedding[row, k]) + _sigmoid(text[row, k])) / 2
            assert found[area] == pytest.approx(wanted, abs=1e-12)
    assert by_logit != loaded.probabilities(_codes(), TEXTS)  # the two readings differ


def test_a_model_without_a_text_block_is_its_embedding_block_either_way(tmp_path):
    blocks = _blocks()
    blocks.text = None
    model = blocks.model(papers=40)
    old = AreaModel(model.areas, model.weights, model.scales, model.biases, {}, None)
    assert model.probabilities(_codes()) == old.probabilities(_codes())


def test_a_combination_this_version_does_not_know_is_refused_naming_the_file(tmp_path):
    fitted = _blocks().model(papers=40)
    about = fitted.about | {"combine": "median"}
    newer = AreaModel(
        fitted.areas, fitted.weights, fitted.scales, fitted.biases, about, fitted.text
    )
    path = tmp_path / "areas.npz"
    newer.save(path)
    with pytest.raises(TaggerError, match=r"areas\.npz.*'median'"):
        AreaModel.load(path)
