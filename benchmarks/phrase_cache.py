"""How often the phrase cache (TaggerConfig.phrase_cache) answers, by its size: the phrases the
keyphrase extractor asks its cache for over N abstracts of the 2020-2023 corpus in data/, then an
LRU of each size simulated over that sequence (a batch's phrases once each, as
embedding_cache.CachedEmbedder sees them). Fast mode, so that it takes a minute.

    python benchmarks/phrase_cache.py --n 4000
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import OrderedDict
from pathlib import Path

SIZES = (2_000, 5_000, 10_000, 20_000, 50_000)


def asked_for(n: int, data: Path) -> list[list[str]]:
    """The phrases each batch asked the cache for, tagging ``n`` corpus abstracts."""
    from tagger.config import TaggerConfig
    from tagger.language import embedding_cache
    from tagger.records import Paper
    from tagger.tagging.pipeline import Tagger

    asked: list[list[str]] = []
    embed = embedding_cache.CachedEmbedder.embed

    def spy(self, texts):
        asked.append(sorted(set(texts)))
        return embed(self, texts)

    embedding_cache.CachedEmbedder.embed = spy
    tagger = Tagger.from_taxonomy(None, TaggerConfig(embedding_backend="static"))
    with open(data / "corpus-2020-2023.jsonl", encoding="utf-8") as lines:
        records = [json.loads(line) for line in itertools.islice(lines, n)]
    papers = [Paper(title=r.get("title"), abstract=r["abstract"]) for r in records]
    size = tagger.config.batch_size
    for start in range(0, len(papers), size):
        tagger.tag_batch(papers[start : start + size])
    return asked


def hit_rate(asked: list[list[str]], size: int) -> float:
    cache: OrderedDict[str, None] = OrderedDict()
    hits = lookups = 0
    for batch in asked:
        for phrase in batch:
            lookups += 1
            if phrase in cache:
                hits += 1
                cache.move_to_end(phrase)
            else:
                cache[phrase] = None
        while len(cache) > size:
            cache.popitem(last=False)
    return hits / lookups if lookups else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "data")
    args = parser.parse_args()
    asked = asked_for(args.n, args.data)
    print(f"{args.n:,} corpus abstracts, {sum(map(len, asked)):,} phrase lookups\n")
    print("| cache entries | answered from the cache |\n| --- | --- |")
    for size in SIZES:
        print(f"| {size:,} | {hit_rate(asked, size):.3f} |")


if __name__ == "__main__":
    main()
