"""Gradient-boosted decision trees as plain data: fitted with scikit-learn, shipped as JSON, read
with numpy alone (the keyphrase acceptance model is one)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any


@dataclass(frozen=True)
class Trees:
    """Gradient-boosted decision trees over named features (scikit-learn's
    HistGradientBoostingClassifier, exported to plain arrays): ``sigmoid(baseline + the leaf
    each tree sends the row to)``. Where features act together (a phrase authors often choose as
    a keyword, but mentioned once and in passing) trees find what one weight per feature cannot.
    """

    names: tuple[str, ...]
    baseline: float
    trees: tuple[dict[str, Any], ...]  # per tree: feature, threshold, left, right, leaf, value

    def __call__(self, features: Mapping[str, float]) -> float:
        return float(self.predict([features])[0])

    def scores(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """The probability of each row, all at once (each as :meth:`__call__` gives it)."""
        return self.predict(rows).tolist() if rows else []

    def predict(self, rows: Sequence[Mapping[str, float]]) -> Any:
        """The probability of each row, as a numpy array."""
        import numpy as np

        x = np.array([[row[name] for name in self.names] for row in rows], dtype=float)
        x = x.reshape(len(rows), len(self.names))
        raw = np.full(len(x), self.baseline)
        index = np.arange(len(x))
        for tree in self._arrays:
            node = np.zeros(len(x), dtype=np.intp)
            for _ in range(tree["depth"]):
                left = x[index, tree["feature"][node]] <= tree["threshold"][node]
                step = np.where(left, tree["left"][node], tree["right"][node])
                node = np.where(tree["leaf"][node], node, step)
            raw += tree["value"][node]
        return np.array([sigmoid(z) for z in raw.tolist()])

    def as_weigher_model(self) -> dict[str, Any]:
        """The trees as a weigher's model is written (tagging.weigher)."""
        return {"kind": "trees", **self.as_dict()}

    @cached_property
    def _arrays(self) -> list[dict[str, Any]]:
        import numpy as np

        return [
            {
                "feature": np.array(tree["feature"], dtype=np.intp),
                "threshold": np.array(tree["threshold"], dtype=float),
                "left": np.array(tree["left"], dtype=np.intp),
                "right": np.array(tree["right"], dtype=np.intp),
                "leaf": np.array(tree["leaf"], dtype=bool),
                "value": np.array(tree["value"], dtype=float),
                "depth": int(tree["depth"]),
            }
            for tree in self.trees
        ]

    def as_dict(self) -> dict[str, Any]:
        return {"names": list(self.names), "baseline": self.baseline, "trees": list(self.trees)}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], names: Sequence[str]) -> Trees:
        if list(raw["names"]) != list(names):
            raise ValueError(f"the trees read {raw['names']}, not {list(names)}")
        trees = tuple(raw["trees"])
        for number, tree in enumerate(trees):
            problem = _disagreement(tree, len(names))
            if problem:
                raise ValueError(f"its tree {number} {problem}")
        return cls(names=tuple(names), baseline=float(raw["baseline"]), trees=trees)


def sigmoid(z: float) -> float:
    """The logistic function by math.exp, one value at a time: numpy's exp is vectorised
    differently on different CPUs, and its last bit may differ from one to another."""
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


NODE_ARRAYS = ("feature", "threshold", "left", "right", "leaf", "value")


def _disagreement(tree: Any, features: int) -> str | None:
    """What in a tree's arrays disagrees (one entry a node; an inner node's feature one of the
    ``features`` named, its children nodes of the tree), or None: such a tree would fail, or
    read another feature, at tagging time."""
    if not isinstance(tree, dict) or not all(isinstance(tree.get(k), list) for k in NODE_ARRAYS):
        return f"is not {', '.join(NODE_ARRAYS)} lists of its nodes"
    nodes = len(tree["leaf"])
    for name in NODE_ARRAYS:
        if len(tree[name]) != nodes:
            return f"has {len(tree[name])} {name} entries for its {nodes} nodes"
    if not isinstance(tree.get("depth"), int) or tree["depth"] < 0:
        return "has no depth"
    for node in range(nodes):
        if tree["leaf"][node]:
            continue
        if not (0 <= tree["feature"][node] < features):
            return f"reads feature {tree['feature'][node]} of its {features} at node {node}"
        if not (0 <= tree["left"][node] < nodes and 0 <= tree["right"][node] < nodes):
            return f"sends node {node} to a node it does not have"
    return None


TREE_SETTINGS = {"max_depth": 3, "learning_rate": 0.1, "max_iter": 100}


def fitted_trees(
    rows: Sequence[Mapping[str, float]], labels: Sequence[int], *, names: Sequence[str]
) -> Trees:
    """Gradient-boosted trees fitted to feature rows and 0/1 labels (scikit-learn's
    HistGradientBoostingClassifier with TREE_SETTINGS, a fixed seed, no early stopping)."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.array([[row[name] for name in names] for row in rows], dtype=float)
    fit = HistGradientBoostingClassifier(**TREE_SETTINGS, early_stopping=False, random_state=0).fit(
        x, np.array(labels)
    )
    trees = []
    for (predictor,) in fit._predictors:  # one tree per round (binary: one class)
        nodes = predictor.nodes
        trees.append(
            {
                "feature": nodes["feature_idx"].tolist(),
                "threshold": nodes["num_threshold"].tolist(),
                "left": nodes["left"].tolist(),
                "right": nodes["right"].tolist(),
                "leaf": nodes["is_leaf"].astype(int).tolist(),
                "value": nodes["value"].tolist(),  # the learning rate is already applied
                "depth": int(nodes["depth"].max()),
            }
        )
    return Trees(
        names=tuple(names), baseline=float(fit._baseline_prediction.ravel()[0]), trees=tuple(trees)
    )
