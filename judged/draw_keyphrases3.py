"""Draw the papers of the judged keyphrase set's third round (2026-12-06), before any is judged.

    python judged/draw_keyphrases3.py [DATA_DIR] > judged/keyphrases3/draw.jsonl

Issue 46 asks for keyphrases judged as readers judge them (../shared/READING.md's codes:
keyphrases3/RULES.md) on at least 1,000 papers, a third title-less and a sealed 15%. 1,000 papers
none of which is in the judged keyphrase set already (keyphrases.jsonl), no abstract twice,
drawn as the judged set's rounds are (draw_round3.draw, seed SEED): 650 from
``corpus-2020-2023.jsonl`` (ICLR, ICML, NeurIPS 2020-2023), 200 from ``iclr2024-topics.jsonl``,
150 from ``iclr2025-keywords.jsonl``. None from ``iclr2026-dev.jsonl``: F1@5 against its authors'
keywords is measured on papers no keyphrase fit saw. 333 have their title removed; a seeded 15% of
each kind is ``sealed`` (150: never fitted or tuned on, measured once); a seeded 100 of the others
go to a second reader (``second``), for the agreement between readers. Judges see ids, titles
(when kept), abstracts and the pool of phrases (make_keyphrase_pool.py); never author keywords,
which are not written here, nor which system proposed a phrase, nor any score.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from draw_round3 import ROOT, draw

SEED = 2026120646
DRAW = {"corpus-2020-2023": 650, "iclr2024-topics": 200, "iclr2025-keywords": 150}
UNTITLED = 333
SECOND_READER = 100


def main(argv: list[str]) -> int:
    data = Path(argv[1]) if len(argv) > 1 else ROOT / "data"
    taken = [json.loads(line) for line in (ROOT / "judged" / "keyphrases.jsonl").open()]
    for record in draw(data, taken, SEED, DRAW, UNTITLED, SECOND_READER):
        record["keyphrases"] = True  # make_keyphrase_pool.py pools the papers so marked
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
