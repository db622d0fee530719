"""The claim sentence as a stand-in for the title: does the readers' model list better keyphrases
when it knows which phrases the sentence stating the paper's own work holds?

    python judged/keyphrases3/claim.py --table judged/keyphrases3/claim.md [--cache DIR]

The **claim sentence** is the abstract's first sentence that says what the paper does ("we
propose", "we show", "our method", "this paper": ``CLAIM``). Two columns a candidate: it occurs
there; every occurrence of it in the abstract comes before it (the paper's setting, not its
work). The table first gives the share of pooled phrases the judges accepted in each place, then
the readers' model of margins.py (the features, the context of the opening, the coded prior)
with and without the two columns: each source's open papers listed by one fitted on the other
sources', five phrases a paper by frontier.py's ``strict`` choice, coded as readers code them,
for all open papers, the titled and the title-less. The sealed papers are not read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import context  # noqa: E402
import models  # noqa: E402
from frontier import choose, measure  # noqa: E402

CLAIM = re.compile(
    r"\b(?:we (?:propose|introduce|present|develop|design|devise|study|investigate|consider|show|"
    r"prove|analy[sz]e|provide|formulate|establish|derive|demonstrate|find|identify|explore|"
    r"offer|leverage|tackle|address|focus)|our (?:method|approach|framework|model|algorithm|"
    r"work|results?)|this (?:paper|work|study|article)|in this (?:paper|work))\b",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def claim_columns(paper: dict, title: str | None) -> np.ndarray:
    """Each candidate's two columns: in the claim sentence; only before it."""
    from tagger.language.text import TITLE_SEPARATOR, clean

    abstract = paper["text"][len(clean(title)) + len(TITLE_SEPARATOR) :] if title else paper["text"]
    bounds = [0, *(m.end() for m in SENTENCE_END.finditer(abstract)), len(abstract)]
    sentences = list(zip(bounds, bounds[1:], strict=False))
    claim = next((k for k, (a, b) in enumerate(sentences) if CLAIM.search(abstract[a:b])), None)
    low = abstract.lower()
    out = []
    for cand in paper["cands"]:
        places = {
            found.start()
            for written in (cand["text"].lower(), cand["key"])
            for found in re.finditer(r"\b" + re.escape(written) + r"\b", low)
        }
        where = {k for k, (a, b) in enumerate(sentences) for at in places if a <= at < b}
        out.append(
            [
                float(claim is not None and claim in where),
                float(claim is not None and bool(where) and max(where) < claim),
            ]
        )
    return np.array(out).reshape(-1, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/keyphrases3-frontier"))
    parser.add_argument("--table", type=Path, help="Write the tables here (Markdown).")
    args = parser.parse_args()
    with (HERE / "judged.jsonl").open(encoding="utf-8") as lines:
        titles = {paper["id"]: paper.get("title") for paper in map(json.loads, lines)}
    judged, _, _ = context.described(args.cache)
    context.contextual(judged, 96)
    for paper in judged:
        paper["claim"] = claim_columns(paper, titles[paper["id"]])

    places: Counter = Counter()
    for paper in judged:
        for (in_claim, before), cand in zip(paper["claim"], paper["cands"], strict=True):
            if cand["label"] is not None:
                place = "in it" if in_claim else "only before it" if before else "elsewhere"
                places[(place, "all")] += 1
                places[(place, cand["label"])] += 1
    text = [
        "| pooled phrases, by where they stand to the claim sentence | phrases | accepted "
        "| generic |",
        "| --- | --- | --- | --- |",
        *(
            f"| {place} | {places[(place, 'all')]} | "
            f"{places[(place, 'accept')] / places[(place, 'all')]:.3f} | "
            f"{places[(place, 'generic')] / places[(place, 'all')]:.3f} |"
            for place in ("in it", "only before it", "elsewhere")
        ),
        "",
        "| readers' model | papers | ACCEPT | GEN | RED | FRAG | NOISE | F1@5 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    own = models.readers_columns(judged, context=True, priors=True)
    for with_claim in (False, True):
        held, _ = models.readers_held_out(
            judged,
            (lambda paper: np.column_stack([own(paper), paper["claim"]])) if with_claim else own,
        )
        picks = [
            choose(p["cands"], s.tolist(), "strict") for p, s in zip(judged, held, strict=True)
        ]
        name = "with the claim columns" if with_claim else "as in margins.md"
        for kind, keep in (
            ("all", lambda p: True),
            ("titled", lambda p: bool(titles[p["id"]])),
            ("title-less", lambda p: not titles[p["id"]]),
        ):
            chosen = [k for k, p in enumerate(judged) if keep(p)]
            got = measure([judged[k] for k in chosen], [picks[k] for k in chosen])
            text.append(
                f"| {name}, {kind} | {len(chosen)} | "
                + " | ".join(
                    f"{got[k]:.3f}" for k in ("ACCEPT", "GEN", "RED", "FRAG", "NOISE", "F1@5")
                )
                + " |"
            )
            print(text[-1], flush=True)
    out = "\n".join(text) + "\n"
    print(out)
    if args.table:
        args.table.write_text(out, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
