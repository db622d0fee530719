"""The public surface: every name `from tagger import` offers resolves, and the private parts of
other libraries tagger reads are still there and still mean what tagger reads them as (their
versions are bounded in pyproject.toml: these tests say when a new release breaks them)."""

from __future__ import annotations

import numpy as np

import tagger


def test_every_public_name_resolves_and_is_listed_once():
    assert len(tagger.__all__) == len(set(tagger.__all__))
    for name in tagger.__all__:
        assert getattr(tagger, name) is not None, name
    assert set(tagger.PUBLIC) <= set(dir(tagger))


def test_trees_exported_from_scikit_learn_predict_as_it_does():
    """language.trees reads HistGradientBoostingClassifier's fitted trees from its private
    ``_predictors`` (scikit-learn has no public view of them): the exported trees must give the
    classifier's own probabilities."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from tagger.language.trees import TREE_SETTINGS, fitted_trees

    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 3))
    y = (x[:, 0] + x[:, 1] * x[:, 2] + rng.standard_normal(400) * 0.3 > 0).astype(int)
    names = ("a", "b", "c")
    rows = [dict(zip(names, row, strict=True)) for row in x.tolist()]
    trees = fitted_trees(rows, y.tolist(), names=names)
    reference = HistGradientBoostingClassifier(
        **TREE_SETTINGS, early_stopping=False, random_state=0
    ).fit(x, y)
    ours = trees.predict(rows)
    assert np.allclose(ours, reference.predict_proba(x)[:, 1], atol=1e-9)
    assert 0.2 < ours.mean() < 0.8  # a real model, not a constant
