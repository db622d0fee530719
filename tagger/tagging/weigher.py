"""The learned part of tagging: it weighs the evidence rules and neighbours found, and nothing
else.

Every candidate area of a paper (tagging.proposing) is described by the few numbers in
WEIGHER_FEATURES; logistic models read them. ``right`` gives the probability that a researcher would
accept the area as a tag of the paper: a tag's ``score``, calibrated on the judged set
(judged/). ``main`` says how much the paper is mainly about the area: the order tags are listed
in. A facet's values (the contribution types) have a model each where the judged set holds
enough of them, and share one otherwise: the probability that the value is right. The models are
small (a weight per feature) and are part of a model directory (tagging.model), with a record
of what they were fitted on; the first stage, which reads rule evidence alone and tags the
papers the neighbours are found among, is there too. ``tagger fit`` fits both (tagger.fitting
says how).
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import WEIGHER_C
from ..io import packaged
from ..io.files import ByContent
from .neighbours import FORMER_KINDS
from .votes import VOTE_FEATURES

# What the models read about a candidate area; tagging.proposing computes each. The first-stage
# weigher (which tags the shipped papers the neighbours come from) reads RULE_FEATURES; the
# weigher that tags reads WEIGHER_FEATURES, the neighbours' votes among them.
RULE_FEATURES = (
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
    "root_share",  # the share of the paper's evidence (over all roots) under this area's root
    "facet_share",  # for a facet's value: its share of the evidence for the facet's values
    "facet_other",  # ... log(1 + the evidence of the likeliest other value)
)
WEIGHER_FEATURES = RULE_FEATURES + VOTE_FEATURES
MODELS = ("right", "main")
ANY_FACET = "*"  # the facet model for a value that has none of its own


@dataclass(frozen=True)
class Model:
    """A logistic model over named features: ``sigmoid(bias + sum(weight * (x - mean) /
    scale))``. The weigher's read WEIGHER_FEATURES; the keyphrase model (language.trees) is
    another kind."""

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

    def scores(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """The probability of each row (each as :meth:`__call__` gives it)."""
        return [self(row) for row in rows]

    def as_dict(self) -> dict[str, Any]:
        return {
            name: {"weight": w, "mean": mu, "scale": s}
            for name, w, mu, s in zip(
                self.names, self.weights, self.means, self.scales, strict=True
            )
        } | {"(bias)": self.bias}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], names: Sequence[str] | None = None) -> Model:
        """A model as :meth:`as_dict` writes it: the features it reads, in its order (a model of
        trees, written with ``"kind": "trees"``, is read as language.trees.Trees; a calibrated
        one, ``"kind": "calibrated"``, as :class:`Calibrated`)."""
        if raw.get("kind") == "trees":
            from ..language.trees import Trees

            return Trees.from_dict(raw, raw["names"])  # type: ignore[return-value]
        if raw.get("kind") == "calibrated":
            return Calibrated.from_dict(raw)  # type: ignore[return-value]
        names = [name for name in raw if name != "(bias)"] if names is None else names
        return cls(
            names=tuple(names),
            weights=tuple(float(raw[f]["weight"]) for f in names),
            bias=float(raw["(bias)"]),
            means=tuple(float(raw[f]["mean"]) for f in names),
            scales=tuple(float(raw[f]["scale"]) or 1.0 for f in names),
        )


@dataclass(frozen=True)
class Calibrated:
    """A model's probability mapped through a non-decreasing piecewise-linear function (points
    ``xs`` -> ``ys``, flat beyond the ends), fitted on held-out scores and what readers said of
    them (tagger.fitting.calibration), so that a score of 0.8 is right about 8 times in 10."""

    model: Any  # Model or language.trees.Trees
    xs: tuple[float, ...]
    ys: tuple[float, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.model.names)

    def __call__(self, features: Mapping[str, float]) -> float:
        return calibrated(self.model(features), self.xs, self.ys)

    def scores(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """The calibrated probability of each row, the model scoring them all at once."""
        return [calibrated(score, self.xs, self.ys) for score in self.model.scores(rows)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": "calibrated",
            "model": _written(self.model),
            "x": list(self.xs),
            "y": list(self.ys),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Calibrated:
        xs, ys = tuple(map(float, raw["x"])), tuple(map(float, raw["y"]))
        if not xs or len(xs) != len(ys) or list(xs) != sorted(xs) or list(ys) != sorted(ys):
            raise ValueError("a calibration's points must be as many, and in order")
        return cls(Model.from_dict(raw["model"]), xs, ys)


def calibrated(score: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    """``score`` through the piecewise-linear function of points ``xs`` -> ``ys`` (xs
    increasing), flat beyond its ends."""
    if score <= xs[0]:
        return ys[0]
    if score >= xs[-1]:
        return ys[-1]
    k = bisect.bisect_right(xs, score)
    x0, x1, y0, y1 = xs[k - 1], xs[k], ys[k - 1], ys[k]
    return y0 + (y1 - y0) * (score - x0) / (x1 - x0) if x1 > x0 else y1


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

    def weigh(self, candidates: Sequence[Any]) -> tuple[list[float], list[float]]:
        """Each candidate's (anything with ``features``) right and main scores."""
        rows = [candidate.features for candidate in candidates]
        return self.right.scores(rows), self.main.scores(rows)

    @classmethod
    def load(cls, path: str | Path) -> Weigher:
        """The weigher in the file at ``path`` (a model directory's: tagging.model)."""
        return _WEIGHERS.load(path)

    @classmethod
    def from_bytes(cls, data: bytes, digest: str, where: str | Path) -> Weigher:
        """What the file ``where`` holds, its bytes ``data`` (whose sha256 is ``digest``)."""
        return _WEIGHERS.of(data, digest, where)

    def fitted_on(self, path: str | Path) -> bool:
        """Whether this weigher was fitted on the judged set in the file at ``path``."""
        return packaged.fitted_on(self.about, path)

    def as_dict(self) -> dict[str, Any]:
        return (
            {"about": self.about}
            | {name: _written(getattr(self, name)) for name in MODELS}
            | {"facet": {area: _written(m) for area, m in self.facets.items()}}
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.as_dict(), indent=1) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Weighing:
    """The weigher of each area of a taxonomy a model serves: the fitted weigher for the areas
    the model was fitted for, and the first stage's, which reads rule evidence and similarity
    alone, for the areas it never saw (those an overlay adds, ``new``). The fitted weigher
    gives an area nobody judged a score near nil (no neighbour placed a paper there, the area
    model has no head for it), whatever its rules found; the first stage reads what they found,
    as it does for every area of a taxonomy no model was fitted for."""

    fitted: Weigher
    first_stage: Weigher
    new: frozenset[str]

    def weigher_of(self, area: str) -> Weigher:
        return self.first_stage if area in self.new else self.fitted

    def facet(self, area: str, features: Mapping[str, float]) -> float:
        return self.weigher_of(area).facet(area, features)

    def weigh(self, candidates: Sequence[Any]) -> tuple[list[float], list[float]]:
        """Each candidate's right and main scores, by its area's weigher."""
        right, main = self.fitted.weigh(candidates)
        new = [k for k, candidate in enumerate(candidates) if candidate.area in self.new]
        if new:
            first_right, first_main = self.first_stage.weigh([candidates[k] for k in new])
            for k, r, m in zip(new, first_right, first_main, strict=True):
                right[k], main[k] = r, m
        return right, main


