"""The frontier, third round: two priors a phrase carries from other papers, and how far the
combined ranking of context.py is from 0.11.0 once chance is counted (a paired bootstrap).

    python judged/keyphrases3/margins.py --table judged/keyphrases3/margins.md [--cache DIR]

Measured as frontier.py and context.py measure (the same simulation of the choice; open papers
held out by source; ICLR 2026 dev held out by source; the sealed papers not read), every ranking
with context.py's context of the opening (the first 96 words, the passage tagger already embeds).
The two priors, each a few more columns for the trees (models.py fits the models that read them):

- **coded**: how the judges coded the same phrase (by its Porter-stemmed words) in the papers of
  the *other* sources: how many times it was coded, and its smoothed shares of GEN and ACCEPT.
  The readers' model reads it; a phrase generic in twenty papers is likely generic in the next.
- **listed**: over the 3,279 papers of data/ with authors' keywords (none drawn here, none of
  dev), how many carry the phrase as a candidate and the smoothed share of those whose authors
  list it (KEA's "keyphraseness"); out of fold (five folds) for the papers the authors' model is
  fitted on. The authors' model reads it.

The combined ranking is context.py's, ``old ** t * readers ** (1 - t) * (1 + w * authors) * s``
(``s`` = 0.6 for a single word), each phrase once. Then each of its points is set against 0.11.0
paper by paper: 1,000 resamplings of the open papers and of dev (the same resampled papers for
both rankings), and the 2.5th and 97.5th percentiles of each figure's difference. The grid of
``t``, ``w`` is chosen on these same papers: in-sample for that choice.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import context  # noqa: E402
import models  # noqa: E402
from frontier import CODES, choose, measure  # noqa: E402

GRID = dict(t=(0.8, 0.7, 0.6, 0.5), w=(4, 8))
RESAMPLINGS = 1000


def per_paper(papers: list[dict], picks: list[list[int]]) -> np.ndarray:
    """One row a paper: its picks' counts of each code, how many were coded, its F1@5 (NaN
    without keywords), how many single words, how many contained, how many picks."""
    out = []
    for paper, top in zip(papers, picks, strict=True):
        with warnings.catch_warnings():  # the mean F1@5 of a paper without keywords
            warnings.simplefilter("ignore", RuntimeWarning)
            got = measure([paper], [top])
        n = sum(paper["cands"][k]["label"] is not None for k in top)
        out.append(
            [(got[c] or 0.0) * n for c in CODES]
            + [n, got["F1@5"] if paper["keywords"] else np.nan]
            + [got["single"] * len(top), got["contained"] * len(top), len(top)]
        )
    return np.array(out, dtype=float)


def figures(on_judged: np.ndarray, on_dev: np.ndarray) -> dict[str, float]:
    """The table's figures from per_paper's rows (as frontier.measure computes them)."""
    got = {c: on_judged[:, k].sum() / on_judged[:, 5].sum() for k, c in enumerate(CODES)}
    return got | {
        "F1@5": float(np.nanmean(on_judged[:, 6])),
        "dev F1@5": float(np.nanmean(on_dev[:, 6])),
        "dev single": on_dev[:, 7].sum() / on_dev[:, 9].sum(),
        "dev contained": on_dev[:, 8].sum() / on_dev[:, 9].sum(),
    }


def bootstrap(base: tuple, other: tuple, seed: int = 0) -> dict[str, tuple[float, float]]:
    """The 95% interval of each figure's difference, other minus base, resampling papers."""
    rng = np.random.default_rng(seed)
    (bj, bd), (oj, od) = base, other
    differences = []
    for _ in range(RESAMPLINGS):
        j, d = rng.integers(0, len(bj), len(bj)), rng.integers(0, len(bd), len(bd))
        before, after = figures(bj[j], bd[d]), figures(oj[j], od[d])
        differences.append({k: after[k] - before[k] for k in after})
    return {
        k: tuple(np.percentile([d[k] for d in differences], [2.5, 97.5])) for k in differences[0]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/keyphrases3-frontier"))
    parser.add_argument("--table", type=Path, help="Write both tables here (Markdown).")
    args = parser.parse_args()
    from tagger.language.keyphrases import AcceptanceModel

    judged, dev, listed = context.described(args.cache)
    for papers in (judged, dev, listed):
        context.contextual(papers, 96)

    shipped = AcceptanceModel.load().accept
    old = lambda p: np.array(shipped.predict([c["f"] for c in p["cands"]]))  # noqa: E731
    single = lambda p: np.array([" " not in c["key"] for c in p["cands"]], float)  # noqa: E731

    def rows_of(ranked_judged, ranked_dev, rule="strict"):
        pick = lambda ps, rs: [  # noqa: E731
            choose(p["cands"], s.tolist(), rule) for p, s in zip(ps, rs, strict=True)
        ]
        return per_paper(judged, pick(judged, ranked_judged)), per_paper(dev, pick(dev, ranked_dev))

    header = (
        "| ranking | ACCEPT | GEN | RED | FRAG | NOISE | F1@5 (349) | dev F1@5 | dev single words "
        "| dev contained |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    table = []

    def show(name: str, measured: tuple) -> None:
        table.append(context.line(name, figures(*measured)))
        print(table[-1], flush=True)

    old_j, old_d = [old(p) for p in judged], [old(p) for p in dev]
    base = rows_of(old_j, old_d, "house")
    show("0.11.0's model, house", base)
    points = {}
    for prior in (False, True):
        kind = "coded and listed priors" if prior else "no prior"
        (readers_j, readers_d), (authors_j, authors_d) = models.scores(
            judged, dev, listed, context=True, priors=prior
        )
        show(
            f"readers' model, context (the opening), {kind}, strict", rows_of(readers_j, readers_d)
        )
        for t, w in itertools.product(*GRID.values()):

            def combined(papers, olds, readers, authors, t=t, w=w):
                return [
                    o**t * r ** (1 - t) * (1 + w * a) * (1 - 0.4 * single(p))
                    for p, o, r, a in zip(papers, olds, readers, authors, strict=True)
                ]

            measured = rows_of(
                combined(judged, old_j, readers_j, authors_j),
                combined(dev, old_d, readers_d, authors_d),
            )
            points[(kind, t, w)] = measured
            show(f"combined, {kind}: t {t}, w {w}, s 0.6", measured)

    names = ("ACCEPT", "GEN", "RED", "FRAG", "NOISE", "F1@5", "dev F1@5", "dev single")
    intervals = [
        "| against 0.11.0's model, house | "
        + " | ".join(name.replace("dev single", "dev single words") for name in names)
        + " |",
        "| --- |" + " --- |" * len(names),
    ]
    before = figures(*base)
    for kind, t, w in [(k, t, w) for k, t, w in points if t in (0.7, 0.6) and w == 4]:
        after = figures(*points[(kind, t, w)])
        spread = bootstrap(base, points[(kind, t, w)])
        intervals.append(
            f"| combined, {kind}: t {t}, w {w} | "
            + " | ".join(
                f"{after[k] - before[k]:+.3f} ({spread[k][0]:+.3f} to {spread[k][1]:+.3f})"
                for k in names
            )
            + " |"
        )
        print(intervals[-1], flush=True)
    text = "\n".join([header, *table, "", *intervals]) + "\n"
    print(text)
    if args.table:
        args.table.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
