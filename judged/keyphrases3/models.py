"""The readers' and the authors' models the frontier's scripts fit (context.py, margins.py,
finetuned.py), each held out as frontier.py holds out: the readers' model (trees fitted to the
judges' codes) by source on the open papers, fitted on all of them for dev; the authors' model
(the same trees fitted to whether the authors list a phrase) on the 3,279 listed papers, its own
columns out of fold over five folds.

What the trees read, beside the features the keyphrase model reads:

- ``near``: context.py's neighbourhood columns;
- ``context``: a logistic regression over the context of the phrase's first occurrence (the
  paper's ``ctx``, context.contextual) and its own embedding, fitted to the model's target;
- ``priors``: what the phrase carries from other papers: for the readers' model, how the judges
  coded the same phrase (stemmed) in the other sources' papers (how often, the smoothed shares
  of GEN and ACCEPT); for the authors' model, how many listed papers carry it as a candidate and
  the smoothed share of those whose authors list it (KEA's keyphraseness).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from frontier import accepted, listed_by_authors, rows, trees

# the smoothing of the priors: as if a phrase never seen had been seen this often at these shares
CODED_WEIGHT, GEN_SHARE, ACCEPT_SHARE = 2.0, 0.70, 0.20
LISTED_WEIGHT, LISTED_SHARE = 5.0, 0.02


def out_of_fold(
    papers: Sequence[dict],
    fold: Sequence,
    fit: Callable[[list[dict]], object],
    apply: Callable[[object, dict], np.ndarray],
) -> list[np.ndarray]:
    """Each paper's ``apply(model, paper)`` with the model ``fit`` on the papers of other folds."""
    out: list = [None] * len(papers)
    for f in sorted(set(fold)):
        model = fit([p for p, g in zip(papers, fold, strict=True) if g != f])
        for n, (p, g) in enumerate(zip(papers, fold, strict=True)):
            if g == f:
                out[n] = apply(model, p)
    return out


def coded(papers: Sequence[dict]) -> tuple[Counter, Counter, Counter]:
    """How often each stemmed phrase was coded in ``papers``, and how often GEN and ACCEPT."""
    seen, generic, accept = Counter(), Counter(), Counter()
    for paper in papers:
        for c in paper["cands"]:
            if c["label"] is not None:
                seen[c["stem"]] += 1
                generic[c["stem"]] += c["label"] == "generic"
                accept[c["stem"]] += c["label"] == "accept"
    return seen, generic, accept


def coded_prior(paper: dict, counts: tuple[Counter, Counter, Counter]) -> np.ndarray:
    seen, generic, accept = counts
    return np.array(
        [
            [
                np.log1p(seen[c["stem"]]),
                (generic[c["stem"]] + CODED_WEIGHT * GEN_SHARE) / (seen[c["stem"]] + CODED_WEIGHT),
                (accept[c["stem"]] + CODED_WEIGHT * ACCEPT_SHARE)
                / (seen[c["stem"]] + CODED_WEIGHT),
            ]
            for c in paper["cands"]
        ]
    )


def listing(papers: Sequence[dict]) -> tuple[Counter, Counter]:
    """How many of ``papers`` carry each stemmed phrase as a candidate, and how many list it."""
    seen, listed = Counter(), Counter()
    for paper in papers:
        for c, y in zip(paper["cands"], listed_by_authors(paper), strict=True):
            seen[c["stem"]] += 1
            listed[c["stem"]] += int(y)
    return seen, listed


def listed_prior(paper: dict, counts: tuple[Counter, Counter]) -> np.ndarray:
    seen, listed = counts
    return np.array(
        [
            [
                np.log1p(seen[c["stem"]]),
                (listed[c["stem"]] + LISTED_WEIGHT * LISTED_SHARE)
                / (seen[c["stem"]] + LISTED_WEIGHT),
            ]
            for c in paper["cands"]
        ]
    )


def probability(model, paper: dict) -> np.ndarray:
    """``model``'s probability for each candidate of ``paper``, from ``embedded_with``."""
    return model.predict_proba(embedded_with(paper))[:, 1]


