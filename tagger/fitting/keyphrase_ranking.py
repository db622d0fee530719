"""Fit the readers' keyphrase ranking (language.readers) to the judged keyphrases of issue 46 and
to the keywords authors chose, measure it held out by source, and write it.

    python -m tagger.fitting.keyphrase_ranking   # -> the ranking of tagger/data/keyphrases.json
    python -m tagger.fitting.keyphrase_ranking --report docs/keyphrase-ranking.md --no-write

Every candidate of every paper (no shortlist) is described as the ranking reads it: the keyphrase
model's features, its context in the opening beside its own embedding, its Porter-stemmed words.
Then, as judged/keyphrases3/models.py fits them for the frontier's measurements:

- **the readers' model**, on the judged papers (judged/keyphrases3/judged.jsonl; the sealed ones
  are in another file, never read here): a logistic regression over the context rows, fitted to
  whether the judges coded a phrase ACCEPT, whose probability (out of fold: each source's papers
  by one fitted on the other sources) is a column of gradient-boosted trees, with how the judges
  coded the same phrase in the other sources' papers;
- **the authors' model**, on the papers of data/ with authors' keywords (none drawn for the
  judged set, none of ICLR 2026 dev, which measures F1@5): the same, fitted to whether the
  authors list the phrase, out of fold over five folds, with KEA's keyphraseness of the phrase
  in the other folds.

The ranking weighs them with the acceptance model the file already holds as margins.md's chosen
point does (``T``, ``W``, ``SINGLE``: chosen on the open papers and dev). Before writing, each
source of the judged papers is listed by a ranking whose readers' parts were fitted on the other
sources (the authors' model never saw a judged paper), through the whole of tagger's extraction
(its shortlist of ``max_candidates`` included), and measured as `tagger eval --judged` measures;
as in the frontier's measurements, the regression column the held-out trees were fitted on was
made, for each other source, by a regression fitted on every source but that one (so on the held-out
source too: nesting the folds would fit 22 times as many regressions).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..config import TaggerConfig
from ..corpus.evaluate import mean_keyphrase_f1, top_shape
from ..corpus.judged import Judgment, evaluate_judged, render_judged
from ..io.files import sha256
from ..io.readers import read_papers
from ..language.keyphrases import DEFAULT_MODEL, PHRASE_FEATURES, AcceptanceModel
from ..language.readers import (
    AUTHOR_COLUMNS,
    READER_COLUMNS,
    Linear,
    Priors,
    ReadersRanking,
)
from ..language.text import stem_phrase
from ..language.trees import fitted_trees
from ..records import Paper, TaggedPaper, source_of
from ..tagging.neighbours import abstract_key
from ..tagging.reading import Reader
from ..taxonomy.loading import load_taxonomy
from .keyphrases import with_keyphrases

ROOT = Path(__file__).resolve().parents[2]
JUDGED = ROOT / "judged" / "keyphrases3" / "judged.jsonl"
DRAWN = ROOT / "judged" / "keyphrases3" / "draw.jsonl"  # every judged paper, sealed ones too
LISTED = tuple(
    ROOT / "data" / f"{name}.jsonl"
    for name in ("iclr2024-topics", "iclr2025-keywords", "corpus-2020-2023")
)
DEV = ROOT / "data" / "iclr2026-dev.jsonl"
OUT = ROOT / "tagger" / "data" / DEFAULT_MODEL
LISTED_FOLDS = 5
T, W, SINGLE = 0.7, 4.0, 0.6  # judged/keyphrases3/margins.md's point (README: "Shipped in 0.12.0")
READER_NAMES = (*PHRASE_FEATURES, *READER_COLUMNS)
AUTHOR_NAMES = (*PHRASE_FEATURES, *AUTHOR_COLUMNS)


@dataclass
class Described:
    """A paper as the fit reads it: its fold, and per candidate its features, its context row
    (language.readers), its stem, its target (accepted, or listed by the authors) and its code
    (judged papers: READING.md's, None where the phrase was not in the judged pool)."""

    fold: str
    rows: list[dict[str, float]]
    embedded: np.ndarray
    stems: list[str]
    target: np.ndarray
    codes: list[str | None]


@dataclass
class Fitted:
    """One model fitted fold by fold: per fold, the regression and the prior's counts fitted on
    the other folds, and every paper's trees rows made with its own fold's (out of fold)."""

    linear: dict[str, Linear]
    counts: dict[str, dict]
    rows: list[list[dict[str, float]]]

    def trees(self, papers: list[Described], names: Sequence[str], keep: Callable[[str], bool]):
        """Trees over the rows of the papers whose fold ``keep`` keeps."""
        chosen = [n for n, p in enumerate(papers) if keep(p.fold)]
        return fitted_trees(
            [row for n in chosen for row in self.rows[n]],
            np.concatenate([papers[n].target for n in chosen]).tolist(),
            names=names,
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tagger.fitting.keyphrase_ranking", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--judged", default=str(JUDGED), help="The judged keyphrase set.")
    parser.add_argument(
        "--out",
        default=str(OUT),
        help="The keyphrase model file whose ranking is fitted (its acceptance model, "
        "python -m tagger.fitting.keyphrases's, is kept): the packaged one by default.",
    )
    parser.add_argument("--report", default=None, help="Also write the figures here (Markdown).")
    parser.add_argument("--no-write", action="store_true", help="Measure only; keep the model.")
    args = parser.parse_args(argv)
    config = TaggerConfig()
    taxonomy = load_taxonomy()
    found = AcceptanceModel.load(args.out)
    old = AcceptanceModel(found.accept, {k: v for k, v in found.about.items() if k != "ranking"})
    judged_papers = list(read_papers(args.judged))
    left_out = {json.loads(line)["id"] for line in DRAWN.open(encoding="utf-8")}
    left_out |= {paper.id for paper in read_papers(DEV)}
    listed_papers = [
        p for path in LISTED for p in read_papers(path) if p.keywords and p.id not in left_out
    ]
    wide = Reader(taxonomy, replace(config, max_candidates=1_000_000))

    def coded(paper: Paper, texts: list[str]) -> list[str | None]:
        judgment = Judgment.of_paper(paper)
        return [judgment.phrase_label(t) if judgment else None for t in texts]

    def listed(paper: Paper, texts: list[str]) -> list[str | None]:
        gold = {stem_phrase(k) for k in paper.keywords or ()}
        return ["accept" if stem_phrase(t) in gold else None for t in texts]

    judged = _described(wide, judged_papers, [source_of(p) for p in judged_papers], coded)
    authored = _described(
        wide, listed_papers, [str(n % LISTED_FOLDS) for n in range(len(listed_papers))], listed
    )
    authors_fit = _fitted(
        authored, _listed_counts, lambda c, s: Priors({}, c).authors(s), "listing"
    )
    authors = authors_fit.trees(authored, AUTHOR_NAMES, lambda fold: True)
    listing, listed_counts = _linear(authored), _listed_counts(authored)
    readers_fit = _fitted(judged, _coded_counts, lambda c, s: Priors(c, {}).readers(s), "reading")
    held_out: list[TaggedPaper] = []
    reader = Reader(taxonomy, config)
    for source in sorted({p.fold for p in judged}):
        ranking = ReadersRanking(
            readers_fit.trees(judged, READER_NAMES, lambda fold, s=source: fold != s),
            authors,
            readers_fit.linear[source],
            listing,
            Priors(readers_fit.counts[source], listed_counts),
            T,
            W,
            SINGLE,
        )
        reader.keyphrases.model = replace(old, ranking=ranking)
        papers = [p for p in judged_papers if source_of(p) == source]
        listed_of = reader.extract_keyphrases(papers)
        held_out += [with_keyphrases(p, kps) for p, kps in zip(papers, listed_of, strict=True)]
    report = evaluate_judged(held_out, taxonomy, source="each source held out in turn")
    ranking = ReadersRanking(
        readers_fit.trees(judged, READER_NAMES, lambda fold: True),
        authors,
        _linear(judged),
        listing,
        Priors(_coded_counts(judged), listed_counts),
        T,
        W,
        SINGLE,
    )
    dev = [p for p in read_papers(DEV) if p.keywords]
    against = []
    for name, model in (
        ("0.11.0's model", old),
        ("the readers' ranking", replace(old, ranking=ranking)),
    ):
        reader.keyphrases.model = model
        listed_of = [[k.text for k in kps] for kps in reader.extract_keyphrases(dev)]
        shape = top_shape(listed_of)
        f1 = mean_keyphrase_f1(
            ((kps, p.keywords) for kps, p in zip(listed_of, dev, strict=True)), 5
        )
        against.append(
            f"| {name} | {f1:.3f} | {shape['single_words']:.3f} | {shape['contained']:.3f} |"
        )
    text = "\n".join(
        [
            f"# The readers' keyphrase ranking on {Path(args.judged).name}",
            "",
            "Made by `python -m tagger.fitting.keyphrase_ranking --report "
            "docs/keyphrase-ranking.md`, which also writes the ranking into "
            "tagger/data/keyphrases.json (language.readers says what it is).",
            "",
            f"{len(judged_papers)} judged papers ({sum(len(p.stems) for p in judged)} "
            f"candidates); the authors' model on {len(listed_papers)} papers of data/ with "
            f"keywords ({sum(len(p.stems) for p in authored)} candidates).",
            "",
            render_judged(report),
            f"Against the authors' keywords of {DEV.name} ({len(dev)} papers; held out by "
            "source: no part of either model saw them):",
            "",
            "| keyphrases | F1@5 | first 5: one word | contained in another |",
            "| --- | --- | --- | --- |",
            *against,
        ]
    )
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n", encoding="utf-8")
    if not args.no_write:
        about = {
            **old.about,
            "ranking": {
                "fitted_on": Path(args.judged).name,
                "judged_sha256": sha256(args.judged),
                "listed": [path.name for path in LISTED],
                "listed_papers": len(listed_papers),
                # whose keywords the authors' model read (tagger eval says so of them)
                "listed_keys": sorted({abstract_key(p.abstract) for p in listed_papers}),
                "date": datetime.date.today().isoformat(),
                "held_out": {
                    k: v for k, v in report.keyphrases.as_dict().items() if k != "by_source"
                },
            },
        }
        AcceptanceModel(old.accept, about, ranking).save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _described(
    reader: Reader,
    papers: list[Paper],
    folds: list[str],
    coded: Callable[[Paper, list[str]], list[str | None]],
) -> list[Described]:
    """Every candidate of every paper that has one, as the ranking reads it, with its code
    (``coded``: per phrase as shown); its target is whether that code is ``accept``."""
    out = []
    for start in range(0, len(papers), 32):
        batch = papers[start : start + 32]
        texts, analyses = reader.analyse(batch)
        read = reader.keyphrases.described(texts, analyses, contexts=True)
        for n, (paper, described) in enumerate(zip(batch, read, strict=True)):
            if not described.features:
                continue
            shown = [described.shown[key] for key in described.features]
            codes = coded(paper, shown)
            out.append(
                Described(
                    folds[start + n],
                    list(described.features.values()),
                    described.embedded,
                    [stem_phrase(text) for text in shown],
                    np.array([int(code == "accept") for code in codes]),
                    codes,
                )
            )
        print(f"described {start + len(batch)} of {len(papers)}", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return out


def _coded_counts(papers: Sequence[Described]) -> dict[str, tuple[int, int, int]]:
    """Per stem: how often the judges coded it, and how often GEN and ACCEPT."""
    seen: Counter = Counter()
    generic: Counter = Counter()
    accept: Counter = Counter()
    for paper in papers:
        for stem, code in zip(paper.stems, paper.codes, strict=True):
            if code is not None:
                seen[stem] += 1
                generic[stem] += code == "generic"
                accept[stem] += code == "accept"
    return {stem: (seen[stem], generic[stem], accept[stem]) for stem in seen}


def _listed_counts(papers: Sequence[Described]) -> dict[str, tuple[int, int]]:
    """Per stem: in how many papers it is a candidate, and in how many the authors list it."""
    seen: Counter = Counter()
    listed: Counter = Counter()
    for paper in papers:
        for stem, target in zip(paper.stems, paper.target.tolist(), strict=True):
            seen[stem] += 1
            listed[stem] += target
    return {stem: (seen[stem], listed[stem]) for stem in seen}


def _fitted(
    papers: list[Described],
    counts: Callable[[Sequence[Described]], dict],
    prior: Callable[[dict, str], dict[str, float]],
    column: str,
) -> Fitted:
    """Fold by fold, the regression and the counts of the other folds, and each paper's rows:
    its features, its regression's probability (``column``) and its prior."""
    linear, counted, rows = {}, {}, [[] for _ in papers]
    for fold in sorted({p.fold for p in papers}):
        others = [p for p in papers if p.fold != fold]
        linear[fold] = _linear(others)
        counted[fold] = counts(others)
        for n, paper in enumerate(papers):
            if paper.fold == fold:
                values = linear[fold].probability(paper.embedded)
                rows[n] = [
                    row | {column: value} | prior(counted[fold], stem)
                    for row, value, stem in zip(paper.rows, values, paper.stems, strict=True)
                ]
        print(f"{column}: fold {fold} fitted", file=sys.stderr)
    return Fitted(linear, counted, rows)


def _linear(papers: Sequence[Described]) -> Linear:
    return Linear.fitted(
        np.vstack([p.embedded for p in papers]), np.concatenate([p.target for p in papers])
    )


if __name__ == "__main__":
    sys.exit(main())
