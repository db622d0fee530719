"""Where a name starts: the word a corpus nearly always writes before a phrase.

"chain Monte Carlo" is written after "Markov" in every abstract of data/ that writes it,
"Variational Gradient Descent" after "Stein" in 18 of 19, "time adaptation" after "test" in 26
of 27: cut from their names, they are fragments a reader rejects (issue 46: FRAG). So a
keyphrase candidate that starts right after such a word is extended to take it
(language.candidates), past ``max_words`` if it must; "reinforcement learning" after "offline"
(7% of the papers writing it) or "policy optimization" after "proximal" (12%) stays as it is.

The table holds, for each phrase of one or two words that at least ``MIN_PAPERS`` papers write,
the word at least ``SHARE`` of them write right before it, counted within a sentence's clause
(never across a full stop, a comma or a bracket). The shipped table is counted over data/'s
abstracts, leaving out every paper a keyphrase figure is measured on (the judged keyphrase
papers, sealed ones included; ICLR 2026 dev) and the sealed area papers:

    python -m tagger.language.names data/corpus-2020-2023.jsonl data/iclr2024-topics.jsonl \\
        data/iclr2025-keywords.jsonl --exclude judged/keyphrases3/draw.jsonl \\
        --exclude data/iclr2026-dev.jsonl --exclude judged/sealed.jsonl -o tagger/data/names.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from ..errors import TaggerError
from ..io import packaged
from ..io.files import sha256
from .specificity import corpus_command, read_corpus, words_of
from .text import clean

DEFAULT_PATH = "names.json"
MIN_PAPERS = 5  # a phrase fewer papers write says too little about the word before it
SHARE = 0.7  # the share of those papers that must write the same word before it
_CLAUSE_END = re.compile(r"[.,;:!?()\[\]{}\"“”]+")


@dataclass(frozen=True, eq=False)
class Names:
    """Per phrase of one or two normalised words, the word its name starts with before it."""

    before: dict[str, str]
    about: dict[str, Any]

    def start(self, words: Sequence[str], left: str) -> bool:
        """Whether ``left``, written right before ``words``, belongs to their name: it is the word
        the corpus writes before their first word, or before their first two."""
        return self.before.get(words[0]) == left or self.before.get(" ".join(words[:2])) == left

    @cached_property
    def words_before(self) -> frozenset[str]:
        """Every word a name may start with before a phrase: a word outside it starts none, so
        language.candidates asks ``start`` only about the others."""
        return frozenset(self.before.values())

    @classmethod
    def load(cls, path: str | Path | None = None) -> Names:
        """The table at ``path``, or the one shipped with tagger."""
        return _load(str(path) if path else "")

    def save(self, path: str | Path) -> None:
        data = {"about": self.about, "before": dict(sorted(self.before.items()))}
        Path(path).write_text(json.dumps(data, indent=0) + "\n", encoding="utf-8")


@cache
def _load(path: str) -> Names:
    try:
        data = packaged.read_json(path, DEFAULT_PATH)
        before = data["before"]
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in before.items()):
            raise ValueError("a phrase or a word that is not text")
        return Names(before=dict(before), about=dict(data["about"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TaggerError(f"cannot read the names table {path or DEFAULT_PATH}: {exc!r}") from None


def clauses(text: str) -> list[list[str]]:
    """The normalised words of a text (language.specificity.words_of's), clause by clause."""
    return [words for piece in _CLAUSE_END.split(clean(text)) if (words := words_of(piece))]


def build(records: Iterable[Mapping[str, Any]], *, about: dict[str, Any]) -> Names:
    """Count, over the titles and abstracts of ``records``, the papers writing each phrase of
    one to three words, and keep each phrase of one or two whose papers mostly write one word
    before it."""
    counts: Counter[str] = Counter()
    papers = 0
    for record in records:
        papers += 1
        found: set[str] = set()
        for field in ("title", "abstract"):
            for words in clauses(str(record.get(field) or "")):
                found.update(
                    " ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)
                )
        counts.update(found)
    before: dict[str, str] = {}
    shares: dict[str, float] = {}
    for gram, n in counts.items():
        left, _, rest = gram.partition(" ")
        base = counts.get(rest, 0) if rest else 0
        if base < MIN_PAPERS or n < SHARE * base:
            continue
        if n / base > shares.get(rest, 0.0) or (n / base == shares[rest] and left < before[rest]):
            before[rest], shares[rest] = left, n / base
    return Names(
        before=before,
        about=about | {"papers": papers, "min_papers": MIN_PAPERS, "share": SHARE},
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = corpus_command(
        "python -m tagger.language.names", __doc__ or "", "title and abstract", DEFAULT_PATH
    )
    args = parser.parse_args(argv)
    records, excluded = read_corpus(args.corpus, args.exclude)
    table = build(
        records,
        about={
            "corpus": {Path(path).name: sha256(path) for path in args.corpus},
            "excluded": {Path(path).as_posix(): sha256(path) for path in args.exclude},
            "papers_excluded": excluded,
        },
    )
    table.save(args.out)
    print(
        f"{table.about['papers']} papers, {len(table.before)} names -> {args.out}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
