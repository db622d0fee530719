"""What merging a judged round reads and writes, for every round's merge.py: the readers' files
of a round collected, and a judged paper written as a line of the judged set."""

from __future__ import annotations

import json
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


def line(record: dict, judgment: dict) -> str:
    """A drawn paper and its judgment as a line of the judged set."""
    keys = ("id", "source", "venue", "year", "title", "abstract")
    paper = {key: record[key] for key in keys} | {"judged": judgment}
    return json.dumps(paper, ensure_ascii=False) + "\n"
