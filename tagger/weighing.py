"""The learned part of tagging: it weighs the evidence rules found, and nothing else.

Every candidate area of a paper (one its rules, or a sub-area's, fired on) is described by the
few numbers in FEATURES; logistic models read them. ``right`` gives the probability that a
researcher would accept the area as a tag of the paper: a tag's ``score``, calibrated on the judged
set (judged/). ``main`` says how much the paper is mainly about the area: the order tags are
listed in. A facet's values (the contribution types) have a model each where the judged set
holds enough of them, and share one otherwise: the probability that the value is right. The
models are small (a weight per feature) and ship as data/weigher.json, with a record of what
they were fitted on; ``python -m tagger.calibrate`` fits them again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from . import packaged
from .errors import TaggerError

# What the models read about a candidate area; scoring.py computes each.
FEATURES = (
    "evidence",  # log(1 + the area's evidence: its own, its best sub-area's, half the others')
    "own",  # log(1 + the evidence of its own rules)
    "from_below",  # the share of its evidence that comes from sub-areas
    "hits",  # log(1 + distinct places a rule fired)
    "rules",  # log(1 + distinct rules that fired)
    "title",  # a rule fired in the title
    "first_sentence",  # ... in the abstract's first sentence
    "strong",  # an alias, acronym or pattern fired (not only cues)
    "strong_title",  # ... in the title
    "keyphrase",  # the best rank of a keyphrase that holds a hit (1 = the first, 0 = none)
    "related_work",  # share of the evidence in sentences about other work
    "examples",  # share in lists of examples ('such as A, B or C')
    "evaluation",  # share in sentences about experiments and evaluation
    "spread",  # the share of the abstract's sentences that hold evidence
    "earliest",  # 1 - where the first evidence in the abstract is (1: at its start)
    "similarity",  # cosine of the paper's embedding (its opening) and the area's description
    "similarity_gap",  # that cosine minus the best one among the paper's candidates
    "relative",  # the area's evidence over the most any candidate has
    "sibling_rank",  # 1 / (1 + sibling areas with more evidence)
    "depth",  # 0 for a top-level area, 1 below it, ...
    "leaf",  # the area has no sub-areas
)
MODELS = ("right", "main")
ANY_FACET = "*"  # the facet model for a value that has none of its own
DEFAULT_PATH = "weigher.json"


@dataclass(frozen=True)
class Model:
    """A logistic model over named features: ``sigmoid(bias + sum(weight * (x - mean) /
    scale))``. The weigher's read FEATURES; keyphrases.py has one over its own."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    means: tuple[float, ...]
    scales: tuple[float, ...]

    def __call__(self, features: Mapping[str, float]) -> float:
        z = self.bias + sum(
            w * (features[name] - m) / s
            for name, w, m, s in zip(self.names, self.weights, self.means, self.scales, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def as_dict(self) -> dict[str, Any]:
        return {
            name: {"weight": w, "mean": mu, "scale": s}
            for name, w, mu, s in zip(
                self.names, self.weights, self.means, self.scales, strict=True
            )
        } | {"(bias)": self.bias}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], names: Sequence[str]) -> Model:
        return cls(
            names=tuple(names),
            weights=tuple(float(raw[f]["weight"]) for f in names),
            bias=float(raw["(bias)"]),
            means=tuple(float(raw[f]["mean"]) for f in names),
            scales=tuple(float(raw[f]["scale"]) or 1.0 for f in names),
        )


@dataclass(frozen=True)
class Weigher:
    """The models, and what they were fitted on."""

    right: Model
    main: Model
    facets: dict[str, Model]  # a facet value's own model, by area id; ANY_FACET for the others
    about: dict[str, Any]

    def facet(self, area: str, features: Mapping[str, float]) -> float:
        """The probability that facet value ``area`` (type.theory, ...) is right."""
        return (self.facets.get(area) or self.facets[ANY_FACET])(features)

    @classmethod
    def load(cls, path: str | Path | None = None) -> Weigher:
        """The weigher at ``path``, or the one shipped with tagger."""
        return _load(str(path) if path else "")

    def fitted_on(self, path: str | Path) -> bool:
        """Whether this weigher was fitted on the judged set in the file at ``path``."""
        return packaged.fitted_on(self.about, path)

    def as_dict(self) -> dict[str, Any]:
        return (
            {"about": self.about}
            | {name: getattr(self, name).as_dict() for name in MODELS}
            | {"facet": {area: m.as_dict() for area, m in self.facets.items()}}
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.as_dict(), indent=1) + "\n", encoding="utf-8")


@cache
def _load(path: str) -> Weigher:
    try:
        data = packaged.read_json(path, DEFAULT_PATH)
        models = {name: Model.from_dict(data[name], FEATURES) for name in MODELS}
        facets = {area: Model.from_dict(raw, FEATURES) for area, raw in data["facet"].items()}
        facets[ANY_FACET]  # noqa: B018 - required
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TaggerError(f"cannot read the weigher {path or DEFAULT_PATH}: {exc!r}") from None
    return Weigher(**models, facets=facets, about=data.get("about", {}))


def fitted(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[int],
    *,
    c: float = 1.0,
    names: Sequence[str] = FEATURES,
) -> Model:
    """A logistic model fitted to feature rows and 0/1 labels (scikit-learn, L2)."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    x = np.array([[row[name] for name in names] for row in rows], dtype=float)
    means, scales = x.mean(axis=0), x.std(axis=0)
    scales[scales == 0] = 1.0
    fit = LogisticRegression(C=c, max_iter=2000).fit((x - means) / scales, np.array(labels))
    return Model(
        names=tuple(names),
        weights=tuple(float(w) for w in fit.coef_[0]),
        bias=float(fit.intercept_[0]),
        means=tuple(float(m) for m in means),
        scales=tuple(float(s) for s in scales),
    )


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
        return 1.0 / (1.0 + np.exp(-np.clip(raw, -50.0, 50.0)))

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
        return cls(names=tuple(names), baseline=float(raw["baseline"]), trees=tuple(raw["trees"]))


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
