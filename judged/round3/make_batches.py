"""Write what the readers of the third round (or of a later one, drawn to DRAW) are given, into
DIR (outside the repository):

    python judged/round3/make_batches.py DIR [DRAW]     # DRAW: judged/round4/draw.jsonl

- ``DIR/RULES.md``: judged/JUDGING.md, the rules;
- ``DIR/tree.md``: the taxonomy's topic areas (no contribution types, no aliases or rules), one a
  line, indented by depth: id, name, description;
- ``DIR/batches/NN.jsonl``: the papers of batch NN of draw.jsonl (id, title or null, abstract),
  and ``DIR/batches/second-K.jsonl``: the 200 papers a second reader judges, 50 a batch;
- ``DIR/check.py``: checks a reader's file for form (ids in the tree, main among areas, known
  types, every paper of the batch judged once), and nothing else.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from tagger.taxonomy.loading import load_taxonomy  # noqa: E402

CHECK = '''"""python check.py OUT.jsonl BATCH.jsonl: is OUT a well-formed judgment of every paper of BATCH?"""
import json, re, sys
from pathlib import Path
TYPES = {"method", "theory", "dataset", "analysis", "survey", "system"}
tree = Path(__file__).with_name("tree.md").read_text(encoding="utf-8")
ids = set(re.findall(r"^\\s*- `([a-z0-9_.-]+)`", tree, re.M))
out, batch = sys.argv[1], sys.argv[2]
want = [json.loads(line)["id"] for line in open(batch, encoding="utf-8")]
seen, faults = set(), []
for n, line in enumerate(open(out, encoding="utf-8"), 1):
    if not line.strip():
        continue
    try:
        record = json.loads(line)
        j = record["judged"]
        pid = record["id"]
    except Exception as exc:
        faults.append(f"line {n}: not a judgment ({exc})")
        continue
    if pid not in want:
        faults.append(f"line {n}: {pid!r} is not a paper of this batch")
    if pid in seen:
        faults.append(f"line {n}: {pid!r} judged twice")
    seen.add(pid)
    areas, main = j.get("areas") or [], j.get("main") or []
    if not areas:
        faults.append(f"line {n}: no areas")
    for key in ("areas", "main", "acceptable"):
        for a in j.get(key) or []:
            if a not in ids:
                faults.append(f"line {n}: {key} {a!r} is not an id of the tree")
    if not main or len(main) > 2 or any(m not in areas for m in main):
        faults.append(f"line {n}: main must be one or two of areas")
    if set(areas) & set(j.get("acceptable") or []):
        faults.append(f"line {n}: an area is both in areas and acceptable")
    types = j.get("type") or []
    if not types or any(t not in TYPES for t in types):
        faults.append(f"line {n}: type must be one or more of {sorted(TYPES)}")
for pid in want:
    if pid not in seen:
        faults.append(f"{pid!r} is not judged")
print("\\n".join(faults) or f"OK: {len(seen)} papers judged")
sys.exit(1 if faults else 0)
'''


def tree() -> str:
    taxonomy = load_taxonomy()
    lines = [
        f"# The taxonomy's topic areas ({taxonomy.label})",
        "",
        "One area a line, indented under its parent: `id`, name: description.",
        "",
    ]
    for depth, area in taxonomy.walk():
        if taxonomy.facet(area.id):
            continue
        lines.append(f"{'  ' * depth}- `{area.id}` {area.name}: {area.description}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    out = Path(argv[1])
    (out / "batches").mkdir(parents=True, exist_ok=True)
    (out / "out").mkdir(exist_ok=True)
    shutil.copy(ROOT / "judged" / "JUDGING.md", out / "RULES.md")
    (out / "tree.md").write_text(tree(), encoding="utf-8")
    (out / "check.py").write_text(CHECK, encoding="utf-8")
    drawn = Path(argv[2]) if len(argv) > 2 else HERE / "draw.jsonl"
    draw = [json.loads(line) for line in drawn.open(encoding="utf-8")]
    batches: dict[str, list[dict]] = {}
    for record in draw:
        paper = {k: record[k] for k in ("id", "title", "abstract")}
        batches.setdefault(f"{record['batch']:02d}", []).append(paper)
    second = [r for r in draw if r["second"]]
    second.sort(key=lambda r: r["id"])
    for k in range(0, len(second), 50):
        batches[f"second-{k // 50 + 1}"] = [
            {key: r[key] for key in ("id", "title", "abstract")} for r in second[k : k + 50]
        ]
    for name, papers in batches.items():
        with (out / "batches" / f"{name}.jsonl").open("w", encoding="utf-8") as f:
            for paper in papers:
                f.write(json.dumps(paper, ensure_ascii=False) + "\n")
    print(f"{len(batches)} batches, {sum(map(len, batches.values()))} papers, in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
