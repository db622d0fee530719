"""Weighers, calibrations and listings compared on one fit's folds (issue 43): what the tags say,
held out by source group, when one thing is changed.

A whole ``tagger fit`` takes most of an hour; changing the weigher, its calibration or the
listing does not need one. ``keep`` runs ``tagger fit`` as the CLI does and keeps, for every
fold, the proposals its weigher was fitted on and those it measured (pickles in DIR, about
1.5 GB); ``measure`` then refits each fold's weigher on its own training proposals, calibrates
it by the other folds' held-out verdicts (fitting.calibration), lists each held-out paper and
measures the lot against the judged set, for each variant:

    python benchmarks/weighers.py keep DIR --judged judged/judged.jsonl \\
        --papers data/corpus-2020-2023.jsonl --papers data/iclr2025-keywords.jsonl \\
        --exclude judged/sealed.jsonl --cache DIR/cache       # ~45 min on 2 cores
    python benchmarks/weighers.py measure DIR               # ~1 min a variant, trees ~4
    python benchmarks/weighers.py first DIR                 # the first stage, held out

The first line of ``measure`` refits the weigher the fit made and must give the fit's own
held-out figures (it checks). Every figure is held out by source group; the sealed split is not
read.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from dataclasses import replace
from pathlib import Path

COLUMNS = (
    ("tag_precision", "precision"),
    ("papers_with_a_wrong_tag", "papers with a wrong tag"),
    ("area_recall", "recall"),
    ("area_recall_lenient", "recall, lenient"),
    ("first_tag_is_specific", "first tag most specific"),
    ("root_first_child_judged", "root first"),
)
# (label, learner, calibrated, settings, listing): listing "drop" drops a root when a child
# scores 0.3. The row made as the fit makes its weigher (its learner, calibrated, the default
# settings, the listing as it is) must give the fit's own held-out figures. Before 0.10.0 the
# root's likeliest child led only when the text named it: at 0.66, 0.894 / 0.151 / 0.655 / 0.754
# / 0.824 / root first 0.032 on the 3,900 of 0.9.0's fit, against 0.892 / 0.154 / 0.658 / 0.754 /
# 0.828 / 0.025 for any child.
VARIANTS = (
    ("logistic (0.7)", "logistic", False, {"step_aside_at": 1.0}, None),
    (
        "logistic, calibrated (0.66)",
        "logistic",
        True,
        {"min_score": 0.66, "step_aside_at": 1.0},
        None,
    ),
    ("logistic, calibrated (0.7)", "logistic", True, {"step_aside_at": 1.0}, None),
    (
        "logistic, calibrated, root's likeliest child first at 0.4 (0.66)",
        "logistic",
        True,
        {"min_score": 0.66},
        None,
    ),
    (
        "logistic, calibrated, a root dropped when a child scores 0.3 (0.66)",
        "logistic",
        True,
        {"min_score": 0.66, "step_aside_at": 1.0},
        "drop",
    ),
    ("trees (0.7)", "trees", False, {"step_aside_at": 1.0}, None),
    ("trees, calibrated (0.6)", "trees", True, {"min_score": 0.6, "step_aside_at": 1.0}, None),
    ("trees, calibrated (0.66)", "trees", True, {"min_score": 0.66, "step_aside_at": 1.0}, None),
    ("trees, calibrated (0.7)", "trees", True, {"step_aside_at": 1.0}, None),
    ("trees, calibrated (0.75)", "trees", True, {"min_score": 0.75, "step_aside_at": 1.0}, None),
    (
        "trees, calibrated, root's likeliest child first at 0.4 (0.6)",
        "trees",
        True,
        {"min_score": 0.6},
        None,
    ),
    (
        "trees, calibrated, root's likeliest child first at 0.4 (0.66)",
        "trees",
        True,
        {"min_score": 0.66},
        None,
    ),
    ("trees, calibrated, root's likeliest child first at 0.4 (0.7)", "trees", True, {}, None),
    (
        "trees, calibrated, a root dropped when a child scores 0.3 (0.7)",
        "trees",
        True,
        {"step_aside_at": 1.0},
        "drop",
    ),
)


def keep(directory: Path, fit_args: list[str]) -> None:
    """``tagger fit`` as the CLI runs it, keeping every call of the second stage (the papers,
    their proposals) and the fit's result, pickled in ``directory``."""
    from tagger.cli import main
    from tagger.fitting import fit as fitting
    from tagger.fitting import folds

    directory.mkdir(parents=True, exist_ok=True)
    calls = []
    second_stage = folds.second_stage

    def kept_stage(judged, indexes, chances, taxonomy, config):
        found = second_stage(judged, indexes, chances, taxonomy, config)
        calls.append(([item.paper.id for item in judged], found))
        return found

    fit_model = fitting.fit_model

    def kept_fit(*args, **kwargs):
        result = fit_model(*args, **kwargs)
        with (directory / "calls.pkl").open("wb") as out:
            pickle.dump(calls, out, protocol=5)
        with (directory / "result.pkl").open("wb") as out:
            pickle.dump(result, out, protocol=5)
        return result

    folds.second_stage = kept_stage
    fitting.fit_model = kept_fit
    sys.argv = ["tagger", "fit", *fit_args]
    main()


