"""Draw the papers of issue 43's reading of tagger's own output (../shared/READING.md): 80 ICLR
2026 dev papers that no judged file holds (so no fit saw them), half of them read without their
title, in four batches of 20, before any of them is tagged.

    python judged/reading43/draw.py   # writes judged/reading43/papers.jsonl and batch-N.md
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from rounds import read  # noqa: E402

SEED = 4301
N, BATCHES = 80, 4


def main() -> None:
    judged = set()  # the ids and abstracts of every judged paper
    for name in ("judged.jsonl", "sealed.jsonl", "second-reader.jsonl"):
        for row in read(ROOT / "judged" / name):
            judged |= {row["id"], row["abstract"].strip()}
    papers = read(ROOT / "data/iclr2026-dev.jsonl")
    fresh = [p for p in papers if p["id"] not in judged and p["abstract"].strip() not in judged]
    drawn = random.Random(SEED).sample(fresh, N)
    rows = [
        {
            "id": paper["id"],
            "batch": k % BATCHES + 1,
            "title": paper["title"] if k % 2 == 0 else None,  # every other one read untitled
            "abstract": paper["abstract"],
        }
        for k, paper in enumerate(drawn)
    ]
    with (HERE / "papers.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    for batch in range(1, BATCHES + 1):
        lines = [f"# Batch {batch}: {N // BATCHES} papers", ""]
        for row in (r for r in rows if r["batch"] == batch):
            title = f"Title: {row['title']}" if row["title"] else "(no title)"
            lines += [f"## {row['id']}", "", title, "", row["abstract"].strip(), ""]
        (HERE / f"batch-{batch}.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"{N} of {len(fresh)} unjudged ICLR 2026 dev papers -> {HERE / 'papers.jsonl'}")


if __name__ == "__main__":
    main()
