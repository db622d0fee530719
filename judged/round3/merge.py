"""Merge the third round's judgments into the judged set, as the readers wrote them.

    python judged/round3/merge.py

Reads draw.jsonl (the papers, drawn before any judging) and readers/NN.jsonl (each reader's
file, checked for form by the checker the readers ran); writes

- ``judged/judged.jsonl``: the first two rounds' 500 papers as they were, then the 2,550 papers of
  this round that are not sealed;
- ``judged/sealed.jsonl``: the 450 sealed papers (never fitted on or tuned against; measured once);
- ``judged/second-reader.jsonl``: the 200 papers a second reader judged, with that reader's
  judgment (for the agreement between readers, judged/agreement.py).

Each paper line: {"id", "source", "venue", "year", "title", "abstract", "judged"}; the judgment
is copied unchanged. Nothing is read from outside this directory and judged/judged.jsonl.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
JUDGED = HERE.parent
sys.path.insert(0, str(JUDGED))

from rounds import judgments, line, read  # noqa: E402

FIRST_ROUNDS = 500


def main() -> int:
    draw = read(HERE / "draw.jsonl")
    first, second = judgments(HERE, draw)
    earlier = read(JUDGED / "judged.jsonl")[:FIRST_ROUNDS]

    with (JUDGED / "judged.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in earlier)
        out.writelines(line(r, first[r["id"]]) for r in draw if not r["sealed"])
    with (JUDGED / "sealed.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(line(r, first[r["id"]]) for r in draw if r["sealed"])
    with (JUDGED / "second-reader.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(line(r, second[r["id"]]) for r in draw if r["second"])
    print(
        f"judged.jsonl: {FIRST_ROUNDS} + {sum(not r['sealed'] for r in draw)}; "
        f"sealed.jsonl: {sum(r['sealed'] for r in draw)}; second-reader.jsonl: {len(second)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
