"""Where in an abstract a passage lies: a sentence about other work ("Unlike prior work, ..."), a
list of examples ("such as social networks, molecules or recommendation"), or a sentence about
experiments ("We evaluate on ..."). Evidence for an area and a keyphrase there counts for less:
the paper mentions the thing rather than being about it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Protocol

from .spans import SpanIndex
from .text import Analysis

# Lists of examples: what follows 'such as', 'e.g.', 'including', ... to the end of the clause.
_EXAMPLES = re.compile(
    r"\b(?:such as|e\.g\.,?|for example,?|for instance,?|including|ranging from|like)\s+"
    r"([^.;:()]*?(?:,|\band\b|\bor\b)[^.;:()]*)",
    re.IGNORECASE,
)
# Sentences about experiments: a benchmark named there was used, not contributed.
_EVALUATION = re.compile(
    r"\b(?:experiments?|evaluat\w*|results|empirical(?:ly)?|extensive|outperform\w*|"
    r"benchmarks? show|state-of-the-art)\b",
    re.IGNORECASE,
)
# Sentences that talk about other work or set up a contrast: evidence there counts for less.
_RELATED_WORK = re.compile(
    r"^(?:unlike|while|although|though|whereas|despite|existing|previous|prior|recent|traditional|"
    r"conventional|inspired)\b|\b(?:prior|previous|existing|related|recent) (?:work|works|studies|"
    r"methods|approaches)\b|\binspired by\b",
    re.IGNORECASE,
)


class Place(Protocol):
    """A place in a paper: its field, sentence and characters (a rule hit is one)."""

    field: str
    sentence: int
    start: int
    end: int


class Context:
    """Where in the abstract a hit lies: a sentence about other work ('Unlike prior work, ...'),
    a list of examples ('such as social networks, molecules or recommendation'), or a sentence
    about experiments ('We evaluate on ...')."""

    def __init__(self, analysis: Analysis) -> None:
        sentences: dict[int, list[str]] = defaultdict(list)
        for word in analysis.words:
            if word.field == "abstract":
                sentences[word.sentence].append(word.text)
        text = {index: " ".join(words) for index, words in sentences.items()}
        self.sentences = max(len(text), 1)
        self.length = max(len(analysis.abstract), 1)
        self.related = {i for i, t in text.items() if i > 0 and _RELATED_WORK.search(t)}
        self.evaluating = {i for i, t in text.items() if i > 0 and _EVALUATION.search(t)}
        self.examples = SpanIndex(
            (found.start(1), found.end(1)) for found in _EXAMPLES.finditer(analysis.abstract)
        )

    def aside(self, field: str, sentence: int, start: int, end: int) -> bool:
        """Is this place of the abstract about other work, experiments, or in a list of
        examples?"""
        return field == "abstract" and (
            sentence in self.related
            or sentence in self.evaluating
            or self.examples.overlaps(start, end)
        )

    def in_related_work(self, hit: Place) -> bool:
        return hit.field == "abstract" and hit.sentence in self.related

    def in_evaluation(self, hit: Place) -> bool:
        return hit.field == "abstract" and hit.sentence in self.evaluating

    def in_examples(self, hit: Place) -> bool:
        return hit.field == "abstract" and self.examples.overlaps(hit.start, hit.end)
