"""Where a cold start of `tagger tag` goes: each part that loads before the first paper is tagged,
timed in the order the command meets it, in a fresh process per run (medians of ``--runs``; the
interpreter's own start is not in them).

    python benchmarks/cold_start.py              # five fresh processes, the default backend
    python benchmarks/cold_start.py --backend static
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PARTS = [
    "import tagger.cli",
    "import the pipeline",
    "the taxonomy",
    "spaCy's pipeline",
    "the embedder",
    "the keyphrase model",
    "the rules",
    "the area vectors",
    "the fitted model",
    "the first paper",
]


def one_run(backend: str) -> list[float]:
    """In this (fresh) process: the seconds of each of PARTS."""
    import time

    laps, last = [], time.perf_counter()

    def lap() -> None:
        nonlocal last
        now = time.perf_counter()
        laps.append(now - last)
        last = now

    import tagger.cli  # noqa: F401

    lap()
    from tagger.config import TaggerConfig
    from tagger.records import Paper
    from tagger.tagging.pipeline import Tagger

    lap()
    tagger = Tagger.from_taxonomy(None, TaggerConfig(embedding_backend=backend))
    lap()
    _ = tagger.reader.nlp
    lap()
    tagger.embedder.embed([])
    lap()
    _ = tagger.reader.keyphrases
    lap()
    _ = tagger.reader.rules
    lap()
    _ = tagger.reader.area_vectors
    lap()
    for part in ("weigher", "neighbour_indexes", "area_model"):
        getattr(tagger.learned, part)
    lap()
    tagger.tag_batch([Paper(abstract="Policy gradients for offline reinforcement learning.")])
    lap()
    return laps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", default="onnx-int8")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child's run
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_run(args.backend)))
        return
    command = [sys.executable, __file__, "--one", "--backend", args.backend]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(command, check=True, capture_output=True, env=env)  # the caches made
    runs = [
        json.loads(subprocess.run(command, check=True, capture_output=True, env=env).stdout)
        for _ in range(args.runs)
    ]
    medians = [statistics.median(run[k] for run in runs) for k in range(len(PARTS))]
    print(f"cold start by part, --embedding-backend {args.backend}, medians of {args.runs}\n")
    print("| part | s |\n| --- | --- |")
    for part, seconds in zip(PARTS, medians, strict=True):
        print(f"| {part} | {seconds:.3f} |")
    total = sum(medians)
    print(f"| total (in the process; the interpreter's own start not included) | {total:.3f} |")


if __name__ == "__main__":
    main()
