"""The keyphrase model's trees (language.trees): gradient-boosted trees exported from scikit-learn
predict what scikit-learn predicts, and round-trip through JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tagger.language.trees import TREE_SETTINGS, Trees, fitted_trees


def _data(n, seed):
    x = np.random.default_rng(seed).normal(size=(n, 3))
    return x, (x[:, 0] * x[:, 1] + x[:, 2] > 0).astype(int)  # an interaction: trees' business


def test_exported_trees_predict_what_scikit_learn_predicts():
    from sklearn.ensemble import HistGradientBoostingClassifier

    names = ("a", "b", "c")
    x, y = _data(600, 0)
    trees = fitted_trees([dict(zip(names, row, strict=True)) for row in x], y, names=names)
    fit = HistGradientBoostingClassifier(**TREE_SETTINGS, early_stopping=False, random_state=0).fit(
        x, y
    )
    test, truth = _data(200, 1)
    rows = [dict(zip(names, row, strict=True)) for row in test]
    ours = trees.predict(rows)
    np.testing.assert_allclose(ours, fit.predict_proba(test)[:, 1], atol=1e-12)
    assert trees(rows[0]) == pytest.approx(ours[0])
    assert ((ours > 0.5) == truth).mean() > 0.85  # it learned the interaction
    again = Trees.from_dict(json.loads(json.dumps(trees.as_dict())), names)
    np.testing.assert_array_equal(again.predict(rows), ours)
    with pytest.raises(ValueError, match="read"):
        Trees.from_dict(trees.as_dict(), ("a", "c", "b"))


def test_every_weigher_model_scores_a_batch_exactly_as_it_scores_each_row():
    from tagger.tagging.weigher import Calibrated, fitted

    names = ("a", "b", "c")
    x, y = _data(400, 2)
    rows = [dict(zip(names, row, strict=True)) for row in x]
    trees = fitted_trees(rows, y, names=names)
    logistic = fitted(rows, list(y), names=names)
    for model in (trees, logistic, Calibrated(trees, (0.2, 0.5, 0.9), (0.1, 0.6, 0.95))):
        assert model.scores(rows[:150]) == [model(row) for row in rows[:150]]  # to the last bit
        assert model.scores([]) == []


def _walked(trees: Trees, row) -> float:
    """One row down each tree in turn, node by node, as the trees are drawn."""
    from tagger.language.trees import sigmoid

    raw = trees.baseline
    for tree in trees.trees:
        node = 0
        while not tree["leaf"][node]:
            value = row[trees.names[tree["feature"][node]]]
            node = tree["left"][node] if value <= tree["threshold"][node] else tree["right"][node]
        raw += tree["value"][node]
    return sigmoid(raw)


def test_trees_walked_for_many_rows_at_once_give_the_bits_of_one_row_walked_alone():
    from tagger.language.keyphrases import AcceptanceModel

    shipped = AcceptanceModel.load(None)
    names = ("a", "b", "c")
    x, y = _data(300, 3)
    fitted = fitted_trees([dict(zip(names, row, strict=True)) for row in x], y, names=names)
    generator = np.random.default_rng(4)
    for trees in (shipped.accept, shipped.ranking.readers, shipped.ranking.authors, fitted):
        values = generator.normal(size=(150, len(trees.names)))
        values[generator.random(values.shape) < 0.3] = 0.0  # on a threshold, or near
        values[::17, 0] = np.nan  # not a number: no threshold holds it, so to the right
        rows = [dict(zip(trees.names, row, strict=True)) for row in values.tolist()]
        assert trees.scores(rows) == [_walked(trees, row) for row in rows]
