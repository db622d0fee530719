"""The learning curve of the readers' model: would more judged papers bring it nearer issue 46's
targets (ACCEPT >= 0.93, GEN <= 0.02)?

    python judged/keyphrases3/learning.py --table judged/keyphrases3/learning.md \
        --plot judged/keyphrases3/learning.png [--cache DIR]

The strongest readers' model of the frontier's rounds (margins.md: the trees over the keyphrase
model's features, the context of the opening and the coded prior), measured nearly as
margins.py measures it: the 22 sources are dealt into five groups, each group's open papers
listed by a model fitted on the other groups' papers (margins.py holds out one source at a
time; five groups keep the 13 fits of each row to minutes), five phrases a paper by
frontier.py's ``strict`` choice, coded as readers code them. Each model is fitted on a share of
the other groups' papers, drawn at random (the same draw for the context regression, the coded
prior and the trees; the context regression and the prior the trees read are out of fold, by
group of sources, within that draw), several draws a share. The held-out papers are always all
of them, so every row is measured on the same 850 papers; the sealed papers are not read.

If ACCEPT still climbs steeply from half the papers to all of them, judging more papers is a
way to the targets; if it flattens, it is not, and the targets need another signal. Below the
table: a least-squares line of ACCEPT and of GEN against log2 of the papers fitted on (every
draw a point), and where it would meet the targets if it held. The plot sets the rows beside the
targets and beside one judge's own top 5 coded by another (agreement.py).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import context  # noqa: E402
import models  # noqa: E402
from frontier import CODES, accepted, choose, measure, trees  # noqa: E402

SHARES = (0.125, 0.25, 0.5, 0.75, 1.0)
DRAWS = 3  # random draws of each share below 1
SEED = 2026120746
GROUPS = 5
ACCEPT_TARGET, GEN_TARGET = 0.93, 0.02


def groups(papers: list[dict]) -> list[int]:
    """Each paper's group: the sorted sources dealt round the ``GROUPS`` groups."""
    sources = sorted({p["source"] for p in papers})
    return [sources.index(p["source"]) % GROUPS for p in papers]


def held_out(judged: list[dict], share: float, draw: int) -> list[np.ndarray]:
    """Each open paper's readers' probabilities, by a model fitted on ``share`` of the papers of
    the other groups."""
    out: list = [None] * len(judged)
    group = groups(judged)
    for held in range(GROUPS):
        others = [p for p, g in zip(judged, group, strict=True) if g != held]
        fitted_on = random.Random(f"{SEED}-{share}-{draw}-{held}").sample(
            others, round(share * len(others))
        )
        inner_group = groups(fitted_on)
        regression = models.regression(fitted_on, accepted)
        inner = models.out_of_fold(
            fitted_on, inner_group, lambda ps: models.regression(ps, accepted), models.probability
        )
        counts = models.coded(fitted_on)
        inner_counts = {
            g: models.coded([p for p, h in zip(fitted_on, inner_group, strict=True) if h != g])
            for g in set(inner_group)
        }
        x = np.vstack(
            [
                models.columns(
                    p, near=False, fitted=fitted, prior=models.coded_prior(p, inner_counts[g])
                )
                for p, fitted, g in zip(fitted_on, inner, inner_group, strict=True)
            ]
        )
        model = trees(x, np.concatenate([accepted(p) for p in fitted_on]))
        for n, paper in enumerate(judged):
            if group[n] == held:
                columns = models.columns(
                    paper,
                    near=False,
                    fitted=models.probability(regression, paper),
                    prior=models.coded_prior(paper, counts),
                )
                out[n] = model.predict_proba(columns)[:, 1]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/keyphrases3-frontier"))
    parser.add_argument("--table", type=Path, help="Write the table here (Markdown).")
    parser.add_argument("--plot", type=Path, help="Draw ACCEPT and GEN against papers (PNG).")
    parser.add_argument("--shares", type=float, nargs="+", default=SHARES)
    args = parser.parse_args()

    judged, _, _ = context.described(args.cache)
    context.contextual(judged, 96)
    papers = len(judged)
    header = [
        "| share of the other groups' papers | papers fitted on (mean) | draws | ACCEPT | GEN "
        "| RED | FRAG | NOISE | F1@5 (349) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines, points = [], []
    for share in args.shares:
        draws = 1 if share == 1.0 else DRAWS
        got = []
        for draw in range(draws):
            scores = held_out(judged, share, draw)
            picks = [
                choose(p["cands"], s.tolist(), "strict")
                for p, s in zip(judged, scores, strict=True)
            ]
            got.append(measure(judged, picks))
        mean = {k: float(np.mean([g[k] for g in got])) for k in (*CODES, "F1@5")}
        spread = max(g["ACCEPT"] for g in got) - min(g["ACCEPT"] for g in got)
        fitted = round(share * papers * (1 - 1 / GROUPS))
        points += [(fitted, g["ACCEPT"], g["GEN"]) for g in got]
        lines.append(
            f"| {share:g} | {fitted} | {draws} | {mean['ACCEPT']:.3f}"
            + (f" (±{spread / 2:.3f})" if draws > 1 else "")
            + "".join(f" | {mean[k]:.3f}" for k in ("GEN", "RED", "FRAG", "NOISE", "F1@5"))
            + " |"
        )
        print(lines[-1], flush=True)
    text = "\n".join(header + lines) + "\n\n" + extrapolated(points) + "\n"
    print(text)
    if args.table:
        args.table.write_text(text, encoding="utf-8")
    if args.plot:
        plot(points, args.plot)
    return 0


def line_through(points: list[tuple[int, float, float]], column: int) -> tuple[float, float]:
    """Least squares ``figure = a + b * log2(papers)``: ``(a, b)``."""
    x = np.log2([p[0] for p in points])
    b, a = np.polyfit(x, [p[column] for p in points], 1)
    return float(a), float(b)


def extrapolated(points: list[tuple[int, float, float]]) -> str:
    out = []
    for name, column, target in (("ACCEPT", 1, ACCEPT_TARGET), ("GEN", 2, GEN_TARGET)):
        a, b = line_through(points, column)
        doublings = (target - (a + b * np.log2(max(p[0] for p in points)))) / b
        out.append(
            f"- {name} = {a:.3f} {'+' if b >= 0 else '-'} {abs(b):.4f} x log2(papers fitted on): "
            f"{b:+.3f} a doubling; the target, {target}, would take {doublings:.0f} more "
            f"doublings of the papers fitted on (about {2**doublings:,.0f} times as many) if "
            "the line held."
        )
    return "\n".join(out)


def plot(points: list[tuple[int, float, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from agreement import judges, judges_tops, share

    agreed = judges_tops(*judges())["both directions"]
    figure, panes = plt.subplots(1, 2, figsize=(10, 4))
    for pane, (name, column, target) in zip(
        panes, (("ACCEPT", 1, ACCEPT_TARGET), ("GEN", 2, GEN_TARGET)), strict=True
    ):
        pane.scatter([p[0] for p in points], [p[column] for p in points], label="readers' model")
        a, b = line_through(points, column)
        x = np.array([min(p[0] for p in points), max(p[0] for p in points) * 64])
        pane.plot(x, a + b * np.log2(x), "--", label="least squares, extended")
        pane.axhline(target, color="red", label=f"issue 46's target ({target})")
        pane.axhline(share(agreed, name), color="green", label="one judge's top 5, by another")
        pane.set_xscale("log", base=2)
        pane.set_xlabel("judged papers the model is fitted on")
        pane.set_ylabel(f"{name} share of the top 5, held out")
        pane.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
