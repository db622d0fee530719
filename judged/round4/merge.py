"""Merge the fourth round's judgments into the judged set, as the readers wrote them.

    python judged/round4/merge.py

Reads draw.jsonl (the papers, drawn before any judging: judged/draw_round4.py) and
readers/NN.jsonl (each reader's file, checked for form by the checker the readers ran); appends

- to ``judged/judged.jsonl``: the 850 papers of this round that are not sealed;
- to ``judged/sealed.jsonl``: the 150 sealed papers (never fitted on or tuned against);
- to ``judged/second-reader.jsonl``: the 200 papers a second reader judged, with that reader's
  judgment (judged/agreement.py).

The lines already there are kept as they are; a paper already in a file is an error (the round is
merged once). Each paper line: {"id", "source", "venue", "year", "title", "abstract", "judged"};
the judgment is copied unchanged.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
JUDGED = HERE.parent
sys.path.insert(0, str(JUDGED))

from rounds import judgments, line, read  # noqa: E402


def main() -> int:
    draw = read(HERE / "draw.jsonl")
    first, second = judgments(HERE, draw)
    wanted = [r["id"] for r in draw if r["second"]]
    if sorted(wanted) != sorted(second):
        raise SystemExit("the second reader's papers are not the ones drawn for one")

    parts = {
        "judged.jsonl": [line(r, first[r["id"]]) for r in draw if not r["sealed"]],
        "sealed.jsonl": [line(r, first[r["id"]]) for r in draw if r["sealed"]],
        "second-reader.jsonl": [line(r, second[r["id"]]) for r in draw if r["second"]],
    }
    ours = {r["id"] for r in draw}
    for name in parts:
        there = {record["id"] for record in read(JUDGED / name)}
        if there & ours:
            raise SystemExit(f"{name} already holds {len(there & ours)} papers of this round")
    for name, lines in parts.items():
        with (JUDGED / name).open("a", encoding="utf-8") as out:
            out.writelines(lines)
        print(f"{name}: {len(lines)} papers added")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
