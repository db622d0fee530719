"""How far two readers agree: the second reader's judgments of 200 papers of the third round
(second-reader.jsonl) measured against the first reader's (judged.jsonl), as `tagger eval
--judged` measures tags, and the other way round. What one careful reader scores against another
bounds what any tagger can score against either.

    python judged/agreement.py                       # a Markdown table on stdout
    python judged/agreement.py --round judged/round5  # a round not yet merged, from its readers

A reader's ``areas`` stand for tags (``main`` first, then the others), its ``type`` for the
contribution types; a tag is right, neutral or wrong against the other reader's judgment by the
rules of judged/README.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rounds import judgments, paper, read  # noqa: E402  (beside this script)

from tagger.corpus.judged import evaluate_judged  # noqa: E402
from tagger.records import AreaTag, Paper, Provenance, TaggedPaper  # noqa: E402
from tagger.taxonomy.loading import load_taxonomy  # noqa: E402

NONE = Provenance(
    tagger_version="-", taxonomy_version="-", taxonomy_sha256="-", embedding_model="-",
    spacy_model="-",
)  # fmt: skip
FIGURES = (
    ("tag_precision", "precision"),
    ("papers_with_a_wrong_tag", "papers with a wrong tag"),
    ("area_recall", "area recall, strict"),
    ("area_recall_lenient", "area recall, lenient"),
    ("first_tag_is_specific", "first area is one of the other's areas"),
    ("first_tag_is_main", "first area is the other's main"),
)


def _as_tagged(record: dict, judged_by: dict, taxonomy) -> TaggedPaper:
    """``record``'s paper, carrying the judgment of ``judged_by``'s reader, with the areas of
    ``record``'s reader as its tags."""
    judgment = record["judged"]
    order = [*judgment["main"], *(a for a in judgment["areas"] if a not in judgment["main"])]

    def tag(area: str) -> AreaTag:
        return AreaTag(
            id=area, name=area, path=taxonomy.path(area), score=1.0, evidence=[], crosswalk={}
        )

    paper = Paper.model_validate(
        {k: v for k, v in judged_by.items() if k != "judged"} | {"judged": judged_by["judged"]}
    )
    return TaggedPaper(
        paper=paper,
        keyphrases=[],
        tags=[tag(a) for a in order],
        facets=[tag(f"type.{t}") for t in judgment.get("type", [])],
        provenance=NONE,
    )


def _merged() -> tuple[dict[str, dict], list[dict]]:
    """The first readers' papers and the second reader's, as merged into judged/."""
    first = {
        record["id"]: record
        for name in ("judged.jsonl", "sealed.jsonl")
        for record in read(ROOT / "judged" / name)
    }
    return first, read(ROOT / "judged" / "second-reader.jsonl")


def _of_round(here: Path) -> tuple[dict[str, dict], list[dict]]:
    """The same of one round not yet merged: its draw and its readers' files."""
    draw = read(here / "draw.jsonl")
    first, second = judgments(here, draw)
    return (
        {r["id"]: paper(r, first[r["id"]]) for r in draw},
        [paper(r, second[r["id"]]) for r in draw if r["id"] in second],
    )


def main() -> int:
    taxonomy = load_taxonomy()
    args = sys.argv[1:]
    first, second = _of_round(Path(args[1])) if args[:1] == ["--round"] else _merged()
    rows = {}
    for label, pairs in (
        ("second against first", [(s, first[s["id"]]) for s in second]),
        ("first against second", [(first[s["id"]], s) for s in second]),
    ):
        report = evaluate_judged([_as_tagged(a, b, taxonomy) for a, b in pairs], taxonomy)
        figures = report.as_dict()
        types = figures["types"]
        rows[label] = [figures[key] for key, _ in FIGURES] + [
            types["precision"],
            types["recall"],
        ]
    names = [name for _, name in FIGURES] + ["types: precision", "types: recall"]
    print(f"| {len(second)} papers, two readers | " + " | ".join(rows) + " |")
    print("| --- | --- | --- |")
    for k, name in enumerate(names):
        print(f"| {name} | " + " | ".join(f"{row[k]:.3f}" for row in rows.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
