"""Draw the papers of the judged set's fourth round (2026-12-06), before any of them is judged.

    python judged/draw_round4.py [DATA_DIR] > judged/round4/draw.jsonl

The held-out learning curve of the area model still rose from 2,000 to 3,050 judged papers
(docs/learned-reader.md), so issue 43 asks for more, judged under the same rules (JUDGING.md).
1,000 papers none of which is already judged or sealed (judged.jsonl, sealed.jsonl), no abstract
twice, with a fixed seed (SEED), drawn as the third round's were (draw_round3.draw):

- 850 from ``corpus-2020-2023.jsonl`` (ICLR, ICML and NeurIPS 2020-2023, no labels);
- 150 from ``iclr2024-topics.jsonl``.

None from ``iclr2026-dev.jsonl`` (its unjudged papers stay in no fit) nor from
``iclr2025-keywords.jsonl`` (too few left). A third (333) have their title removed; then a
seeded 15% of each kind is sealed (150), and a seeded 200 of the others go to a second reader.
"""

from __future__ import annotations

import sys

from draw_round3 import later_round

SEED = 20261206
DRAW = {"corpus-2020-2023": 850, "iclr2024-topics": 150}
UNTITLED = 333
SECOND_READER = 200


def main(argv: list[str]) -> int:
    return later_round(argv, SEED, DRAW, UNTITLED, SECOND_READER)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
