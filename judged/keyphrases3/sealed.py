"""The sealed papers of the third judged keyphrase set (sealed.jsonl: 150, 15% of each kind,
never fitted, tuned or looked at), measured once, after the readers' ranking was fitted and
shipped (0.12.0): the first five keyphrases of 0.11.0's ranking (the packaged acceptance model
alone, the house rule for nested phrases) and of the readers' ranking, as `tagger eval --judged`
measures them.

    python judged/keyphrases3/sealed.py --table judged/keyphrases3/sealed.md
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, help="Write the reports here (Markdown).")
    args = parser.parse_args()
    from tagger.config import TaggerConfig
    from tagger.corpus.judged import evaluate_judged, render_judged
    from tagger.fitting.keyphrases import with_keyphrases
    from tagger.io.readers import read_papers
    from tagger.language.keyphrases import AcceptanceModel
    from tagger.tagging.reading import Reader
    from tagger.taxonomy.loading import load_taxonomy

    papers = list(read_papers(HERE / "sealed.jsonl"))
    taxonomy = load_taxonomy()
    reader = Reader(taxonomy, TaggerConfig())
    shipped = AcceptanceModel.load()
    parts = [f"# The sealed {len(papers)} papers of judged/keyphrases3, measured once", ""]
    for name, model in (
        ("0.11.0's ranking", replace(shipped, ranking=None)),
        ("the readers' ranking (0.12.0)", shipped),
    ):
        reader.keyphrases.model = model
        listed = reader.extract_keyphrases(papers)
        records = [with_keyphrases(p, k) for p, k in zip(papers, listed, strict=True)]
        parts.append(render_judged(evaluate_judged(records, taxonomy, source=name)))
    text = "\n".join(parts)
    print(text)
    if args.table:
        args.table.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
