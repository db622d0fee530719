"""The weigher (tagging.weigher): a logistic model is the formula it says it is and what
scikit-learn fits; a weigher round-trips through its file, reads the features of models fitted
before the neighbour kinds were named, picks a facet value's own model or the shared one, and
refuses a file that reads features this version does not make."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tagger.errors import TaggerError
from tagger.tagging.model import FittedModel
from tagger.tagging.weigher import ANY_FACET, WEIGHER_FEATURES, Model, Weigher, fitted

NAMES = ("evidence", "title", "corpus_share")


def _rows(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, len(NAMES)))
    y = (x[:, 0] + 0.5 * x[:, 2] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    return [dict(zip(NAMES, row, strict=True)) for row in x], y


@given(
    st.lists(st.floats(-5, 5), min_size=3, max_size=3),
    st.lists(st.floats(-5, 5), min_size=3, max_size=3),
    st.floats(-5, 5),
)
def test_a_model_is_the_logistic_formula_over_standardised_features(weights, values, bias):
    means, scales = (0.5, -1.0, 2.0), (1.0, 0.5, 4.0)
    model = Model(NAMES, tuple(weights), bias, means, scales)
    z = bias + sum(
        w * (v - m) / s for w, v, m, s in zip(weights, values, means, scales, strict=True)
    )
    expected = 1 / (1 + math.exp(-max(-50.0, min(50.0, z))))
    assert model(dict(zip(NAMES, values, strict=True))) == pytest.approx(expected, abs=1e-12)


def test_a_fitted_model_gives_scikit_learns_probabilities():
    from sklearn.linear_model import LogisticRegression

    rows, labels = _rows(400, 0)
    model = fitted(rows, labels, c=0.3, names=NAMES)
    x = np.array([[row[n] for n in NAMES] for row in rows])
    scaled = (x - x.mean(axis=0)) / x.std(axis=0)
    reference = LogisticRegression(C=0.3, max_iter=2000).fit(scaled, labels)
    test, _ = _rows(50, 1)
    xt = (np.array([[row[n] for n in NAMES] for row in test]) - x.mean(axis=0)) / x.std(axis=0)
    ours = [model(row) for row in test]
    np.testing.assert_allclose(ours, reference.predict_proba(xt)[:, 1], atol=1e-9)
    assert model.weights[0] > 0 and model.weights[2] > 0  # what the labels were made of


def _weigher(facets=None):
    rows, labels = _rows(300, 2)
    right = fitted(rows, labels, names=NAMES)
    main = fitted(rows, 1 - labels, names=NAMES)
    return Weigher(right, main, facets or {ANY_FACET: right, "type.theory": main}, {"x": 1})


def test_a_weigher_round_trips_through_its_file(tmp_path):
    weigher = _weigher()
    weigher.save(tmp_path / "w.json")
    again = Weigher.load(tmp_path / "w.json")
    rows, _ = _rows(20, 3)
    for row in rows:
        assert again.right(row) == weigher.right(row) and again.main(row) == weigher.main(row)
        assert again.facet("type.theory", row) == weigher.main(row)  # its own model
        assert again.facet("type.survey", row) == weigher.right(row)  # the shared one
    assert again.about == {"x": 1}


def test_a_weigher_fitted_before_the_neighbour_kinds_were_named_reads_them_by_their_names(
    tmp_path,
):
    """Models of format 1 named the corpus neighbours' features nb_* and the judged ones jn_*:
    read, they are the same models under today's names."""
    shipped = FittedModel.load().part("weigher")
    raw = json.loads(json.dumps(shipped.as_dict()))
    old = json.dumps(raw).replace('"corpus_', '"nb_').replace('"judged_', '"jn_')
    assert '"nb_share"' in old and '"jn_share"' in old
    (tmp_path / "old.json").write_text(old)
    migrated = Weigher.load(tmp_path / "old.json")
    assert migrated.right.names == shipped.right.names
    assert set(migrated.right.names) <= set(WEIGHER_FEATURES)
    features = dict.fromkeys(WEIGHER_FEATURES, 0.3)
    assert migrated.right(features) == shipped.right(features)


def test_a_weigher_that_reads_features_this_version_does_not_make_is_refused(tmp_path):
    raw = _weigher().as_dict()
    raw["right"]["no_such_feature"] = {"weight": 1.0, "mean": 0.0, "scale": 1.0}
    (tmp_path / "w.json").write_text(json.dumps(raw))
    with pytest.raises(TaggerError, match=r"cannot read the weigher .*no_such_feature"):
        Weigher.load(tmp_path / "w.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(TaggerError, match="cannot read the weigher"):
        Weigher.load(tmp_path / "broken.json")
