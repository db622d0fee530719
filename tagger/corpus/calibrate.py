"""Fit the weigher (tagging.weigher) to the judged set, or the keyphrase acceptance model
(language.keyphrases) to the judged keyphrase set, cross-validated by source, and write it.

    python -m tagger.corpus.calibrate          # judged/judged.jsonl -> tagger/data/weigher.json
    python -m tagger.corpus.calibrate --report docs/calibration.md --no-write
    python -m tagger.corpus.calibrate --keyphrases --report docs/keyphrase-calibration.md
        # judged/keyphrases.jsonl -> tagger/data/keyphrases.json

Every candidate area of every judged paper (an area one of its rules proposed) is a row of
features; the ``right`` model learns which rows are right tags (neutral ones left out), the
``main`` model which are the judged main area, and a ``facet`` model per contribution type
(type.theory, ...) which are the judged ones; a type with fewer than MIN_EXAMPLES right or wrong
candidates shares one model with the others. Before fitting on everything, the same fit is
made once per source of the judged set (the ICLR 2024, 2025 and 2026 samples and the two shipped
paper lists) with that source held out, and the held-out papers are measured as `tagger eval
--judged` measures them: those figures say what to expect on papers the weigher never saw.

With ``--keyphrases``, every noun-phrase candidate of every paper of the judged keyphrase set whose
phrase was judged is a row of language.keyphrases.FEATURES, labelled 1 if it was judged
``accept``, and gradient-boosted trees are fitted to the rows (language.trees.TREE_SETTINGS); the
same cross-validation by source measures the first five keyphrases of the held-out papers.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..config import TaggerConfig
from ..io.readers import read_papers
from ..language.keyphrases import FEATURES as KEYPHRASE_FEATURES
from ..language.keyphrases import AcceptanceModel
from ..language.trees import TREE_SETTINGS, fitted_trees
from ..records import Paper, TaggedPaper
from ..tagging.neighbours import KINDS
from ..tagging.pipeline import Tagger
from ..tagging.weigher import FEATURES, RULE_FEATURES, RULES_PATH
from .judged import JudgedReport, Judgment, evaluate_judged, render_judged

ROOT = Path(__file__).resolve().parents[2]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tagger.corpus.calibrate", description=__doc__)
    parser.add_argument("--keyphrases", action="store_true", help="Fit the keyphrase model.")
    parser.add_argument("--judged", default=None, help="The judged set (judged/ by default).")
    parser.add_argument(
        "--data",
        nargs="+",
        default=[str(ROOT / "data" / name) for name in SHIPPED],
        help="The shipped papers the neighbours are found among (data/ by default).",
    )
    parser.add_argument("--out", default=None, help="Where the fit goes (tagger/data/ ...).")
    parser.add_argument("--report", default=None, help="Also write the figures here (Markdown).")
    parser.add_argument("--curve", default=None, help="Also draw the held-out curve here (PNG).")
    parser.add_argument("--no-write", action="store_true", help="Measure only; keep the weigher.")
    parser.add_argument("-c", type=float, default=0.3, help="Inverse L2 strength of every fit.")
    parser.add_argument(
        "--cache",
        default=None,
        help="Keep the shipped papers' readings in this directory, keyed by tagger's source, the "
        "taxonomy and the data (they take minutes to make).",
    )
    args = parser.parse_args(argv)
    name = ("keyphrases", "keyphrases") if args.keyphrases else ("judged", "weigher")
    args.judged = args.judged or str(ROOT / "judged" / f"{name[0]}.jsonl")
    args.out = args.out or str(ROOT / "tagger" / "data" / f"{name[1]}.json")
    if args.keyphrases:
        return calibrate_keyphrases(args)
    return calibrate_weigher(args)


SHIPPED = ("iclr2026-dev.jsonl", "iclr2024-topics.jsonl", "iclr2025-keywords.jsonl")
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
UNTITLED = "title-less papers (paper lists, and abstracts whose title was removed)"


def calibrate_weigher(args: argparse.Namespace) -> int:
    """Fit both stages of the weigher and the neighbour index; see tagger.corpus.weighing."""
    from . import weighing

    plain = Tagger.from_taxonomy(config=TaggerConfig(neighbours=0, judged_neighbours=0))
    defaults = TaggerConfig()
    k = {"nb": defaults.neighbours, "jn": defaults.judged_neighbours}
    weighing.note("reading the judged papers ...")
    judged = weighing.read_judged(plain, args.judged)
    weighing.note(f"{len(judged)} judged papers; reading the shipped papers ...")
    shipped = weighing.read_shipped(args.data, plain.config, weighing.workers(), args.cache)
    weighing.note(f"{len(shipped)} shipped papers; fitting each source held out ...")
    folds = weighing.cross_validate(judged, shipped, plain, c=args.c, k=k, log=weighing.note)
    order = [i for fold in folds for i in fold.test]
    found = [candidates for fold in folds for candidates in fold.found]
    rule_recall = weighing.candidate_recall(judged, [item.rules for item in judged], plain)
    held_recall = weighing.candidate_recall([judged[i] for i in order], found, plain)

    shown = Path(args.judged).resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
    lines = [
        f"# Calibration of the weigher on {shown}",
        "",
        f"{len(judged)} judged papers; {len(shipped)} shipped papers to find neighbours among "
        f"({', '.join(Path(p).name for p in args.data)}); each of {len(folds)} sources held out "
        "in turn, both stages fitted without it (tagger.corpus.weighing).",
        "",
        "Judged areas that are candidates at all, before the weigher (the area or one below it; "
        f"an ancestor too): rules alone {rule_recall[0]:.3f} ({rule_recall[1]:.3f}); with "
        f"{k['nb']} shipped and {k['jn']} judged neighbours (the held-out source's judgments "
        f"left out) {held_recall[0]:.3f} ({held_recall[1]:.3f}).",
        "",
        "Held out, by `min_score`:",
        "",
        "| min_score | " + " | ".join(_KEYS) + " |",
        "| --- " * (len(_KEYS) + 1) + "|",
    ]
    curve = []
    for threshold in sorted({*THRESHOLDS, *(x / 20 for x in range(1, 20))}):
        records = weighing.held_out(folds, judged, plain, min_score=threshold)
        figures = _summary(evaluate_judged(records, plain.taxonomy))
        curve.append((threshold, figures))
        if threshold in THRESHOLDS:
            row = " | ".join(f"{figures[key]:.3f}" for key in _KEYS)
            lines.append(f"| {threshold} | {row} |")
    lines.append("")
    records = weighing.held_out(folds, judged, plain)
    report = evaluate_judged(records, plain.taxonomy, source="each source held out in turn")
    untitled = [r for r in records if _untitled(r.paper)]
    subset = evaluate_judged(untitled, plain.taxonomy, source=UNTITLED + ", held out")
    lines += [
        "Cross-validated (each source measured by a weigher fitted on the others):",
        "",
        render_judged(report),
        render_judged(subset),
    ]
    if args.curve:
        _draw(curve, TaggerConfig().min_score, args.curve)
        lines += [f"![held-out precision and recall by min_score]({Path(args.curve).name})", ""]

    weighing.note("fitting on every judged paper ...")
    about = {
        "fitted_on": Path(args.judged).name,
        "judged_sha256": hashlib.sha256(Path(args.judged).read_bytes()).hexdigest(),
        "papers": len(judged),
        "date": datetime.date.today().isoformat(),
        **weighing.provenance_of(args.data),
    }
    model = plain.embedder.name.split(" (")[0]
    everyone = list(range(len(judged)))
    first = weighing.fit(
        judged,
        [item.rules for item in judged],
        plain,
        c=args.c,
        names=RULE_FEATURES,
        about=about | {"stage": "first: rule evidence alone; it tags the neighbour index"},
    )
    index = weighing.index_of(
        shipped, first, about=about | {"papers": len(shipped), "model": model}
    )
    judged_index = weighing.judged_index_of(judged, about=about | {"model": model})
    indexes = {"nb": (index, k["nb"]), "jn": (judged_index, k["jn"])}
    final = weighing.second_stage(judged, indexes, plain)
    second = weighing.fit(
        judged,
        final,
        plain,
        c=args.c,
        names=FEATURES,
        about=about
        | {"stage": "second: rule evidence and neighbours", "cross_validated": _summary(report)},
    )
    fitted_report = evaluate_judged(
        [weighing.tagged(judged[i], final[i], second, plain) for i in everyone],
        plain.taxonomy,
        source="fitted on all, measured on all (optimistic)",
    )
    lines += ["", render_judged(fitted_report)]
    text = "\n".join(lines)
    print(text)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    if not args.no_write:
        out = Path(args.out)
        second.save(out)
        first.save(out.with_name(RULES_PATH))
        index.save(out.with_name(KINDS["nb"]))
        judged_index.save(out.with_name(KINDS["jn"]))
        weighing.note(f"wrote {out}, {RULES_PATH}, {KINDS['nb']} and {KINDS['jn']} beside it")
    return 0


def _untitled(paper: Paper) -> bool:
    source = str((paper.model_extra or {}).get("source", ""))
    return source.startswith("examples/") or source.endswith("/untitled")


def _draw(curve: list[tuple[float, dict[str, float]]], default: float, path: str) -> None:
    """Precision against recall (strict, lenient) held out, one point per min_score."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=120)
    for key, label in (("area_recall", "strict"), ("area_recall_lenient", "lenient")):
        ax.plot(
            [f[key] for _, f in curve],
            [f["tag_precision"] for _, f in curve],
            marker="o",
            markersize=3,
            label=f"recall, {label}",
        )
        for threshold, f in curve:
            if abs(threshold - default) < 1e-9:
                ax.annotate(
                    f"default {default}",
                    (f[key], f["tag_precision"]),
                    textcoords="offset points",
                    xytext=(6, 6),
                )
                ax.plot([f[key]], [f["tag_precision"]], "k*", markersize=10)
    ax.set_xlabel("area recall (judged areas listed)")
    ax.set_ylabel("tag precision")
    ax.set_title("Held out by source: tags against the judged set, by --min-score")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def calibrate_keyphrases(args: argparse.Namespace) -> int:
    """Fit the keyphrase acceptance model; see the module's docstring."""
    papers = list(read_papers(args.judged))
    judged = [Judgment.of_paper(p) for p in papers]
    # every candidate, none dropped by a shortlist that would need the model being fitted
    wide = Tagger.from_taxonomy(config=TaggerConfig(max_candidates=1_000_000))
    print(f"{len(papers)} judged papers; describing candidates ...", file=sys.stderr)
    found = [
        c
        for start in range(0, len(papers), 32)
        for c in wide.keyphrase_candidates(papers[start : start + 32])
    ]
    rows: list[tuple[int, dict[str, float], int]] = []  # paper, features, accepted
    unjudged = 0
    for i, described in enumerate(found):
        for text, features in described.values():
            label = judged[i].phrase_label(text) if judged[i] else None
            if label is None:
                unjudged += 1
                continue
            rows.append((i, features, int(label == "accept")))

    def fit(papers_of: set[int]) -> AcceptanceModel:
        chosen = [(x, y) for i, x, y in rows if i in papers_of]
        model = fitted_trees(
            [x for x, _ in chosen], [y for _, y in chosen], names=KEYPHRASE_FEATURES
        )
        return AcceptanceModel(model, {})

    tagger = Tagger.from_taxonomy()
    sources = sorted({_source(p) for p in papers})
    held_out: list[TaggedPaper] = []
    for source in sources:
        test = [i for i, p in enumerate(papers) if _source(p) == source]
        tagger.keyphrases.model = fit({i for i in range(len(papers)) if i not in test})
        phrases = tagger.extract_keyphrases([papers[i] for i in test])
        held_out += [_with_keyphrases(papers[i], kps) for i, kps in zip(test, phrases, strict=True)]
    report = evaluate_judged(held_out, tagger.taxonomy, source="each source held out in turn")
    shown = Path(args.judged).resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
    model = fit(set(range(len(papers))))
    tagger.keyphrases.model = model
    everything = evaluate_judged(
        [
            _with_keyphrases(p, kps)
            for p, kps in zip(papers, tagger.extract_keyphrases(papers), strict=True)
        ],
        tagger.taxonomy,
        source="fitted on all, measured on all (optimistic)",
    )
    accepted = sum(y for _, _, y in rows)
    lines = [
        f"# Calibration of the keyphrase model on {shown}",
        "",
        f"{len(papers)} papers; {len(rows)} judged candidates ({accepted} accepted), "
        f"{unjudged} candidates not in the judged pool (left out).",
        "",
        "Cross-validated (each source measured by a model fitted on the others):",
        "",
        render_judged(report),
        render_judged(everything),
        f"The model: gradient-boosted trees ({_settings()}), over "
        + ", ".join(f"`{name}`" for name in KEYPHRASE_FEATURES)
        + " (keyphrases.FEATURES).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    if not args.no_write:
        model = replace(
            model,
            about={
                "fitted_on": Path(args.judged).name,
                "judged_sha256": hashlib.sha256(Path(args.judged).read_bytes()).hexdigest(),
                "papers": len(papers),
                "candidates": len(rows),
                "accepted": accepted,
                "date": datetime.date.today().isoformat(),
                "cross_validated": {
                    k: v for k, v in report.keyphrases.as_dict().items() if k != "by_source"
                },
            },
        )
        model.save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _settings() -> str:
    return ", ".join(f"{key}={value}" for key, value in TREE_SETTINGS.items())


def _with_keyphrases(paper: Paper, keyphrases: list) -> TaggedPaper:
    from .weighing import PROVENANCE

    return TaggedPaper(
        paper=paper, keyphrases=keyphrases, tags=[], facets=[], provenance=PROVENANCE
    )


def _source(paper: Paper) -> str:
    return str((paper.model_extra or {}).get("source", "?"))


_KEYS = (
    "type_precision",
    "papers_with_a_wrong_type",
    "type_recall",
    "tag_precision",
    "papers_with_a_wrong_tag",
    "area_recall",
    "area_recall_lenient",
    "untagged",
    "tags_per_paper",
    "first_tag_is_specific",
    "first_tag_is_main",
    "largest_calibration_gap",
)


def _summary(report: JudgedReport) -> dict[str, float]:
    data = report.as_dict()
    types = {f"type_{key}": value for key, value in data["types"].items()}
    types["papers_with_a_wrong_type"] = data["types"]["papers_with_a_wrong_type"]
    return {key: (data | types)[key] for key in _KEYS}


if __name__ == "__main__":
    sys.exit(main())
