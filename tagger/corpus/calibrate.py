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
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..config import TaggerConfig
from ..io.readers import read_papers
from ..language.keyphrases import FEATURES, AcceptanceModel
from ..language.trees import TREE_SETTINGS, fitted_trees
from ..records import AreaTag, Paper, Provenance, TaggedPaper
from ..tagging.listing import select, select_facet
from ..tagging.pipeline import Tagger
from ..tagging.proposing import Candidate
from ..tagging.weigher import ANY_FACET, Weigher, fitted
from .judged import JudgedReport, Judgment, evaluate_judged, render_judged, verdicts

ROOT = Path(__file__).resolve().parents[2]
MIN_EXAMPLES = 5  # right and wrong candidates a facet value needs for a model of its own


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tagger.corpus.calibrate", description=__doc__)
    parser.add_argument("--keyphrases", action="store_true", help="Fit the keyphrase model.")
    parser.add_argument("--judged", default=None, help="The judged set (judged/ by default).")
    parser.add_argument("--out", default=None, help="Where the fit goes (tagger/data/ ...).")
    parser.add_argument("--report", default=None, help="Also write the figures here (Markdown).")
    parser.add_argument("--no-write", action="store_true", help="Measure only; keep the weigher.")
    parser.add_argument("-c", type=float, default=0.3, help="Inverse L2 strength of every fit.")
    args = parser.parse_args(argv)
    name = ("keyphrases", "keyphrases") if args.keyphrases else ("judged", "weigher")
    args.judged = args.judged or str(ROOT / "judged" / f"{name[0]}.jsonl")
    args.out = args.out or str(ROOT / "tagger" / "data" / f"{name[1]}.json")
    if args.keyphrases:
        return calibrate_keyphrases(args)

    tagger = Tagger.from_taxonomy()
    papers = list(read_papers(args.judged))
    print(f"{len(papers)} judged papers; proposing candidates ...", file=sys.stderr)
    found = [
        c
        for start in range(0, len(papers), 32)
        for c in tagger.candidates(papers[start : start + 32])
    ]
    judged = [Judgment.of_paper(p) for p in papers]
    sources = sorted({_source(p) for p in papers})

    shown = Path(args.judged).resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
    lines = [f"# Calibration of the weigher on {shown}", ""]
    folds = []
    for source in sources:
        train = [i for i, p in enumerate(papers) if _source(p) != source]
        test = [i for i, p in enumerate(papers) if _source(p) == source]
        folds.append((_fit(papers, found, judged, train, tagger, args.c, about={}), test))
    lines += [
        "Held out, by `min_score`:",
        "",
        "| min_score | " + " | ".join(_KEYS) + " |",
        "| --- " * (len(_KEYS) + 1) + "|",
    ]
    for threshold in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        config = replace(tagger.config, min_score=threshold)
        held_out = [
            _tagged(papers[i], found[i], weigher, tagger, config)
            for weigher, test in folds
            for i in test
        ]
        figures = _summary(evaluate_judged(held_out, tagger.taxonomy))
        lines.append(f"| {threshold} | " + " | ".join(f"{figures[k]:.3f}" for k in _KEYS) + " |")
    lines.append("")
    held_out = [
        _tagged(papers[i], found[i], weigher, tagger) for weigher, test in folds for i in test
    ]
    report = evaluate_judged(held_out, tagger.taxonomy, source="each source held out in turn")
    lines += [
        "Cross-validated (each source measured by a weigher fitted on the others):",
        "",
        render_judged(report),
    ]

    everything = list(range(len(papers)))
    about = {
        "fitted_on": Path(args.judged).name,
        "judged_sha256": hashlib.sha256(Path(args.judged).read_bytes()).hexdigest(),
        "papers": len(papers),
        "candidates": sum(len(c) for c in found),
        "date": datetime.date.today().isoformat(),
        "cross_validated": _summary(report),
    }
    weigher = _fit(papers, found, judged, everything, tagger, args.c, about=about)
    fitted_report = evaluate_judged(
        [_tagged(p, c, weigher, tagger) for p, c in zip(papers, found, strict=True)],
        tagger.taxonomy,
        source="fitted on all, measured on all (optimistic)",
    )
    lines += ["", render_judged(fitted_report)]
    text = "\n".join(lines)
    print(text)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    if not args.no_write:
        weigher.save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


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
        model = fitted_trees([x for x, _ in chosen], [y for _, y in chosen], names=FEATURES)
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
        + ", ".join(f"`{name}`" for name in FEATURES)
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
    return TaggedPaper(
        paper=paper, keyphrases=keyphrases, tags=[], facets=[], provenance=_PROVENANCE
    )


