"""A blind reading of 0.11.0's keyphrases against the readers' ranking's (0.12.0), side by side:
50 ICLR 2026 dev papers (no fit saw them; every second one without its title), each paper's two
top-5 lists shown as List A and List B in a random order, coded by two readers (25 papers each)
by READING.md's codes (blind/RULES.md), who saw neither the order's key nor any score.

    python judged/keyphrases3/blind.py make     # blind/batch1.md, batch2.md, key.json
    python judged/keyphrases3/blind.py tally    # the codes (blind/codes-*.jsonl), unblinded
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent / "blind"
DEV = Path(__file__).resolve().parents[2] / "data" / "iclr2026-dev.jsonl"
CODES = ("ACCEPT", "GEN", "RED", "FRAG", "NOISE")


def make() -> None:
    from tagger.config import TaggerConfig
    from tagger.io.readers import read_papers
    from tagger.language.keyphrases import AcceptanceModel
    from tagger.records import Paper
    from tagger.tagging.reading import Reader
    from tagger.taxonomy.loading import load_taxonomy

    rng = random.Random(2026120746)
    sample = rng.sample(list(read_papers(DEV)), 50)
    sample = [
        p if n % 2 == 0 else Paper(id=p.id, title=None, abstract=p.abstract)
        for n, p in enumerate(sample)
    ]
    reader = Reader(load_taxonomy(), TaggerConfig())
    shipped = AcceptanceModel.load()
    lists = {}
    for name, model in (("old", replace(shipped, ranking=None)), ("new", shipped)):
        reader.keyphrases.model = model
        lists[name] = [[k.text for k in kps[:5]] for kps in reader.extract_keyphrases(sample)]
    key = {}
    for batch in range(2):
        lines = ["# Papers to code (read RULES.md first)", ""]
        for n in range(batch * 25, batch * 25 + 25):
            paper = sample[n]
            first = rng.random() < 0.5
            shown = (
                (lists["new"][n], lists["old"][n]) if first else (lists["old"][n], lists["new"][n])
            )
            key[paper.id] = "A=new" if first else "A=old"
            lines += [f"## paper {paper.id}", ""]
            if paper.title:
                lines += [f"Title: {paper.title}", ""]
            lines += [f"Abstract: {paper.abstract}", ""]
            lines += ["List A: " + " | ".join(shown[0]), "", "List B: " + " | ".join(shown[1]), ""]
        (HERE / f"batch{batch + 1}.md").write_text("\n".join(lines), encoding="utf-8")
    record = {"key": key, "lists": lists, "ids": [p.id for p in sample]}
    (HERE / "key.json").write_text(json.dumps(record, indent=1), encoding="utf-8")


def tally() -> None:
    record = json.loads((HERE / "key.json").read_text(encoding="utf-8"))
    titled = {paper_id: n % 2 == 0 for n, paper_id in enumerate(record["ids"])}
    counts = {(name, t): Counter() for name in ("old", "new") for t in (True, False)}
    for path in sorted(HERE.glob("codes-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            a = record["key"][row["paper"]].split("=")[1]
            name = a if row["list"] == "A" else {"old": "new", "new": "old"}[a]
            counts[(name, titled[row["paper"]])].update(row["codes"])
    print(
        "| keyphrases | phrases | " + " | ".join(CODES) + " | ACCEPT, titled | ACCEPT, untitled |"
    )
    print("| --- | --- |" + " --- |" * (len(CODES) + 2))
    for name, label in (("old", "0.11.0"), ("new", "the readers' ranking (0.12.0)")):
        both = counts[(name, True)] + counts[(name, False)]
        n = sum(both.values())
        shares = [f"{both[c] / n:.3f}" for c in CODES]
        by = [counts[(name, t)]["ACCEPT"] / sum(counts[(name, t)].values()) for t in (True, False)]
        print(f"| {label} | {n} | " + " | ".join(shares) + f" | {by[0]:.3f} | {by[1]:.3f} |")


if __name__ == "__main__":
    {"make": make, "tally": tally}[sys.argv[1]]()
