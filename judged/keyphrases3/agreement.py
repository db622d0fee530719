"""What one judge's own top 5 scores by another judge's codes: the ceiling that agreement between
two judges puts on issue 46's top-5 figures.

    python judged/keyphrases3/agreement.py --tagger --table judged/keyphrases3/agreement.md

The 100 papers judged twice (``second.jsonl`` beside the first readers' codes in
``judged.jsonl`` and ``sealed.jsonl``; both judges coded the same pool of phrases by RULES.md, each
blind to the other). For each paper and each direction, a judge's **own top 5**: five of the
phrases that judge accepted, drawn at random, each phrase once by that judge's own lights (none
contained in another taken, none in one of the judge's "same" groups with another taken). It is
then coded by the *other* judge as a top 5 of tagger's is coded (corpus.judged_phrases.read_codes:
NOISE, FRAG, GEN, RED, ACCEPT). Each paper is drawn ``DRAWS`` times; every draw is seeded, so two
runs write the same table. No tagger output and no model is read for these rows; with
``--tagger``, two rows more: the installed tagger's top 5 of the same papers, coded by each judge
(the first judges' codes of the open papers are the ones its readers' model was fitted on, so
that row is in sample; the second judges' were never fitted on).

The rows say how closely two judges who follow the same written rules agree: what a top 5 of
phrases one judge accepts scores by the other's codes. A ranking could score more only by
choosing, better than a judge does, the phrases that every judge accepts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from frontier import CODES  # noqa: E402

DRAWS = 200
SEED = 2026120747


def read(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8") as lines:
        return {paper["id"]: paper for paper in map(json.loads, lines)}


def own_top(judged: dict, rng: random.Random) -> list[str]:
    """Five phrases the judge accepted, drawn at random, each term once by the judge's lights."""
    from tagger.corpus.evaluate import stem_phrase

    accepted = sorted(p for p, label in judged["keyphrases"].items() if label == "accept")
    rng.shuffle(accepted)
    groups = [{stem_phrase(p) for p in group} for group in judged.get("same") or ()]
    taken: list[str] = []
    for phrase in accepted:
        stem = f" {stem_phrase(phrase)} "
        others = [f" {stem_phrase(p)} " for p in taken]
        if any(stem in other or other in stem for other in others):
            continue
        if any(
            stem.strip() in group and other.strip() in group for group in groups for other in others
        ):
            continue
        taken.append(phrase)
        if len(taken) == 5:
            break
    return taken


def coded_by(other: dict, paper_id: str, top: list[str]) -> list[str | None]:
    from tagger.corpus.judged import Judgment
    from tagger.corpus.judged_phrases import read_codes
    from tagger.records import Paper

    judgment = Judgment.of_paper(Paper(id=paper_id, abstract="-", judged=other))
    return read_codes([SimpleNamespace(text=phrase) for phrase in top], judgment)


def judges() -> tuple[dict[str, dict], dict[str, dict]]:
    """The first judges' papers (open and sealed) and the second judges', by id."""
    return read(HERE / "judged.jsonl") | read(HERE / "sealed.jsonl"), read(HERE / "second.jsonl")


def judges_tops(first: dict[str, dict], second: dict[str, dict]) -> dict[str, Counter]:
    """The codes of each direction's own top 5s over the papers ``second`` holds (every draw),
    with both directions pooled last."""
    directions = {
        "the first judge's top 5, coded by the second": lambda i: (first[i], second[i]),
        "the second judge's top 5, coded by the first": lambda i: (second[i], first[i]),
    }
    out: dict[str, Counter] = {}
    for name, pair in directions.items():
        counts: Counter = Counter()
        for paper_id in sorted(second):
            own, other = (paper["judged"] for paper in pair(paper_id))
            for draw in range(DRAWS):
                rng = random.Random(f"{SEED}-{name}-{paper_id}-{draw}")
                counts.update(coded_by(other, paper_id, own_top(own, rng)))
        out[name] = counts
    out["both directions"] = sum(out.values(), Counter())
    return out


def share(counts: Counter, code: str) -> float:
    return counts[code] / sum(counts[c] for c in CODES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, help="Write the table here (Markdown).")
    parser.add_argument("--tagger", action="store_true", help="Add the tagger's top 5 (above).")
    args = parser.parse_args()
    first, second = judges()
    lines = [
        "| top 5 | papers | phrases | ACCEPT | GEN | RED | FRAG | NOISE | unjudged |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(row(name, len(second), c, DRAWS) for name, c in judges_tops(first, second).items()),
    ]
    if args.tagger:
        lines += [row(name, len(second), c, 1) for name, c in tagger_tops(first).items()]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.table:
        args.table.write_text(text, encoding="utf-8")
    return 0


def tagger_tops(first: dict[str, dict]) -> dict[str, Counter]:
    """The codes each judge gives the installed tagger's top 5 of the papers judged twice
    (``first``: the first judges' papers, by id)."""
    from untitled import coded

    from tagger import __version__
    from tagger.io.readers import read_papers

    papers = sorted(read_papers(HERE / "second.jsonl"), key=lambda paper: paper.id)
    by_first = [paper.model_copy(update={"judged": first[paper.id]["judged"]}) for paper in papers]
    return {
        f"tagger {__version__}'s top 5, coded by the first judge": coded(by_first),
        f"tagger {__version__}'s top 5, coded by the second judge": coded(papers),
    }


def row(name: str, papers: int, counts: Counter, draws: int) -> str:
    coded = sum(counts[code] for code in CODES)
    listed = (coded + counts[None]) // draws
    return (
        f"| {name} | {papers} | {listed} | "
        + " | ".join(f"{share(counts, code):.3f}" for code in CODES)
        + f" | {counts[None] // draws} |"
    )


if __name__ == "__main__":
    sys.exit(main())
