"""How specific a word or a phrase is, measured on a corpus of abstracts with their authors'
keywords: in how many papers it occurs, and in how many its authors chose it as a keyword.

"learning" occurs in most ML abstracts and "experiments" in half of them, and nobody lists
either as a keyword; "bandit" and "diffusion model" are rarer, and authors who write them often
list them. Keyphrase ranking reads both (language.keyphrases). The shipped table is built from the
ICLR 2024 papers of data/ (never from the ICLR 2026 dev set the keyphrases are measured
on, nor from the judged papers, sealed ones included):

    python -m tagger.language.specificity data/iclr2024-topics.jsonl \\
        --exclude judged/judged.jsonl --exclude judged/sealed.jsonl -o tagger/data/specificity.json
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from ..config import TaggerConfig
from ..errors import TaggerError
from ..io import packaged
from .text import clean, normalize_word

DEFAULT_PATH = "specificity.json"
MAX_WORDS = TaggerConfig().max_words  # the longest phrase counted: a keyphrase's, by default
MIN_PAPERS = 3  # a phrase in fewer papers, never a keyword, is not stored: it reads as rare
MIN_GROUP = 100  # papers a venue and year needs for its shares to count in commonness
COMMON_FLOOR = 0.005  # the smallest share stored: rarer reads as 0
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")


def words_of(text: str) -> list[str]:
    """The normalised words of a text, hyphenated compounds split as keyphrase keys split them."""
    return [normalize_word(w) for w in _WORD.findall(clean(text))]


@dataclass(frozen=True, eq=False)
class Specificity:
    """Document frequencies of words and phrases, and how often authors chose a phrase."""

    papers: int
    words: dict[str, int]  # word -> papers it occurs in
    phrases: dict[str, tuple[int, int]]  # phrase -> (papers it occurs in, papers keyed with it)
    about: dict[str, Any]
    # phrase -> the largest share of a venue and year's papers it occurs in (COMMON_FLOOR or more)
    common: dict[str, float] = field(default_factory=dict)

    def commonness(self, phrase: str) -> float:
        """The largest share of the papers of one venue and year that carry the phrase: near 1
        for what nearly every abstract of some year says ("large language model" in 2024), 0 for
        a phrase under COMMON_FLOOR everywhere. A venue and year, not the whole corpus, so that
        a phrase common only lately reads as common."""
        return self.common.get(phrase, 0.0)

    def idf(self, word: str) -> float:
        """Inverse document frequency of a word, scaled to [0, 1]: 0 in every paper, 1 unseen."""
        return math.log((self.papers + 1) / (self.words.get(word, 0) + 1)) / math.log(
            self.papers + 1
        )

    def keyness(self, phrase: str) -> float:
        """How much more often than usual authors list the phrase as a keyword when it occurs:
        log((keyed + 0.5) / (occurs + 1)) against the corpus-wide rate, clipped to [-3, 3]; 0
        for a phrase the corpus holds too rarely to tell."""
        occurs, keyed = self.phrases.get(phrase, (0, 0))
        if occurs + keyed == 0:
            return 0.0
        rate = math.log((keyed + 0.5) / (max(occurs, keyed) + 1))
        return max(-3.0, min(3.0, rate - self.about["log_base_rate"]))

    def opener(self, word: str) -> float:
        """How often authors start a keyword of two or more words with ``word``, against how
        often it occurs: log((keywords it starts + 0.5) / (papers with it + 1)), clipped to
        [-8, 0]. 'adversarial' and 'graph' open many keywords; 'popular' and 'reliable' none."""
        starts = self._openers.get(word, 0)
        return max(-8.0, min(0.0, math.log((starts + 0.5) / (self.words.get(word, 0) + 1))))

    @cached_property
    def _openers(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for phrase, (_, keyed) in self.phrases.items():
            if keyed and " " in phrase:
                found[phrase.split(" ", 1)[0]] += keyed
        return found

    def phrase_idf(self, phrase: str) -> float:
        """Inverse document frequency of the whole phrase, scaled to [0, 1]."""
        occurs = self.phrases.get(phrase, (0, 0))[0]
        return math.log((self.papers + 1) / (occurs + 1)) / math.log(self.papers + 1)

    @classmethod
    def load(cls, path: str | Path | None = None) -> Specificity:
        """The table at ``path``, or the one shipped with tagger."""
        return _load(str(path) if path else "")

    def save(self, path: str | Path) -> None:
        data = {
            "about": self.about,
            "papers": self.papers,
            "words": dict(sorted(self.words.items())),
            "phrases": {k: list(v) for k, v in sorted(self.phrases.items())},
            "common": dict(sorted(self.common.items())),
        }
        Path(path).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


@cache
def _load(path: str) -> Specificity:
    try:
        with packaged.gc_paused():
            data = packaged.read_json(path, DEFAULT_PATH)
            return Specificity(
                papers=int(data["papers"]),
                words={k: int(v) for k, v in data["words"].items()},
                phrases={k: (int(v[0]), int(v[1])) for k, v in data["phrases"].items()},
                about=data["about"],
                common={k: float(v) for k, v in data.get("common", {}).items()},
            )
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise TaggerError(
            f"cannot read the specificity table {path or DEFAULT_PATH}: {exc!r}"
        ) from None


def build(records: Iterable[dict[str, Any]], *, about: dict[str, Any]) -> Specificity:
    """Count words, phrases of up to MAX_WORDS words and author keywords over ``records``
    (dicts with ``title``, ``abstract`` and ``keywords``, and ``venue`` and ``year``: the group
    a phrase's commonness is measured in)."""
    words: Counter[str] = Counter()
    occurs: Counter[str] = Counter()
    keyed: Counter[str] = Counter()
    groups: dict[str, Counter[str]] = {}
    sizes: Counter[str] = Counter()
    papers = with_keywords = 0
    for record in records:
        tokens = words_of(f"{record.get('title') or ''} . {record.get('abstract') or ''}")
        papers += 1
        words.update(set(tokens))
        found = {
            " ".join(tokens[i : i + n])
            for n in range(1, MAX_WORDS + 1)
            for i in range(len(tokens) - n + 1)
        }
        occurs.update(found)
        group = f"{record.get('venue') or '?'} {record.get('year') or '?'}"
        groups.setdefault(group, Counter()).update(found)
        sizes[group] += 1
        keywords = {" ".join(words_of(k)) for k in record.get("keywords") or () if k}
        keyed.update(k for k in keywords if k and len(k.split()) <= MAX_WORDS)
        with_keywords += bool(keywords)
    phrases = {
        p: (occurs[p], keyed[p])
        for p in occurs.keys() | keyed.keys()
        if keyed[p] or occurs[p] >= MIN_PAPERS
    }
    total_keyed = sum(keyed.values())
    total_occurs = sum(occurs[p] for p in keyed)
    common: dict[str, float] = {}
    counted = sorted(group for group, size in sizes.items() if size >= MIN_GROUP)
    for group in counted:
        for phrase, n in groups[group].items():
            share = round(n / sizes[group], 4)
            if share >= COMMON_FLOOR and share > common.get(phrase, 0.0):
                common[phrase] = share
    return Specificity(
        papers=papers,
        words={w: n for w, n in words.items() if n >= 2},
        phrases=phrases,
        about=about
        | {
            "papers_with_keywords": with_keywords,
            "log_base_rate": math.log((total_keyed + 0.5) / (total_occurs + 1)),
            "groups": {group: sizes[group] for group in counted},
        },
        common=common,
    )


def read_corpus(
    corpus: Sequence[str | Path], exclude: Sequence[str | Path] = ()
) -> tuple[list[dict[str, Any]], int]:
    """The papers of the JSONL files ``corpus`` whose ids none of ``exclude`` holds, and how many
    were left out."""
    skip = {
        json.loads(line)["id"]
        for path in exclude
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    lines = [
        line
        for path in corpus
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    records = [r for r in map(json.loads, lines) if r.get("id") not in skip]
    return records, len(lines) - len(records)


def corpus_command(prog: str, description: str, fields: str, out: str) -> argparse.ArgumentParser:
    """The command line of a table counted over a corpus (this one, language.names'): the corpus
    files, the papers to leave out, and where the table goes (``tagger/data/<out>``)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("corpus", nargs="+", help=f"JSONL of papers with {fields}")
    parser.add_argument("--exclude", action="append", default=[], help="JSONL of papers to skip")
    parser.add_argument("-o", "--out", default=str(Path(__file__).parents[1] / "data" / out))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = corpus_command(
        "python -m tagger.language.specificity",
        __doc__ or "",
        "title, abstract, keywords, venue, year",
        DEFAULT_PATH,
    )
    args = parser.parse_args(argv)
    records, excluded = read_corpus(args.corpus, args.exclude)
    table = build(
        records,
        about={
            "corpus": ", ".join(Path(path).name for path in args.corpus),
            "excluded": excluded,
        },
    )
    table.save(args.out)
    print(
        f"{table.papers} papers, {len(table.words)} words, {len(table.phrases)} phrases "
        f"-> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
