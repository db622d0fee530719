"""Quality by embedding backend, side by side: the judged tag and keyphrase figures, ICLR 2026
dev acc@1/acc@3 and F1@5 against the authors' keywords, and tagging speed, for each backend with
the packaged fits of its space (the static backend, the fast mode, reads tagger/data/model-static
and keyphrases-static.json; the others tagger/data/model and keyphrases.json).

    python benchmarks/backends.py                       # onnx-int8 and static -> Markdown table
    python benchmarks/backends.py --backends static     # one

The judged figures are in sample for both: each fit was fitted on these judgments. The held-out
ones are in docs/calibration.md and docs/calibration-static.md, docs/keyphrase-calibration.md and
docs/keyphrase-calibration-static.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
ROWS = [
    ("judged tags: precision", "tags", "tag_precision"),
    ("judged tags: papers with a wrong tag", "tags", "papers_with_a_wrong_tag"),
    ("judged tags: area recall", "tags", "area_recall"),
    ("judged tags: area recall, lenient", "tags", "area_recall_lenient"),
    ("judged tags: tags/paper", "tags", "tags_per_paper"),
    ("judged tags: first tag most specific right", "tags", "first_tag_is_specific"),
    ("judged types: precision", "types", "precision"),
    ("judged types: recall", "types", "recall"),
    ("judged keyphrases: top-5 acceptance", "phrases", "acceptance"),
    ("judged keyphrases: F1@5", "phrases", "f1_at_5"),
    ("ICLR 2026 dev: acc@1", "dev", "acc_at_1"),
    ("ICLR 2026 dev: acc@3", "dev", "acc_at_3"),
    ("ICLR 2026 dev: F1@5 against author keywords", "dev", "f1_at_5"),
    ("abstracts/s (the three files, one process)", "speed", "rate"),
]


def measure(backend: str) -> dict[str, dict]:
    from tagger import Tagger
    from tagger.config import TaggerConfig
    from tagger.corpus.evaluate import evaluate_records, tagged_records
    from tagger.corpus.judged import evaluate_judged

    config = TaggerConfig(embedding_backend=backend)  # each with the fits of its space
    figures: dict[str, dict] = {}
    with Tagger.from_taxonomy(config=config) as tagger:
        tagged_records(str(ROOT / "examples/icml2025-abstracts.txt"), tagger)  # warm up
        seconds = papers = 0.0
        for name, path in (
            ("judged", "judged/judged.jsonl"),
            ("phrases", "judged/keyphrases.jsonl"),
        ):
            start = time.perf_counter()
            records, _ = tagged_records(str(ROOT / path), tagger)
            seconds, papers = seconds + time.perf_counter() - start, papers + len(records)
            report = evaluate_judged(records, tagger.taxonomy, source=path).as_dict()
            if name == "judged":
                figures["tags"], figures["types"] = report, report["types"]
            else:
                figures["phrases"] = report["keyphrases"]
        start = time.perf_counter()
        records, _ = tagged_records(str(ROOT / "data/iclr2026-dev.jsonl"), tagger)
        seconds, papers = seconds + time.perf_counter() - start, papers + len(records)
        dev = evaluate_records(records, scheme="iclr", gold_field="primary_area", source="dev")
        area = dev.as_dict()["areas"][0]
        ours = dev.as_dict()["keyphrases"]["tagger"]
        figures["dev"] = {
            "acc_at_1": area["acc@1"],
            "acc_at_3": area["acc@3"],
            "f1_at_5": ours["F1@5"],
        }
        figures["speed"] = {"rate": round(papers / seconds, 1)}
    return figures


def _value(figures: dict, group: str, key: str):
    found = figures[group]
    if key in found:
        return found[key]
    for value in found.values():  # nested: the scheme's level, the keyphrase block
        if isinstance(value, dict) and key in value:
            return value[key]
    raise KeyError(f"{group}.{key}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", default=["onnx-int8", "static"])
    args = parser.parse_args()
    results = {backend: measure(backend) for backend in args.backends}
    print("| figure | " + " | ".join(f"`{b}`" for b in args.backends) + " |")
    print("| --- |" + " --- |" * len(args.backends))
    for label, group, key in ROWS:
        cells = []
        for backend in args.backends:
            try:
                cells.append(f"{_value(results[backend], group, key)}")
            except KeyError:
                cells.append("-")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
