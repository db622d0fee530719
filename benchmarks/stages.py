"""Where the time of `tagger tag` goes, per abstract: CPU milliseconds by stage, one process,
one thread, start-up (imports and model loads) reported apart.

    python benchmarks/stages.py                          # 500 unique abstracts, this checkout
    PYTHONPATH=/tmp/old python benchmarks/stages.py      # another checkout of tagger (a worktree)
    python benchmarks/stages.py --backend torch          # a backend of this checkout

Stages are exclusive (a stage's time excludes the stages it calls): spaCy (tokens and POS tags),
text analysis (spans, sentences, acronyms), document embedding, phrase embedding, keyphrases (the
rest of extraction: candidates, features, KeyBERT's ranking, the acceptance model, selection),
tags (rules, scores, weigher) and the rest (reading, JSON, writing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import unique_abstracts  # noqa: E402

STAGES = {  # stage -> (module, owner, attribute) wrapped to time it
    "spaCy": ("tagger.tagging.reading", "Reader", "analyse"),
    "text analysis": ("tagger.tagging.reading", None, "analyse"),
    "document embedding": ("tagger.language.keyphrases", "KeyphraseExtractor", "embed_papers"),
    "phrase embedding": ("tagger.language.embedding_cache", "CachedEmbedder", "embed"),
    "keyphrases": ("tagger.language.keyphrases", "KeyphraseExtractor", "extract"),
    "rules": ("tagger.taxonomy.rules", "RuleSet", "match"),
    "tags": ("tagger.tagging.pipeline", None, "tagged_papers"),
}


class Clock:
    """Exclusive CPU time per stage: time spent in a nested stage is that stage's alone."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.stack: list[list] = []  # [stage, started, time spent in stages below]

    def wrap(self, stage: str, function):
        def timed(*args, **kwargs):
            self.stack.append([stage, time.process_time(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                name, started, below = self.stack.pop()
                total = time.process_time() - started
                self.spent[name] += total - below
                if self.stack:
                    self.stack[-1][2] += total

        return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "data")
    parser.add_argument("--backend", help="TaggerConfig.embedding_backend (if it has one)")
    args = parser.parse_args()

    import importlib

    started = time.process_time()
    import tagger
    from tagger import Tagger, TaggerConfig, tag_files

    config = TaggerConfig(embedding_backend=args.backend) if args.backend else TaggerConfig()
    clock = Clock()
    for stage, (module, owner, attribute) in STAGES.items():
        try:
            where = importlib.import_module(module)
        except ModuleNotFoundError:  # a checkout from before the subpackages (tagger 0.6.0)
            where = importlib.import_module("tagger." + module.rsplit(".", 1)[-1])
        if owner == "Reading" and not hasattr(where, owner):  # tagger 0.6.0 and earlier
            owner = "_Read"
        target = getattr(where, owner) if owner else where
        setattr(target, attribute, clock.wrap(stage, getattr(target, attribute)))
    rows = unique_abstracts(args.data, args.n + 4)
    workdir = Path(tempfile.mkdtemp(prefix="tagger-profile-"))
    warm, source = workdir / "warm.jsonl", workdir / "abstracts.jsonl"
    warm.write_text("".join(json.dumps(r) + "\n" for r in rows[:4]))
    source.write_text("".join(json.dumps(r) + "\n" for r in rows[4:]))
    tagger_ = Tagger.from_taxonomy(config=config)
    tag_files(tagger_, [warm], workdir / "warm.out.jsonl", workers=1)  # loads every model
    startup = time.process_time() - started
    clock.spent = dict.fromkeys(STAGES, 0.0)
    began = time.process_time()
    tag_files(tagger_, [source], workdir / "out.jsonl", workers=1)
    total = time.process_time() - began
    n = len(rows) - 4
    rest = total - sum(clock.spent.values())
    print(
        f"tagger {tagger.__version__ if hasattr(tagger, '__version__') else ''} from "
        f"{Path(tagger.__file__).parent}, {getattr(tagger_.embedder, 'name', '?')}"
    )
    print(
        f"{n} abstracts, one thread; start-up (imports, models, 4 warm-up abstracts) "
        f"{startup:.1f} CPU s\n"
    )
    print("| stage | ms per abstract | share |")
    print("| --- | --- | --- |")
    for stage, spent in [*clock.spent.items(), ("the rest (read, JSON, write)", rest)]:
        print(f"| {stage} | {1000 * spent / n:.1f} | {spent / total:.0%} |")
    print(f"| **total** | **{1000 * total / n:.1f}** | {n / total:.1f} abstracts per CPU s |")


if __name__ == "__main__":
    main()
