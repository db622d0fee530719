"""The sealed papers of the third judged keyphrase set (sealed.jsonl: 150, 15% of each kind,
never fitted, tuned or looked at), measured once for each shipped ranking, after it was fitted
and shipped: the first five keyphrases of the packaged acceptance model alone (0.11.0's ranking:
the house rule for nested phrases) and of the readers' ranking, over the installed tagger's
candidates, as `tagger eval --judged` measures them.

    python judged/keyphrases3/sealed.py --table judged/keyphrases3/sealed.md          # 0.12.0
    python judged/keyphrases3/sealed.py --table judged/keyphrases3/sealed-0.13.0.md   # 0.13.0
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
    from tagger.config import TaggerConfig, tagger_version
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
    version = tagger_version()
    for name, model in (
        (
            f"0.11.0's ranking (the acceptance model alone; candidates of {version})",
            replace(shipped, ranking=None),
        ),
        (f"the readers' ranking ({version})", shipped),
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
