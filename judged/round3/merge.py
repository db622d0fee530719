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
from pathlib import Path

HERE = Path(__file__).resolve().parent
JUDGED = HERE.parent
FIRST_ROUNDS = 500


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def main() -> int:
    draw = read(HERE / "draw.jsonl")
    first, second = {}, {}
    for path in sorted((HERE / "readers").glob("*.jsonl")):
        into = second if path.stem.startswith("second-") else first
        for record in read(path):
            if record["id"] in into:
                raise SystemExit(f"{path.name}: {record['id']} judged twice")
            into[record["id"]] = record["judged"]
    missing = [r["id"] for r in draw if r["id"] not in first]
    if missing:
        raise SystemExit(f"{len(missing)} drawn papers not judged: {missing[:5]}")
    earlier = read(JUDGED / "judged.jsonl")[:FIRST_ROUNDS]

    def line(record: dict, judgment: dict) -> str:
        keys = ("id", "source", "venue", "year", "title", "abstract")
        paper = {key: record[key] for key in keys} | {"judged": judgment}
        return json.dumps(paper, ensure_ascii=False) + "\n"

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
