"""Abstracts per second against peak memory, one point per system, from `bench.py --save`.

    python benchmarks/bench.py --save /tmp/bench.json
    python benchmarks/plot.py /tmp/bench.json docs/benchmarks.png

Speed is on a log scale (plain KeyBERT and YAKE are two orders of magnitude apart); memory is
the peak RSS of the system's whole process tree.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

FAMILIES = {  # system name prefix -> colour: KeyBERT, YAKE, tagger
    "keybert": "tab:red",
    "yake": "tab:green",
    "keyphrases": "tab:blue",
    "tag-static": "tab:purple",  # the fast mode (before "tag": the first prefix that fits wins)
    "tag": "tab:blue",
}


def plot(figures: dict, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    placed: list[tuple[float, float]] = []  # points labelled so far: a close one's goes below
    for system, r in figures["results"].items():
        colour = next((c for p, c in FAMILIES.items() if system.startswith(p)), "tab:gray")
        marker = "*" if system in ("tag", "tag-static") else "o"  # the default, the fast mode
        x, y = r["rss"] / 2**20, r["rate"]
        ax.scatter([x], [y], s=160 if marker == "*" else 50, c=colour, marker=marker, zorder=3)
        crowded = any(abs(x - px) < 60 and abs(math.log10(y / py)) < 0.08 for px, py in placed)
        placed.append((x, y))
        offset = (6, -12) if crowded else (6, 4)
        ax.annotate(system, (x, y), textcoords="offset points", xytext=offset, fontsize=9)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("peak RSS, whole process tree (MiB)")
    ax.set_ylabel("abstracts per second (log scale)")
    ax.set_title(f"{figures['n']:,} unique abstracts, one run, 2 cores (benchmarks/bench.py)")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_xlim(left=0)
    fig.tight_layout()
    fig.savefig(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("figures", type=Path, help="the JSON file of bench.py --save")
    parser.add_argument("output", type=Path, help="the PNG to write")
    args = parser.parse_args()
    plot(json.loads(args.figures.read_text(encoding="utf-8")), args.output)


if __name__ == "__main__":
    main()
