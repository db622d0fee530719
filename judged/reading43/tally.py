"""READING.md's figures of step 2's verdicts, titled and title-less apart.

python judged/reading43/tally.py [VERDICTS_DIR]   # verdicts/ by default
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rounds import read  # noqa: E402


def figures(papers: list[dict], verdicts: dict[str, dict], areas: dict[str, list]) -> dict:
    said = [verdicts[p["id"]] for p in papers]
    tags = Counter(v.split(":")[0] for s in said for v in s["tags"].values())
    patterns = Counter(v.split(":")[1] for s in said for v in s["tags"].values() if ":" in v)
    top = Counter(s["top"] for s in said)
    roots = sum(1 for s in said if s["tags"] and "." not in next(iter(s["tags"])))
    wanted = sum(len(areas[p["id"]]) for p in papers)
    phrases = Counter(code for s in said for code in s["keyphrases"])
    types = Counter(v for s in said for v in s["types"].values())
    listed = sum(tags.values())
    return {
        "papers": len(papers),
        "papers with a WRONG tag": sum(
            any(v.startswith("WRONG") for v in s["tags"].values()) for s in said
        ),
        "WRONG share of listed tags": round(tags["WRONG"] / listed, 3) if listed else 0.0,
        "tags": dict(tags),
        "WRONG patterns": dict(patterns.most_common()),
        "top tag RIGHT / PARTLY / WRONG": [top["RIGHT"], top["PARTLY"], top["WRONG"]],
        "a root as the top tag": roots,
        "reader's areas missing, strict / lenient": [
            round(sum(len(s["missing_strict"]) for s in said) / wanted, 3),
            round(sum(len(s["missing_lenient"]) for s in said) / wanted, 3),
        ],
        "top-5 keyphrases accepted": round(phrases["ACCEPT"] / sum(phrases.values()), 3),
        "keyphrase codes": dict(phrases.most_common()),
        "types right / wrong / missing": [
            types["RIGHT"],
            types["WRONG"],
            sum(len(s["types_missing"]) for s in said),
        ],
    }


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "verdicts"
    papers = read(HERE / "papers.jsonl")
    areas = {r["id"]: r["areas"] for f in sorted((HERE / "areas").glob("*.jsonl")) for r in read(f)}
    verdicts = {r["id"]: r for f in sorted(folder.glob("*.jsonl")) for r in read(f)}
    missing = [p["id"] for p in papers if p["id"] not in verdicts or p["id"] not in areas]
    if missing:
        sys.exit(f"no areas or verdicts for {len(missing)} papers: {missing[:5]} ...")
    for name, chosen in (
        ("titled", [p for p in papers if p["title"]]),
        ("title-less", [p for p in papers if not p["title"]]),
        ("all", papers),
    ):
        print(json.dumps({"which": name, **figures(chosen, verdicts, areas)}))


if __name__ == "__main__":
    main()
