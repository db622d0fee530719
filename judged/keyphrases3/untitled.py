"""Issue 46's fifth item, "title-less papers get keyphrases as good as titled ones", measured on
the same papers: tagger's top 5 of each titled open paper, once with its title and once without.

    python judged/keyphrases3/untitled.py --table judged/keyphrases3/untitled.md

The 567 open papers of ``judged.jsonl`` that have a title, listed by the installed tagger (its
default model) twice, and each top 5 coded as readers code it (corpus.judged_phrases.read_codes);
the judges coded every phrase of the pool, the title's and the abstract's, so both lists are
coded by the same judgments. Beside them, the 283 open papers drawn without a title. The shipped
readers' model was fitted on these 850 papers (docs/keyphrase-ranking.md), so every row is in
sample for it; the two rows of the titled papers differ only in the title.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from frontier import CODES  # noqa: E402

BATCH = 64


@cache
def reader():
    """The installed tagger's reader with its default settings, made once."""
    from tagger.config import TaggerConfig
    from tagger.tagging.reading import Reader
    from tagger.taxonomy.loading import load_taxonomy

    return Reader(load_taxonomy(), TaggerConfig())


def coded(papers: list) -> Counter:
    """The codes of the installed tagger's top 5 of ``papers``."""
    from tagger.corpus.judged import Judgment
    from tagger.corpus.judged_phrases import read_codes

    counts: Counter = Counter()
    for start in range(0, len(papers), BATCH):
        batch = papers[start : start + BATCH]
        for paper, listed in zip(batch, reader().extract_keyphrases(batch), strict=True):
            counts.update(read_codes(listed[:5], Judgment.of_paper(paper)))
    return counts


def row(name: str, papers: int, counts: Counter) -> str:
    judged = sum(counts[code] for code in CODES)
    return (
        f"| {name} | {papers} | {judged} | "
        + " | ".join(f"{counts[code] / judged:.3f}" for code in CODES)
        + f" | {counts[None]} |"
    )


def main() -> int:
    from tagger.io.readers import read_papers

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, help="Write the table here (Markdown).")
    args = parser.parse_args()
    papers = list(read_papers(HERE / "judged.jsonl"))
    titled = [paper for paper in papers if paper.title]
    untitled = [paper for paper in papers if not paper.title]
    stripped = [paper.model_copy(update={"title": None}) for paper in titled]
    lines = [
        "| top 5 | papers | judged phrases | ACCEPT | GEN | RED | FRAG | NOISE | unjudged |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        row("titled papers, with their titles", len(titled), coded(titled)),
        row("the same papers, titles removed", len(stripped), coded(stripped)),
        row("papers drawn without a title", len(untitled), coded(untitled)),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.table:
        args.table.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
