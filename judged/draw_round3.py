"""Draw the papers of the judged set's third round (2026-12-01), before any of them is judged.

    python judged/draw_round3.py [DATA_DIR] > judged/round3/draw.jsonl

3,000 papers none of which is already judged, no abstract twice, with a fixed seed (SEED):

- 2,500 from ``corpus-2020-2023.jsonl`` (ICLR, ICML and NeurIPS 2020-2023, no labels);
- 400 from ``iclr2024-topics.jsonl`` and 100 from ``iclr2025-keywords.jsonl`` (not yet judged).

None is drawn from ``iclr2026-dev.jsonl``: its 314 unjudged papers stay in no fit, so that the
agreement with ICLR 2026 authors is measured on papers the learned parts never saw.

Of the 3,000, a seeded 1,050 have their title removed (``title`` null): the form paper lists give.
Then, still before any judging, a seeded 15% (450: 158 without a title, 292 with one) is marked
``sealed``: those papers are never used to fit, tune rules, thresholds or features, and are
measured once when the work is done (judged/sealed.jsonl). And a seeded 200 of the others is
marked ``second``: a second reader judges them independently, for the agreement between readers.

Judges see ids, titles (when kept) and abstracts, in batches of 50 mixing every source
(``batch``); never author labels or keywords, which are not written here. Each output line:
{"id", "source", "venue", "year", "title", "abstract", "sealed", "second", "batch"}.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261202
DRAW = {"corpus-2020-2023": 2_500, "iclr2024-topics": 400, "iclr2025-keywords": 100}
UNTITLED = 1_050
SEALED_SHARE = 0.15
SECOND_READER = 200
BATCH = 50


def _key(abstract: str) -> str:
    return " ".join(abstract.split()).lower()


def main(argv: list[str]) -> int:
    data = Path(argv[1]) if len(argv) > 1 else ROOT / "data"
    judged = [json.loads(line) for line in (ROOT / "judged" / "judged.jsonl").open()]
    for record in draw(data, judged, SEED, DRAW, UNTITLED, SECOND_READER):
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


def later_round(
    argv: list[str], seed: int, counts: dict[str, int], untitled: int, second: int
) -> int:
    """A round after the third, drawn as :func:`draw` draws, none of it already judged or sealed,
    written to stdout (``argv[1]``: the data directory, data/ by default)."""
    data = Path(argv[1]) if len(argv) > 1 else ROOT / "data"
    taken = [
        json.loads(line)
        for name in ("judged.jsonl", "sealed.jsonl")
        for line in (ROOT / "judged" / name).open(encoding="utf-8")
    ]
    for record in draw(data, taken, seed, counts, untitled, second):
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


def draw(
    data: Path,
    taken_records: list[dict],
    seed: int,
    counts: dict[str, int],
    untitled_count: int,
    second_count: int,
) -> list[dict]:
    """The papers of a round: ``counts`` of each file of ``data`` (none of ``taken_records``,
    no abstract twice), ``untitled_count`` of them with the title removed, SEALED_SHARE of each
    kind sealed, ``second_count`` of the others for a second reader, in batches of BATCH."""
    taken_ids = {r["id"] for r in taken_records}
    taken = {_key(r["abstract"]) for r in taken_records}
    rng = random.Random(seed)
    drawn: list[dict] = []
    for name, count in counts.items():
        records = [json.loads(line) for line in (data / f"{name}.jsonl").open(encoding="utf-8")]
        rng.shuffle(records)
        chosen = 0
        for record in records:
            if chosen == count:
                break
            key = _key(record["abstract"])
            if record["id"] in taken_ids or key in taken:
                continue
            taken.add(key)
            chosen += 1
            venue, year = record.get("venue"), record.get("year")
            source = f"{name}/{str(venue).lower()}{year}" if name.startswith("corpus") else name
            drawn.append(
                {
                    "id": record["id"],
                    "source": source,
                    "venue": venue,
                    "year": year,
                    "title": record.get("title"),
                    "abstract": record["abstract"],
                }
            )
        if chosen < count:
            raise SystemExit(f"{name}: only {chosen} papers to draw from")
    untitled = set(rng.sample(range(len(drawn)), untitled_count))
    for i, record in enumerate(drawn):
        if i in untitled:
            record["title"] = None
            record["source"] += "/untitled"
    # the sealed split keeps the share of title-less papers: 15% of each kind
    sealed: set[str] = set()
    for kind in (True, False):
        ids = [r["id"] for r in drawn if (r["title"] is None) is kind]
        sealed.update(rng.sample(ids, round(len(ids) * SEALED_SHARE)))
    open_ids = [r["id"] for r in drawn if r["id"] not in sealed]
    second = set(rng.sample(open_ids, second_count))
    order = list(range(len(drawn)))
    rng.shuffle(order)  # batches mix sources, titled and untitled, sealed and not
    for position, i in enumerate(order):
        record = drawn[i]
        record["sealed"] = record["id"] in sealed
        record["second"] = record["id"] in second
        record["batch"] = position // BATCH + 1
    return [drawn[i] for i in order]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