def _source(paper: Paper) -> str:
    return str((paper.model_extra or {}).get("source", "?"))


def _fit(papers, found, judged, rows_of, tagger, c, *, about) -> Weigher:
    """The three models, fitted to the candidates of the papers ``rows_of``. The ``right`` model
    sees only candidates that could be listed as they are (not a parent with no evidence of its
    own whose sub-area was proposed, not a fallback), so that its probability is calibrated on
    the tags users see."""
    taxonomy = tagger.taxonomy
    right_rows, right_labels, main_rows, main_labels = [], [], [], []
    facet_rows: dict[str, list] = defaultdict(list)
    facet_labels: dict[str, list[int]] = defaultdict(list)
    for i in rows_of:
        topics, facets = _split(found[i], tagger)
        for candidate in facets:
            if taxonomy.by_id[candidate.area].parent is not None:
                for key in (candidate.area, ANY_FACET):
                    facet_rows[key].append(candidate.features)
                    facet_labels[key].append(int(candidate.area in judged[i].facet_areas))
        said = verdicts(_as_tags(topics, tagger), judged[i], taxonomy)
        proposed = {candidate.area for candidate in topics}
        for candidate, verdict in zip(topics, said, strict=True):
            below = taxonomy.descendants(candidate.area) - {candidate.area}
            listable = candidate.own > 0 or not below & proposed
            if verdict != "neutral" and listable and not taxonomy.by_id[candidate.area].fallback:
                right_rows.append(candidate.features)
                right_labels.append(int(verdict == "right"))
            main_rows.append(candidate.features)
            main_labels.append(int(candidate.area in judged[i].main))
    return Weigher(
        right=fitted(right_rows, right_labels, c=c),
        main=fitted(main_rows, main_labels, c=c),
        facets={
            area: fitted(facet_rows[area], labels, c=c)
            for area, labels in facet_labels.items()
            if area == ANY_FACET or min(sum(labels), len(labels) - sum(labels)) >= MIN_EXAMPLES
        },
        about=about,
    )


def _split(found: list[Candidate], tagger: Tagger) -> tuple[list[Candidate], list[Candidate]]:
    """Topic candidates, and facet candidates."""
    topics = [c for c in found if tagger.taxonomy.facet(c.area) is None]
    return topics, [c for c in found if tagger.taxonomy.facet(c.area) is not None]


def _as_tags(candidates: list[Candidate], tagger: Tagger) -> list[AreaTag]:
    return [_tag(c.area, 0.0, tagger) for c in candidates]


def _tag(area: str, score: float, tagger: Tagger) -> AreaTag:
    taxonomy = tagger.taxonomy
    return AreaTag(
        id=area,
        name=area,
        path=taxonomy.path(area),
        score=score,
        evidence=[],
        crosswalk=taxonomy.crosswalk(area),
    )


_PROVENANCE = Provenance(
    tagger_version="-",
    taxonomy_version="-",
    taxonomy_sha256="-",
    embedding_model="-",
    spacy_model="-",
)


def _tagged(
    paper: Paper,
    found: list[Candidate],
    weigher: Weigher,
    tagger: Tagger,
    config: TaggerConfig | None = None,
) -> TaggedPaper:
    """The paper as the weigher would tag it, from its candidates."""
    config = config or tagger.config
    topics, facets = _split(found, tagger)
    tags = [
        _tag(area, round(score, 4), tagger)
        for area, score in select(topics, weigher, tagger.taxonomy, config)
    ]
    types = [
        _tag(area, round(score, 4), tagger)
        for area, score in select_facet(facets, weigher, tagger.taxonomy, config)
    ]
    return TaggedPaper(paper=paper, keyphrases=[], tags=tags, facets=types, provenance=_PROVENANCE)


_KEYS = (
    "type_precision",
    "papers_with_a_wrong_type",
    "type_recall",
    "tag_precision",
    "papers_with_a_wrong_tag",
    "area_recall",
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
