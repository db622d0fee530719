"""The readers' verdicts on the new areas' candidates, by whether tagger lists them (a score of
0.7, the default --min-score, or more): python judged/new-areas/tally.py"""

import json
from pathlib import Path

HERE = Path(__file__).parent
items = [json.loads(line) for line in (HERE / "items.jsonl").open()]
readers = [
    [json.loads(line)["verdict"] for line in (HERE / f"verdicts-{n}.jsonl").open()] for n in (1, 2)
]
agree = sum(a == b for a, b in zip(*readers, strict=True))
print(f"{len(items)} items; the two readers agree on {agree}")
print("| area | scored >= 0.7 | right (reader 1, 2) | scored below | right (reader 1, 2) |")
print("| --- | --- | --- | --- | --- |")
for area in [*sorted({item["area"] for item in items}), "all"]:
    cells = []
    for listed in (True, False):
        rows = [
            k
            for k, item in enumerate(items)
            if area in ("all", item["area"]) and (item["score"] >= 0.7) == listed
        ]
        right = [sum(reader[k] == "RIGHT" for k in rows) for reader in readers]
        cells += [str(len(rows)), f"{right[0]}, {right[1]}"]
    print(f"| {area} | " + " | ".join(cells) + " |")
