"""Draw the papers of the judged set's fifth round (2026-12-06, later), before any is judged.

    python judged/draw_round5.py [DATA_DIR] > judged/round5/draw.jsonl

The held-out learning curve of the area model still rose from 3,050 to 3,900 judged papers
(docs/learned-reader.md), so, as issue 43 asks, 1,000 more are judged under the same rules
(JUDGING.md), drawn as the fourth round's were (draw_round3.draw), none already judged or sealed:
800 from ``corpus-2020-2023.jsonl`` and 200 from ``iclr2024-topics.jsonl`` (none from
``iclr2026-dev.jsonl``, whose unjudged papers stay in no fit, nor from ``iclr2025-keywords.jsonl``:
78 left). A third (333) have their title removed; a seeded 15% of each kind is sealed (150), and
a seeded 200 of the others go to a second reader. The round is merged after tagger 0.10.0 is
fitted: that fit never saw it.
"""

from __future__ import annotations

import sys

from draw_round3 import later_round

SEED = 2026120605
DRAW = {"corpus-2020-2023": 800, "iclr2024-topics": 200}
UNTITLED = 333
SECOND_READER = 200


def main(argv: list[str]) -> int:
    return later_round(argv, SEED, DRAW, UNTITLED, SECOND_READER)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
