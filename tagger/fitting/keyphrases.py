"""Fit the keyphrase acceptance model (language.keyphrases) to the judged keyphrase set, held out
by source, and write it.

    python -m tagger.fitting.keyphrases   # judged/keyphrases.jsonl -> tagger/data/keyphrases.json
    python -m tagger.fitting.keyphrases --report docs/keyphrase-calibration.md --no-write
    python -m tagger.fitting.keyphrases --embedding-backend static   # the fast mode's

The readers' ranking a model file holds (language.readers; fitted by
``python -m tagger.fitting.keyphrase_ranking``) is kept when the file is written again.

Every noun-phrase candidate of every paper whose phrase was judged is a row of
language.keyphrases.PHRASE_FEATURES, labelled 1 if it was judged ``accept``, and gradient-boosted
trees are fitted to the rows (language.trees.TREE_SETTINGS). Before fitting on everything, the
same fit is made once per source with that source held out, and the held-out papers' first five
keyphrases are measured as `tagger eval --judged` measures them.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..config import EMBEDDING_BACKENDS, TaggerConfig, packaged_fit
from ..corpus.judged import Judgment, evaluate_judged, render_judged
from ..io.files import sha256
from ..io.readers import read_papers
from ..language.keyphrases import DEFAULT_MODEL, PHRASE_FEATURES, AcceptanceModel
from ..language.trees import TREE_SETTINGS, fitted_trees
from ..records import Paper, TaggedPaper, source_of
from ..tagging.reading import Reader
from ..taxonomy.loading import load_taxonomy
from .weighing import PROVENANCE

ROOT = Path(__file__).resolve().parents[2]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tagger.fitting.keyphrases", description=__doc__
    )
    parser.add_argument(
        "--judged", default=str(ROOT / "judged" / "keyphrases.jsonl"), help="The judged set."
    )
    parser.add_argument(
        "--out",
        default=None,
        help="The model (default: the packaged one for the backend, config.packaged_fit).",
    )
    parser.add_argument(
        "--embedding-backend",
        default=EMBEDDING_BACKENDS[0],
        choices=EMBEDDING_BACKENDS,
        help="Fit in this backend's space (static: the fast mode's keyphrase model).",
    )
    parser.add_argument("--report", default=None, help="Also write the figures here (Markdown).")
    parser.add_argument("--no-write", action="store_true", help="Measure only; keep the model.")
    args = parser.parse_args(argv)
    backend = args.embedding_backend
    if args.out is None:
        args.out = str(ROOT / "tagger" / "data" / packaged_fit(DEFAULT_MODEL, backend))
    config = TaggerConfig(embedding_backend=backend)
    papers = list(read_papers(args.judged))
    judged = [Judgment.of_paper(p) for p in papers]
    # every candidate, none dropped by a shortlist that would need the model being fitted
    taxonomy = load_taxonomy()
    wide = Reader(taxonomy, replace(config, max_candidates=1_000_000))
    print(f"{len(papers)} judged papers; describing candidates ...", file=sys.stderr)
    found = [
        c
        for start in range(0, len(papers), 32)
        for c in wide.keyphrase_candidates(papers[start : start + 32])
    ]
    rows: list[tuple[int, dict[str, float], int]] = []  # paper, features, accepted
    unjudged = 0
    for i, paper in enumerate(found):
        for key, features in paper.features.items():
            label = judged[i].phrase_label(paper.shown[key]) if judged[i] else None
            if label is None:
                unjudged += 1
                continue
            rows.append((i, features, int(label == "accept")))

    def fit(papers_of: set[int]) -> AcceptanceModel:
        chosen = [(x, y) for i, x, y in rows if i in papers_of]
        model = fitted_trees([x for x, _ in chosen], [y for _, y in chosen], names=PHRASE_FEATURES)
        return AcceptanceModel(model, {})

    reader = Reader(taxonomy, config)
    held_out: list[TaggedPaper] = []
    for source in sorted({source_of(p) for p in papers}):
        test = [i for i, p in enumerate(papers) if source_of(p) == source]
        reader.keyphrases.model = fit({i for i in range(len(papers)) if i not in test})
        phrases = reader.extract_keyphrases([papers[i] for i in test])
        held_out += [with_keyphrases(papers[i], kps) for i, kps in zip(test, phrases, strict=True)]
    report = evaluate_judged(held_out, taxonomy, source="each source held out in turn")
    model = fit(set(range(len(papers))))
    reader.keyphrases.model = model
    everything = evaluate_judged(
        [
            with_keyphrases(p, kps)
            for p, kps in zip(papers, reader.extract_keyphrases(papers), strict=True)
        ],
        taxonomy,
        source="fitted on all, measured on all (optimistic)",
    )
    accepted = sum(y for _, _, y in rows)
    settings = ", ".join(f"{key}={value}" for key, value in TREE_SETTINGS.items())
    lines = [
        f"# Calibration of the keyphrase model on {Path(args.judged).name}",
        "",
        f"{len(papers)} papers; {len(rows)} judged candidates ({accepted} accepted), "
        f"{unjudged} candidates not in the judged pool (left out).",
        "",
        "Held out by source (each source measured by a model fitted on the others):",
        "",
        render_judged(report),
        render_judged(everything),
        f"The model: gradient-boosted trees ({settings}), over "
        + ", ".join(f"`{name}`" for name in PHRASE_FEATURES)
        + " (keyphrases.PHRASE_FEATURES).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    if not args.no_write:
        about = {
            "fitted_on": Path(args.judged).name,
            "judged_sha256": sha256(args.judged),
            "papers": len(papers),
            "candidates": len(rows),
            "accepted": accepted,
            "date": datetime.date.today().isoformat(),
            "cross_validated": {
                k: v for k, v in report.keyphrases.as_dict().items() if k != "by_source"
            },
        }
        kept = AcceptanceModel.load(args.out) if Path(args.out).exists() else None
        if kept and kept.ranking:  # the readers' ranking reads no output of this model: kept
            about["ranking"] = kept.about.get("ranking", {})
        replace(model, about=about, ranking=kept.ranking if kept else None).save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def with_keyphrases(paper: Paper, keyphrases: list) -> TaggedPaper:
    """The paper as a tagged line carrying only its keyphrases (what a judged report reads)."""
    return TaggedPaper(
        paper=paper, keyphrases=keyphrases, tags=[], facets=[], provenance=PROVENANCE
    )


if __name__ == "__main__":
    sys.exit(main())
