"""Draw the papers of the judged set's second round (2026-12-01), before any of them is judged.

    python judged/draw_round2.py DATA_DIR > /tmp/round2.jsonl

300 papers from the labelled files of DATA_DIR (`data/` in the repository), none already in
judged.jsonl, no abstract twice, with a fixed seed (SEED):

- `iclr2026-dev/untitled`, `iclr2024-topics/untitled`, `iclr2025-keywords/untitled`: 40 each,
  random, the title removed, as a paper list gives them;
- `thin/iclr2026-dev`: 25, random among the ICLR 2026 primary areas in THIN_ICLR;
- `thin/iclr2024-topics`: 35, random among the ICLR 2024 topics in THIN_TOPICS;
- `iclr2026-dev`, `iclr2024-topics`, `iclr2025-keywords`: 40 each, random, with their titles.

"Thin" areas are those the taxonomy and the first round cover thinly: applications to the
sciences, neuroscience, health, robotics, time series, causality, systems, neurosymbolic methods,
privacy and game theory. They are chosen by the authors' own labels (never by tagger output), and
the labels are not written to the output, nor are the keywords: judges see the title (when there
is one) and the abstract. Each output line: {"id", "source", "venue", "year", "title",
"abstract", "keyphrases"}; ``keyphrases`` says whether the paper joins the judged keyphrase set
too (the 120 untitled ones and the titled ICLR 2024 and ICLR 2025 ones: 200).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261201
FIRST_ROUND = 200  # the first lines of judged.jsonl: the papers judged on 2026-11-30
FILES = {
    "iclr2026-dev": "iclr2026-dev.jsonl",
    "iclr2024-topics": "iclr2024-topics.jsonl",
    "iclr2025-keywords": "iclr2025-keywords.jsonl",
}
THIN_ICLR = {
    "applications to neuroscience & cognitive science",
    "applications to physical sciences (physics, chemistry, biology, etc.)",
    "applications to robotics, autonomy, planning",
    "learning on time series and dynamical systems",
    "neurosymbolic & hybrid AI systems (physics-informed, logic & formal reasoning, etc.)",
    "infrastructure, software libraries, hardware, systems, etc.",
    "causal reasoning",
    "probabilistic methods (Bayesian methods, variational inference, sampling, UQ, etc.)",
}
THIN_TOPICS = {
    "Applications->Neuroscience, Cognitive Science",
    "Applications->Chemistry and Drug Discovery",
    "Applications->Physics",
    "Applications->Health",
    "Applications->Genetics, Cell Biology, etc",
    "Applications->Everything Else",
    "Applications->Time Series",
    "Applications->Robotics",
    "Miscellaneous Aspects of Machine Learning->Causality",
    "Social Aspects->Privacy-preserving Statistics and Machine Learning",
    "Theory->Game Theory",
    "Optimization->Large Scale, Parallel and Distributed",
}


def main(argv: list[str]) -> int:
    data = Path(argv[1]) if len(argv) > 1 else ROOT / "data"
    lines = (ROOT / "judged" / "judged.jsonl").read_text(encoding="utf-8").splitlines()
    judged = [json.loads(line) for line in lines[:FIRST_ROUND]]  # the papers judged before
    taken_ids = {r["id"] for r in judged}
    taken_abstracts = {r["abstract"].strip() for r in judged}
    rng = random.Random(SEED)
    pools: dict[str, list[dict]] = {}
    for name, file in FILES.items():
        records = [json.loads(line) for line in (data / file).open(encoding="utf-8")]
        pools[name] = [
            r
            for r in records
            if r["id"] not in taken_ids and r["abstract"].strip() not in taken_abstracts
        ]
        rng.shuffle(pools[name])
    out: list[dict] = []

    def take(name: str, count: int, source: str, *, title: bool, keep=lambda r: True) -> None:
        chosen = []
        for record in pools[name]:
            if len(chosen) == count:
                break
            if record["abstract"].strip() in taken_abstracts or not keep(record):
                continue
            taken_abstracts.add(record["abstract"].strip())
            chosen.append(record)
        if len(chosen) < count:
            raise SystemExit(f"{source}: only {len(chosen)} papers to draw from")
        for r in chosen:
            out.append(
                {
                    "id": r["id"],
                    "source": source,
                    "venue": r.get("venue"),
                    "year": r.get("year"),
                    "title": r["title"] if title else None,
                    "abstract": r["abstract"],
                    "keyphrases": not title or name != "iclr2026-dev",
                }
            )

    for name in FILES:
        take(name, 40, f"{name}/untitled", title=False)
    take(
        "iclr2026-dev",
        25,
        "thin/iclr2026-dev",
        title=True,
        keep=lambda r: r.get("primary_area") in THIN_ICLR,
    )
    take(
        "iclr2024-topics",
        35,
        "thin/iclr2024-topics",
        title=True,
        keep=lambda r: r.get("primary_area") in THIN_TOPICS,
    )
    for name in FILES:
        take(name, 40, name, title=True)
    for record in out:
        if record["source"].startswith("thin/"):
            record["keyphrases"] = False
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
