"""What a paper's length costs: the CPU time of reading and tagging one paper of 4,000 and of
32,000 characters of repetitive text (the worst case for spans and overlaps), with the fast
mode's static table, and their ratio: eight times the text should cost about eight times the
time, not sixty-four (it took 41 times before spans were indexed). The target is a ratio below
20, the best of ``--repeat`` runs each.

    python benchmarks/paper_length.py
"""

from __future__ import annotations

import argparse
import time

UNIT = "Graph neural networks (GNNs) for multi-agent reinforcement learning. "


def cost(tagger, chars: int, repeat: int) -> float:
    from tagger.records import Paper

    paper = Paper(abstract=(UNIT * (chars // len(UNIT) + 1))[:chars])
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        tagger.tag(paper)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each length; the best.")
    args = parser.parse_args()
    from tagger.config import TaggerConfig
    from tagger.tagging.pipeline import Tagger

    tagger = Tagger.from_taxonomy(None, TaggerConfig(embedding_backend="static"))
    cost(tagger, 1_000, 1)  # models loaded
    short, long = cost(tagger, 4_000, args.repeat), cost(tagger, 32_000, args.repeat)
    ratio = long / short
    verdict = "met" if ratio < 20 else "missed"
    print(f"4,000 characters: {short:.3f} s CPU; 32,000: {long:.3f} s; ratio {ratio:.1f}")
    print(f"target: a ratio below 20 (linear: 8) — {verdict}")


if __name__ == "__main__":
    main()
