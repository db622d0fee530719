"""What merging a judged round reads and writes: the readers' files of a round collected, and a
judged paper written as a line of the judged set. Rounds 4 on are merged by it:

    python judged/rounds.py judged/round5            # into the judged set
    python judged/rounds.py judged/round5 --to FILE  # or its unsealed papers into FILE, no merge

A round's directory holds draw.jsonl (the papers, drawn before any judging: judged/draw_roundN.py)
and readers/NN.jsonl (each reader's file as written, checked for form by the checker the readers
ran; a second reader's are second-K.jsonl). Merging appends its unsealed papers to judged.jsonl,
its sealed ones to sealed.jsonl, and the second reader's judgments to second-reader.jsonl; each
paper line: {"id", "source", "venue", "year", "title", "abstract", "judged"}, the judgment copied
unchanged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def judgments(here: Path, draw: list[dict]) -> tuple[dict[str, dict], dict[str, dict]]:
    """The first readers' and the second reader's judgments, by paper id, from
    ``here/readers/*.jsonl`` (a second reader's files are named second-K.jsonl); a paper judged
    twice by one kind of reader, or a drawn paper no first reader judged, is an error."""
    first: dict[str, dict] = {}
    second: dict[str, dict] = {}
    for path in sorted((here / "readers").glob("*.jsonl")):
        into = second if path.stem.startswith("second-") else first
        for record in read(path):
            if record["id"] in into:
                raise SystemExit(f"{path.name}: {record['id']} judged twice")
            into[record["id"]] = record["judged"]
    missing = [r["id"] for r in draw if r["id"] not in first]
    if missing:
        raise SystemExit(f"{len(missing)} drawn papers not judged: {missing[:5]}")
    return first, second


def paper(record: dict, judgment: dict) -> dict:
    """A drawn paper and its judgment as a paper of the judged set."""
    keys = ("id", "source", "venue", "year", "title", "abstract")
    return {key: record[key] for key in keys} | {"judged": judgment}


def line(record: dict, judgment: dict) -> str:
    """A drawn paper and its judgment as a line of the judged set."""
    return json.dumps(paper(record, judgment), ensure_ascii=False) + "\n"


def write_round(here: Path, out: Path) -> int:
    """The papers of a round (``here``) that are not sealed, with their first reader's judgment,
    in one judged file ``out``: a round judged after a fit measures that fit on papers it never
    saw (`tagger eval --judged OUT`) before the round is merged. The sealed ones stay unread."""
    draw = [r for r in read(here / "draw.jsonl") if not r["sealed"]]
    first, _ = judgments(here, draw)
    with out.open("x", encoding="utf-8") as written:
        written.writelines(line(r, first[r["id"]]) for r in draw)
    print(f"{out}: {len(draw)} papers")
    return 0


def append(here: Path) -> int:
    """Append a round (``here``: its draw.jsonl and readers/) to the judged set: its papers that
    are not sealed to judged.jsonl, the sealed ones to sealed.jsonl, and those a second reader
    judged, with that reader's judgment, to second-reader.jsonl. The lines already there are
    kept as they are; a paper of the round already in a file is an error (a round is merged
    once)."""
    judged = here.parent
    draw = read(here / "draw.jsonl")
    first, second = judgments(here, draw)
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
        there = {record["id"] for record in read(judged / name)}
        if there & ours:
            raise SystemExit(f"{name} already holds {len(there & ours)} papers of this round")
    for name, lines in parts.items():
        with (judged / name).open("a", encoding="utf-8") as out:
            out.writelines(lines)
        print(f"{name}: {len(lines)} papers added")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 3 and args[1] == "--to":
        raise SystemExit(write_round(Path(args[0]), Path(args[2])))
    if len(args) != 1:
        raise SystemExit("usage: python judged/rounds.py ROUND_DIR [--to FILE]")
    raise SystemExit(append(Path(args[0])))
