"""What the area model costs `tagger tag`: CPU time of tagging the same papers with and without
it (alternating, two rounds, the phrase-embedding cache warm for both), and the memory the loaded
model holds.

    python benchmarks/area_cost.py              # 200 ICLR 2026 dev abstracts
    python benchmarks/area_cost.py --n 100
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    import numpy as np
    import psutil

    from tagger import Tagger
    from tagger.io.readers import read_papers
    from tagger.tagging.areas import AreaModel
    from tagger.tagging.model import FittedModel

    process = psutil.Process(os.getpid())
    before = process.memory_info().rss  # first, before anything else loads it
    model = AreaModel.load(FittedModel.load().path("areas"))
    model.probabilities([np.zeros(384, np.int8)], ["graph neural networks"])
    print(f"the area model in memory: {(process.memory_info().rss - before) / 2**20:.1f} MB")

    papers = list(read_papers(ROOT / "data" / "iclr2026-dev.jsonl"))[: args.n]
    tagger = Tagger.from_taxonomy(None)
    list(tagger.tag_many(papers))  # models loaded, phrase embeddings cached for both runs
    area = tagger.learned.area_model
    assert area is not None, "the packaged model has no area model"
    seconds = {"with": 0.0, "without": 0.0}
    for order in (("with", "without"), ("without", "with")):
        for mode in order:
            tagger.learned.__dict__["area_model"] = area if mode == "with" else None
            start = time.process_time()
            list(tagger.tag_many(papers))
            seconds[mode] += time.process_time() - start
    ratio = seconds["with"] / seconds["without"]
    print(
        f"CPU s, {args.n} papers x 2: with {seconds['with']:.1f}, without "
        f"{seconds['without']:.1f}, ratio {ratio:.3f}"
    )


if __name__ == "__main__":
    main()