def measure(directory: Path, only: str | None) -> None:
    from tagger.config import TaggerConfig
    from tagger.corpus.judged import evaluate_judged
    from tagger.fitting import calibration
    from tagger.fitting import report as figures
    from tagger.fitting.weighing import SECOND_NAMES, fit_weigher, tagged
    from tagger.tagging import listing
    from tagger.taxonomy.loading import load_taxonomy

    with (directory / "result.pkl").open("rb") as f:
        result = pickle.load(f)
    with (directory / "calls.pkl").open("rb") as f:
        calls = pickle.load(f)
    taxonomy = load_taxonomy(None)  # the fit's taxonomy: the packaged one
    config = TaggerConfig()
    by_id = {item.paper.id: item for item in result.judged}
    judgments = {item.paper.id: item.judgment for item in result.judged}
    k = len(result.folds)
    calls = [(call[0], call[1]) for call in calls]  # the papers' ids, their proposals
    train, test = calls[0 : 2 * k : 2], calls[1 : 2 * k : 2]  # then the final fit's
    stood_in_for = listing._stood_in_for

    def root_dropped(area, right, taxonomy, specific_at):
        if taxonomy.by_id[area].parent is None and taxonomy.facet(area) is None:
            below = taxonomy.descendants(area) - {area}
            if any(b in right and right[b] >= 0.3 for b in below):
                return True
        return stood_in_for(area, right, taxonomy, specific_at)

    weighers: dict[tuple[str, bool], list] = {}

    def weighers_of(learner: str, calibrated: bool) -> list:
        if (learner, calibrated) not in weighers:
            if not calibrated:
                weighers[learner, False] = [
                    fit_weigher(
                        [by_id[i] for i in ids],
                        [p.candidates for p in proposals],
                        taxonomy,
                        names=SECOND_NAMES,
                        learner=learner,
                    )
                    for ids, proposals in train
                ]
            else:
                bare = weighers_of(learner, False)
                pairs = [
                    calibration.pairs_of([by_id[i] for i in ids], proposals, w, taxonomy)
                    for w, (ids, proposals) in zip(bare, test, strict=True)
                ]
                maps = calibration.cross_fitted(pairs)
                weighers[learner, True] = [
                    calibration.calibrate(w, m) for w, m in zip(bare, maps, strict=True)
                ]
        return weighers[learner, calibrated]

    print("| variant (min_score) | " + " | ".join(name for _, name in COLUMNS) + " | gap |")
    print("| --- " * (len(COLUMNS) + 2) + "|")
    for label, learner, calibrated, settings, variant in VARIANTS:
        if only and only not in label:
            continue
        listing._stood_in_for = root_dropped if variant == "drop" else stood_in_for
        listed_with = replace(config, **settings)
        records = [
            tagged(proposal, weigher, taxonomy, listed_with)
            for weigher, (_, proposals) in zip(weighers_of(learner, calibrated), test, strict=True)
            for proposal in proposals
        ]
        report = evaluate_judged(records, taxonomy, judgments=judgments)
        found = figures.summary(report)
        if (learner, calibrated, settings, variant) == (*the_fits(), {}, None):
            fitted = figures.summary(result.held_out)
            assert all(abs(found[key] - fitted[key]) < 1e-9 for key, _ in COLUMNS), (
                "the refitted weigher does not give the fit's own figures"
            )
            label += ": the fit's own, checked"
        cells = " | ".join(f"{found[key]:.3f}" for key, _ in COLUMNS)
        print(f"| {label} | {cells} | {report.largest_gap(100):.3f} |", flush=True)
    listing._stood_in_for = stood_in_for


def first_stage(directory: Path) -> None:
    """How well the first stage's scores say how often a tag is right, held out: each fold's
    first stage (rule evidence and similarity alone, what weighs an area no model was fitted
    for: an overlay's new area, every area of a taxonomy without a model) scoring the rule
    candidates of the papers it never saw, against the readers' verdicts, by tenth of score."""
    import numpy as np

    from tagger.fitting import calibration
    from tagger.taxonomy.loading import load_taxonomy

    with (directory / "result.pkl").open("rb") as f:
        result = pickle.load(f)
    taxonomy = load_taxonomy(None)

    class Rules:  # a paper's candidates from its rules alone, as pairs_of reads a proposal
        def __init__(self, candidates):
            self.candidates = candidates

    pairs = np.concatenate(
        [
            calibration.pairs_of(
                probe, [Rules(item.rules.candidates) for item in probe], fold.fitted.first, taxonomy
            )
            for fold in result.folds
            for probe in [[result.judged[i] for i in fold.test]]
        ]
    )
    print(f"{len(pairs):,} rule candidates judged right or wrong, each fold held out\n")
    print("| score | candidates | mean score | share right | gap |")
    print("| --- | --- | --- | --- | --- |")
    for low in np.arange(0, 1, 0.1):
        inside = (pairs[:, 0] >= low) & (pairs[:, 0] < low + 0.1 + 1e-12 * (low >= 0.9))
        if inside.any():
            score, right = pairs[inside, 0].mean(), pairs[inside, 1].mean()
            print(
                f"| {low:.1f}-{low + 0.1:.1f} | {inside.sum():,} | {score:.3f} | {right:.3f} | "
                f"{abs(score - right):.3f} |"
            )


def the_fits() -> tuple[str, bool]:
    """The fit's weigher: its learner, and whether it is calibrated."""
    from tagger.config import WEIGHER_LEARNER
    from tagger.fitting.folds import Settings

    return WEIGHER_LEARNER, Settings().calibrate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("keep", "measure", "first"))
    parser.add_argument("directory", type=Path)
    parser.add_argument("--only", help="measure the variants whose label holds this")
    args, rest = parser.parse_known_args()
    if args.what == "keep":
        keep(args.directory, rest)
    elif args.what == "first":
        first_stage(args.directory)
    else:
        measure(args.directory, args.only)


if __name__ == "__main__":
    main()
