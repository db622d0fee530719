"""Step 2's sheets: for each batch, the papers, the blind reader's areas and tagger's output.

    python judged/reading43/sheets.py TAGGED.jsonl OUT_DIR   # OUT_DIR/sheet-N.md

TAGGED.jsonl is ``tagger tag`` of papers.jsonl as it is (titles where the draw kept them).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rounds import read  # noqa: E402


def evidence(tag: dict) -> str:
    said = []
    for hit in tag["evidence"]:
        text = f'{hit["kind"]} "{hit["text"]}"' if hit.get("text") else hit["kind"]
        if text not in said:
            said.append(text)
    return "; ".join(said[:4]) if said else "no words of the text (neighbours, area model)"


def main() -> None:
    tagged = {record["paper"]["id"]: record for record in read(Path(sys.argv[1]))}
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    papers = read(HERE / "papers.jsonl")
    for batch in sorted({paper["batch"] for paper in papers}):
        areas = {row["id"]: row["areas"] for row in read(HERE / f"areas/batch-{batch}.jsonl")}
        lines = [f"# Sheet {batch}", ""]
        for paper in (p for p in papers if p["batch"] == batch):
            record = tagged[paper["id"]]
            lines += [f"## {paper['id']}", ""]
            lines += [f"Title: {paper['title']}" if paper["title"] else "(no title)", ""]
            lines += [paper["abstract"].strip(), ""]
            lines += [f"Reader's areas: {', '.join(areas[paper['id']])}", ""]
            lines += ["Tags (in tagger's order, its main area first):", ""]
            lines += [
                f"{k}. `{t['id']}` ({t['name']}) {t['score']:.2f}: {evidence(t)}"
                for k, t in enumerate(record["tags"], 1)
            ] or ["(none)"]
            types = [f"`{f['id'].split('.', 1)[1]}` {f['score']:.2f}" for f in record["facets"]]
            lines += ["", f"Types: {', '.join(types) or '(none)'}", ""]
            phrases = [f'"{k["text"]}"' for k in record["keyphrases"][:5]]
            lines += [f"Top-5 keyphrases: {', '.join(phrases)}", ""]
        (out / f"sheet-{batch}.md").write_text("\n".join(lines), encoding="utf-8")
        print(out / f"sheet-{batch}.md")


if __name__ == "__main__":
    main()