class Weighed:
    """A weigher's scores of many papers' topic candidates, made in one call (a model of trees
    costs about as much for one paper's candidates as for a batch's), and read back by
    candidate: what listing them reads (tagging.listing), as it would read the weigher.
    ``candidates``: anything with ``area`` and ``features``; every one asked for later must be
    among them (the same objects)."""

    def __init__(self, weigher: Weigher | Weighing, candidates: Sequence[Any]) -> None:
        self.weigher = weigher
        right, main = weigher.weigh(candidates)
        self._scores = {
            id(candidate): (r, m) for candidate, r, m in zip(candidates, right, main, strict=True)
        }
        self._kept = candidates  # their ids stay theirs while this lives

    def facet(self, area: str, features: Mapping[str, float]) -> float:
        return self.weigher.facet(area, features)

    def weigh(self, candidates: Sequence[Any]) -> tuple[list[float], list[float]]:
        scores = [self._scores[id(candidate)] for candidate in candidates]
        return [r for r, _ in scores], [m for _, m in scores]


def _written(model: Any) -> dict[str, Any]:
    if hasattr(model, "as_weigher_model"):  # trees
        return model.as_weigher_model()
    return model.as_dict()


def _parse(data: bytes) -> Weigher:
    """The weigher in a file's bytes; ValueError if they hold none."""
    try:
        raw = packaged.parse_json(data)
        models = {name: Model.from_dict(_migrated(raw[name])) for name in MODELS}
        facets = {area: Model.from_dict(_migrated(m)) for area, m in raw["facet"].items()}
        facets[ANY_FACET]  # noqa: B018 - required
        read = {n for m in [*models.values(), *facets.values()] for n in m.names}
        unknown = read - set(WEIGHER_FEATURES)
        if unknown:
            raise ValueError(f"it reads features this version does not make: {sorted(unknown)}")
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(repr(exc)) from None
    return Weigher(**models, facets=facets, about=raw.get("about", {}))


_WEIGHERS = ByContent(_parse, "the weigher")


def _migrated(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A model as written, its features named as this version names them: a model fitted before
    the neighbour kinds were named read 'nb_share' where it now reads 'corpus_share'
    (neighbours.FORMER_KINDS)."""
    if raw.get("kind") == "trees":
        names = [_renamed(name) for name in raw["names"]]
        return dict(raw) | {"names": names}
    if raw.get("kind") == "calibrated":
        return dict(raw) | {"model": _migrated(raw["model"])}
    return {_renamed(name): value for name, value in raw.items()}


def _renamed(name: str) -> str:
    kind, _, rest = name.partition("_")
    return f"{FORMER_KINDS[kind]}_{rest}" if kind in FORMER_KINDS and rest else name


def fitted(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[int],
    *,
    c: float = WEIGHER_C,
    names: Sequence[str] = WEIGHER_FEATURES,
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