def unit(rows_: np.ndarray) -> np.ndarray:
    rows_ = np.asarray(rows_, dtype=np.float32)
    return rows_ / np.linalg.norm(rows_, axis=-1, keepdims=True)


def embedded_with(paper: dict) -> np.ndarray:
    return np.column_stack([paper["ctx"], unit(np.stack([c["vec"] for c in paper["cands"]]))])


def regression(papers: list[dict], target):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=3000).fit(
        np.vstack([embedded_with(p) for p in papers]), np.concatenate([target(p) for p in papers])
    )


def columns(paper: dict, *, near: bool, fitted=None, prior=None) -> np.ndarray:
    """A paper's columns for the trees: its features, then as chosen its neighbourhood, its
    context regression's probability and its prior."""
    parts = [rows(paper), *([paper["near"]] if near else [])]
    return np.column_stack(parts + [part for part in (fitted, prior) if part is not None])


def readers_columns(
    judged: list[dict], *, context: bool, near: bool = False, priors: bool = False
) -> Callable[[dict], np.ndarray]:
    """Each open paper's columns for the readers' trees, with the flags' columns; its context
    regression's probability and its coded prior are out of fold, by source."""
    sources = [p["source"] for p in judged]
    if context:
        readers_fit = out_of_fold(judged, sources, lambda ps: regression(ps, accepted), probability)
    if priors:
        by_source = {s: coded([p for p in judged if p["source"] != s]) for s in set(sources)}
    at = {id(p): n for n, p in enumerate(judged)}
    return lambda p: columns(
        p,
        near=near,
        fitted=readers_fit[at[id(p)]] if context else None,
        prior=coded_prior(p, by_source[p["source"]]) if priors else None,
    )


def readers_held_out(judged: list[dict], own: Callable[[dict], np.ndarray]):
    """The readers' trees over ``own``'s columns, each source's open papers scored by trees
    fitted on the other sources': ``(held out, fit)``, where ``fit(papers)`` fits the trees on
    the columns of ``papers``."""

    def fit(papers):
        return trees(
            np.vstack([own(p) for p in papers]), np.concatenate([accepted(p) for p in papers])
        )

    sources = [p["source"] for p in judged]
    held = out_of_fold(judged, sources, fit, lambda model, p: model.predict_proba(own(p))[:, 1])
    return held, fit


def scores(judged, dev, listed, *, context: bool, near: bool = False, priors: bool = False):
    """The readers' model on the open papers (held out by source) and on dev, and the authors'
    model on both: ``((readers on judged, on dev), (authors on judged, on dev))``, one array of
    probabilities a paper, with the columns the flags choose (the module's docstring)."""
    own = readers_columns(judged, context=context, near=near, priors=priors)
    held, fit = readers_held_out(judged, own)
    model = fit(judged)
    if context:
        on_all = regression(judged, accepted)
    if priors:
        all_coded = coded(judged)
    readers = (
        held,
        [
            model.predict_proba(
                columns(
                    p,
                    near=near,
                    fitted=probability(on_all, p) if context else None,
                    prior=coded_prior(p, all_coded) if priors else None,
                )
            )[:, 1]
            for p in dev
        ],
    )

    fold = [n % 5 for n in range(len(listed))]
    if context:
        listed_fit = out_of_fold(
            listed, fold, lambda ps: regression(ps, listed_by_authors), probability
        )
        on_listed = regression(listed, listed_by_authors)
    if priors:
        counts = out_of_fold(listed, fold, listing, lambda counted, p: counted)
        all_listed = listing(listed)
    model = trees(
        np.vstack(
            [
                columns(
                    p,
                    near=near,
                    fitted=listed_fit[n] if context else None,
                    prior=listed_prior(p, counts[n]) if priors else None,
                )
                for n, p in enumerate(listed)
            ]
        ),
        np.concatenate([listed_by_authors(p) for p in listed]),
    )
    listing_of = lambda p: model.predict_proba(  # noqa: E731
        columns(
            p,
            near=near,
            fitted=probability(on_listed, p) if context else None,
            prior=listed_prior(p, all_listed) if priors else None,
        )
    )[:, 1]
    return readers, ([listing_of(p) for p in judged], [listing_of(p) for p in dev])
