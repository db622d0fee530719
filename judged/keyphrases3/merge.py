"""Merge the third round of the judged keyphrase set: each session's codes (readers/*.jsonl, as
the judges wrote them under RULES.md) checked and joined to the drawn papers (draw.jsonl).

    python judged/keyphrases3/merge.py [DATA_DIR]

Writes judged.jsonl (the 850 open papers: what the keyphrase model is fitted and tuned on),
sealed.jsonl (the 150 sealed: measured once, never fitted or tuned on) and second.jsonl (the
second reader's codes of 100 open papers, for agreement only), each line a judged paper in the
judged set's format (judged/README.md): ``judged.keyphrases`` maps every phrase of the paper's
pool to a label (ACCEPT accept, GEN generic, FRAG fragment, NOISE noise) and ``judged.same``
holds the groups of accepted phrases that name one thing. After the codes are checked, the
authors' keywords that ``DATA_DIR`` holds for a paper are added as ``keywords`` (the judges never
saw them), so that `tagger eval --judged` gives F1@5 beside acceptance. Then prints the two
readers' agreement.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LABEL = {"ACCEPT": "accept", "GEN": "generic", "FRAG": "fragment", "NOISE": "noise"}
DATA = ("corpus-2020-2023", "iclr2024-topics", "iclr2025-keywords")


def read_session(path: Path, pools: dict[str, list[str]]) -> dict[str, dict]:
    """A session's lines by paper id, each checked against its pool; SystemExit naming the fault."""
    found = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        value = json.loads(line)
        where = f"{path.name} line {number} ({value.get('id')})"
        pool = pools.get(value.get("id"))
        if pool is None:
            raise SystemExit(f"{where}: no such paper drawn")
        codes = value.get("codes", {})
        if set(codes) != set(pool) or len(codes) != len(pool):
            raise SystemExit(f"{where}: its codes are not its pool's phrases, each once")
        if bad := {code for code in codes.values() if code not in LABEL}:
            raise SystemExit(f"{where}: unknown codes {sorted(bad)}")
        for group in value.get("same") or []:
            if len(group) < 2 or any(codes.get(p) != "ACCEPT" for p in group):
                raise SystemExit(f"{where}: a 'same' group of phrases not all accepted: {group}")
        found[value["id"]] = value
    return found


def judged_line(record: dict, coded: dict, keywords: dict[str, list[str]]) -> dict:
    line = {k: record[k] for k in ("id", "source", "venue", "year", "title", "abstract")}
    if record["id"] in keywords:
        line["keywords"] = keywords[record["id"]]
    line["judged"] = {
        "keyphrases": {phrase: LABEL[code] for phrase, code in coded["codes"].items()},
        "same": coded.get("same") or [],
    }
    return line


def main(argv: list[str]) -> int:
    data = Path(argv[1]) if len(argv) > 1 else ROOT / "data"
    draw = [json.loads(line) for line in (HERE / "draw.jsonl").open(encoding="utf-8")]
    pools = {(v := json.loads(line))["id"]: v["pool"] for line in (HERE / "pool.jsonl").open()}
    first: dict[str, dict] = {}
    second: dict[str, dict] = {}
    for path in sorted((HERE / "readers").glob("*.jsonl")):
        target = second if path.name.startswith("r2-") else first
        for paper_id, value in read_session(path, pools).items():
            if paper_id in target:
                raise SystemExit(f"{path.name}: {paper_id} judged twice by first readers")
            target[paper_id] = value
    missing = [r["id"] for r in draw if r["id"] not in first]
    if missing:
        raise SystemExit(f"{len(missing)} drawn papers not judged yet (first: {missing[0]})")
    keywords = {}
    for name in DATA:
        for line in (data / f"{name}.jsonl").open(encoding="utf-8"):
            value = json.loads(line)
            if value.get("keywords"):
                keywords[value["id"]] = value["keywords"]
    outputs = {"judged.jsonl": [], "sealed.jsonl": [], "second.jsonl": []}
    for record in draw:
        name = "sealed.jsonl" if record["sealed"] else "judged.jsonl"
        outputs[name].append(judged_line(record, first[record["id"]], keywords))
        if record["id"] in second:
            outputs["second.jsonl"].append(judged_line(record, second[record["id"]], keywords))
    for name, lines in outputs.items():
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(lines)} papers", file=sys.stderr)
    agree, pairs, counts = 0, 0, Counter()
    for paper_id, value in second.items():
        for phrase, code in value["codes"].items():
            other = first[paper_id]["codes"][phrase]
            pairs += 1
            agree += code == other
            counts[other, code] += 1
    if pairs:
        both = sum(n for (a, b), n in counts.items() if a == b == "ACCEPT")
        either = sum(n for (a, b), n in counts.items() if "ACCEPT" in (a, b))
        print(
            f"two readers, {len(second)} papers, {pairs} phrases: the same code for "
            f"{agree / pairs:.3f}; accepted by both of those either accepted {both / either:.3f}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
