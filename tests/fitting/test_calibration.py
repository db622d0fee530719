"""Calibration: a monotone map of the weigher's scores fitted on held-out verdicts, so that a
score says how often such a tag is right; each fold's held-out figures calibrated by the other
folds' verdicts alone."""

from __future__ import annotations

import numpy as np
import pytest

from tagger.errors import TaggerError
from tagger.fitting.calibration import MIN_PAIRS, calibrate, cross_fitted, fit_map
from tagger.tagging.weigher import Calibrated, Model, Weigher, calibrated


def _overconfident(n: int, seed: int = 3) -> np.ndarray:
    """Scores whose tags are right about score**2 of the time: high scores run high."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0, 1, n)
    return np.column_stack([scores, (rng.uniform(0, 1, n) < scores**2).astype(float)])


def test_the_map_makes_a_score_the_share_of_its_tags_that_are_right():
    train, test = _overconfident(20_000), _overconfident(20_000, seed=4)
    points = fit_map(train)
    assert points is not None
    mapped = np.array([calibrated(s, *points) for s in test[:, 0]])
    for low in np.arange(0.1, 1.0, 0.1):  # the bins of tags scored alike, after the map
        inside = (mapped >= low) & (mapped < low + 0.1)
        assert inside.sum() >= 100
        assert abs(test[inside, 1].mean() - mapped[inside].mean()) < 0.05  # issue 43's bar
        before = (test[:, 0] >= low) & (test[:, 0] < low + 0.1)
        if 0.3 <= low <= 0.8:  # ... where they were not before
            assert abs(test[before, 1].mean() - test[before, 0].mean()) > 0.05


def test_the_map_keeps_the_order_of_scores_and_rises_where_the_fit_does():
    xs, ys = fit_map(_overconfident(5_000))
    assert list(xs) == sorted(xs) and len(set(xs)) == len(xs)
    assert all(a < b for a, b in zip(ys, ys[1:], strict=False))  # centred: no flat run
    assert all(a < b for a, b in zip(xs, xs[1:], strict=False))
    scores = np.linspace(0, 1, 501)
    mapped = [calibrated(s, xs, ys) for s in scores]
    assert all(a <= b for a, b in zip(mapped, mapped[1:], strict=False))
    assert len(set(mapped)) == len(mapped)  # two different scores stay two, ends too
    assert (xs[0], ys[0], xs[-1], ys[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert calibrated(-1.0, xs, ys) == 0.0 and calibrated(2.0, xs, ys) == 1.0


def test_with_few_verdicts_the_map_still_keeps_every_score_apart():
    points = fit_map(_overconfident(MIN_PAIRS))  # one block: its mean, joined to the ends
    assert points is not None and len(points[0]) == 3
    mapped = [calibrated(s, *points) for s in np.linspace(0, 1, 101)]
    assert all(a < b for a, b in zip(mapped, mapped[1:], strict=False))


def test_too_few_verdicts_leave_the_scores_as_they_are():
    weigher = _weigher()
    assert fit_map(_overconfident(MIN_PAIRS - 1)) is None
    assert calibrate(weigher, None) is weigher


def test_each_fold_is_calibrated_by_the_other_folds_verdicts_alone():
    pairs = [_overconfident(400, seed=k) for k in range(4)]
    maps = cross_fitted(pairs)
    for k, points in enumerate(maps):
        others = np.concatenate([p for j, p in enumerate(pairs) if j != k])
        assert points == fit_map(others)
    pairs[2][:, 1] = 1 - pairs[2][:, 1]  # fold 2's verdicts changed: its own map is not
    assert cross_fitted(pairs)[2] == maps[2]
    assert cross_fitted(pairs)[0] != maps[0]


def test_a_calibrated_weigher_is_written_and_read_back_whole(tmp_path):
    weigher = calibrate(_weigher(), fit_map(_overconfident(2_000)))
    assert isinstance(weigher.right, Calibrated)
    path = tmp_path / "weigher.json"
    weigher.save(path)
    again = Weigher.load(path)
    features = {"evidence": 1.3, "own": 0.2}
    assert again.right(features) == weigher.right(features)
    assert again.right(features) != weigher.right.model(features)
    assert again.right.names == ("evidence", "own")


def test_a_calibration_out_of_order_is_refused_naming_the_file(tmp_path):
    weigher = calibrate(_weigher(), ((0.1, 0.5, 0.9), (0.2, 0.6, 0.4)))
    path = tmp_path / "weigher.json"
    weigher.save(path)
    with pytest.raises(TaggerError, match=r"weigher\.json.*in order"):
        Weigher.load(path)


def _weigher() -> Weigher:
    model = Model(("evidence", "own"), (1.5, 0.5), -1.0, (0.0, 0.0), (1.0, 1.0))
    return Weigher(right=model, main=model, facets={"*": model}, about={})
