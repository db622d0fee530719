"""Merge the fifth round's judgments into the judged set, as the readers wrote them.

    python judged/round5/merge.py            # into the judged set
    python judged/round5/merge.py --to FILE  # or its unsealed papers into FILE, no merge

Reads draw.jsonl (the papers, drawn before any judging: judged/draw_round5.py) and
readers/NN.jsonl (each reader's file, checked for form by the checker the readers ran); appends

- to ``judged/judged.jsonl``: the 850 papers of this round that are not sealed;
- to ``judged/sealed.jsonl``: the 150 sealed papers (never fitted on or tuned against);
- to ``judged/second-reader.jsonl``: the 200 papers a second reader judged, with that reader's
  judgment (judged/agreement.py).

The lines already there are kept as they are; a paper already in a file is an error (the round is
merged once). Each paper line: {"id", "source", "venue", "year", "title", "abstract", "judged"};
the judgment is copied unchanged.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rounds import append, write_round  # noqa: E402

if __name__ == "__main__":
    if sys.argv[1:2] == ["--to"]:  # the round in one judged file, merging nothing
        raise SystemExit(write_round(HERE, Path(sys.argv[2])))
    raise SystemExit(append(HERE))
