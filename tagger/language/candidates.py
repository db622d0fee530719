"""Keyphrase candidates: the noun phrases of a paper, from spaCy's part-of-speech tags, variants
merged.

Candidates are whole noun phrases (runs of adjectives and nouns up to their last noun: "graph
neural networks") or their tails that keep the head ("reinforcement learning" of "offline
multi-task reinforcement learning"); a piece cut before the head ("large language") only where
the paper uses it alone; never a name cut short ("chain Monte Carlo" of "Markov chain Monte
Carlo": language.names); never n-grams glued across removed stop words. Variants share one
normalised form: plural and singular, case, hyphenation, and an acronym the paper defines with its
long form ("graph neural networks (GNNs)" and later "GNNs").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..records import Span
from .names import Names
from .text import Analysis, Token, acronym_singular, citations, is_acronym

_HEAD = frozenset({"NOUN", "PROPN"})
_MODIFIER = frozenset({"ADJ", "NOUN", "PROPN"})
# Words that open many noun phrases but say nothing about the topic.
_GENERIC_MODIFIERS = frozenset(
    [
        "novel",
        "new",
        "existing",
        "extensive",
        "various",
        "different",
        "several",
        "significant",
        "current",
        "recent",
        "prior",
        "previous",
        "standard",
        "simple",
        "general",
        "specific",
        "particular",
        "certain",
        "key",
        "main",
        "major",
        "many",
        "most",
        "other",
        "such",
        "same",
        "strong",
        "better",
        "best",
        "superior",
        "effective",
        "efficient",
        "empirical",
        "comprehensive",
        "remarkable",
        "promising",
        "first",
        "second",
        "third",
        "further",
        "additional",
        "diverse",
        "wide",
        "broad",
        "large-scale",
        "substantial",
    ]
)


# Words the tagger calls nouns that never end a phrase.
_NOT_HEADS = frozenset(
    ["neural", "deep", "based", "aware", "driven", "free", "specific", "agnostic", "guided"]
)


_ADJECTIVE_SUFFIXES = ("al", "ic", "ous", "ive", "able", "ible", "ed", "ful", "less", "ary", "ular")


# Heads too generic to be a keyphrase on their own.
_GENERIC_HEADS = frozenset(
    [
        "method",
        "approach",
        "paper",
        "work",
        "result",
        "performance",
        "framework",
        "model",
        "task",
        "problem",
        "study",
        "experiment",
        "technique",
        "way",
        "setting",
        "analysis",
        "solution",
        "improvement",
        "advantage",
        "issue",
        "challenge",
        "datum",
        "data",
        "number",
        "time",
        "step",
        "set",
        "use",
        "case",
        "term",
        "effect",
        "impact",
        "ability",
        "lack",
        "type",
        "form",
        "part",
        "field",
        "range",
        "level",
        "state",
        "strategy",
        "process",
        "scheme",
        "system",
        "baseline",
        "art",
    ]
)


# Gerunds that name things in ML ('deep learning', 'prompt tuning'), whatever the tagger says.
_GERUND_NOUNS = frozenset(
    [
        "learning",
        "training",
        "pretraining",
        "tuning",
        "finetuning",
        "matching",
        "mining",
        "captioning",
        "reasoning",
        "planning",
        "modeling",
        "modelling",
        "forecasting",
        "clustering",
        "prompting",
        "sampling",
        "decoding",
        "pruning",
        "editing",
        "understanding",
        "answering",
        "unlearning",
        "rendering",
        "tracking",
        "parsing",
        "labeling",
        "labelling",
        "embedding",
        "pooling",
        "scheduling",
        "routing",
        "hashing",
        "denoising",
        "inpainting",
        "watermarking",
        "jailbreaking",
        "steering",
        "programming",
        "computing",
        "processing",
        "engineering",
        "encoding",
        "imitation",
        "retrieval",
        "generation",
        "detection",
        "segmentation",
    ]
)


# The most tokens a candidate may span: 'multi-agent' is one word of max_words but three tokens,
# and a chain of hyphenated words must not make a paper's cost grow with the square of its length.
_MAX_TOKENS = 12


@dataclass(slots=True)
class Candidate:
    """One normalised phrase of a paper, with every place it occurs."""

    key: str
    spans: list[Span] = field(default_factory=list)
    first: int = 0  # position of the first occurrence, in words
    whole: int = 0  # occurrences that are a whole noun phrase, not the tail of a longer one
    acronym: bool = False  # an acronym, or the long form of one the paper defines
    where: set[tuple[str, int, int]] = field(default_factory=set)  # the spans, to look up
    sentences: list[int] = field(default_factory=list)  # the sentence of each span

    def add(self, span: Span, sentence: int, *, whole: bool) -> None:
        place = (span.field, span.start, span.end)
        if place not in self.where:
            self.where.add(place)
            self.spans.append(span)
            self.sentences.append(sentence)
            self.whole += whole

    @property
    def words(self) -> int:
        return len(self.key.split())


def candidates(
    analysis: Analysis, *, max_words: int, names: Names | None = None
) -> dict[str, Candidate]:
    """Noun-phrase candidates of one paper, by normalised form, in order of first occurrence.

    A candidate is a whole noun phrase (a run of adjectives and nouns up to its last noun, at
    most ``max_words`` words) or a part of one that keeps its head: 'reinforcement learning' of
    'offline multi-task reinforcement learning', never 'offline multi-task reinforcement'. A
    part that stops before the head counts only where the paper also uses it as a phrase of its
    own ('graph neural network' inside 'graph neural network training', when the paper also
    writes 'graph neural networks' alone). With ``names``, a part that starts right after the
    word its name starts with takes that word too, past ``max_words`` if it must: 'Markov chain
    Monte Carlo', never 'chain Monte Carlo'."""
    found: dict[str, Candidate] = {}
    inner: list[tuple[list[Token], int]] = []  # parts that stop before a run's head
    cited = {field: citations(analysis.text_of(field)) for field in ("title", "abstract")}
    for offset, run in _runs(analysis.words):
        head = _head(run)
        if head is None or _in_citation(run[0], cited):
            continue
        for phrase, start in _tails(run, head + 1, max_words):
            if names is not None and start and run[start - 1].norm in names.words_before:
                start = _name_start(run, start, head + 1, names)
                phrase = run[start : head + 1]
            key = _key(phrase, analysis)
            if key not in found:
                found[key] = Candidate(key=key, first=offset + start)
            found[key].add(_span(phrase), phrase[0].sentence, whole=start == 0)
        for end in range(head, 0, -1):
            if _can_end(run, end - 1) and not run[end].joined:
                inner += [(phrase, offset + start) for phrase, start in _tails(run, end, max_words)]
    for phrase, first in inner:
        candidate = found.get(_key(phrase, analysis))
        if candidate is not None:
            candidate.add(_span(phrase), phrase[0].sentence, whole=False)
            candidate.first = min(candidate.first, first)
    for candidate in found.values():  # spans in reading order: the title, then the abstract
        order = sorted(
            range(len(candidate.spans)),
            key=lambda k: (candidate.spans[k].field != "title", candidate.spans[k].start),
        )
        candidate.spans = [candidate.spans[k] for k in order]
        candidate.sentences = [candidate.sentences[k] for k in order]
    return found


def _name_start(run: list[Token], start: int, end: int, names: Names) -> int:
    """Where the name that ``run[start:end]`` ends starts: earlier, while the word before it is
    the one the corpus nearly always writes there ('Markov' before 'chain Monte Carlo')."""
    while start > 0 and end - start < _MAX_TOKENS:
        rest = [token.norm for token in run[start : min(start + 2, end)]]
        if not names.start(rest, run[start - 1].norm):
            break
        start -= 1
        while start > 0 and run[start].joined:
            start -= 1
    return start


def _in_citation(token: Token, cited: dict[str, list[tuple[int, int]]]) -> bool:
    """A venue, an author or a year of a citation ('(Spielman and Teng, SODA 2004)') names no
    topic of the paper."""
    return any(start <= token.start < end for start, end in cited[token.field])


def _runs(words: list[Token]) -> Iterator[tuple[int, list[Token]]]:
    """Maximal runs of words that may belong to a noun phrase, with where each starts. A
    hyphenated compound is never cut: its glued parts belong to the run whatever they are
    ('trade-off', 'text-to-CAD'), and a compound that starts with an unusable word is skipped
    whole."""
    i = 0
    while i < len(words):
        if not _usable(words[i]) or words[i].joined:
            i += 1
            continue
        j = i
        while j < len(words) and _adjacent(words, i, j) and (_usable(words[j]) or _glued(words[j])):
            j += 1
        while j > i and j < len(words) and words[j].joined:  # a compound the run cannot hold
            j -= 1
        yield i, words[i:j]
        i = max(j, i + 1)


def _glued(token: Token) -> bool:
    """The second part of a hyphenated compound, a word whatever its kind: 'off' of 'trade-off'."""
    return token.joined and token.is_word and token.text.isascii()


def _head(run: list[Token]) -> int | None:
    """Where the noun phrase of a run ends: its last word that can end one and is not the first
    half of a hyphenated compound."""
    for end in range(len(run) - 1, -1, -1):
        if _can_end(run, end) and not (end + 1 < len(run) and run[end + 1].joined):
            return end
    return None


def _tails(run: list[Token], end: int, max_words: int) -> Iterator[tuple[list[Token], int]]:
    """The phrases of ``run[:end]`` that end at ``end``, longest first, up to ``max_words``
    words ('multi-agent' counts as one), without a leading generic modifier ('novel'), and not
    a lone generic or two-letter word; with where each starts in the run."""
    words = 0
    for start in range(end - 1, max(-1, end - 1 - _MAX_TOKENS), -1):
        if not run[start].joined:
            words += 1
        if words > max_words:
            break
        if run[start].joined:
            continue
        phrase = run[start:end]
        if phrase[0].norm in _GENERIC_MODIFIERS and len(phrase) > 1:
            continue
        if len(phrase) == 1 and (phrase[0].norm in _GENERIC_HEADS or len(phrase[0].text) < 3):
            continue
        yield phrase, start


def _span(phrase: list[Token]) -> Span:
    return Span(field=phrase[0].field, start=phrase[0].start, end=phrase[-1].end)


def _usable(token: Token) -> bool:
    """May the word be part of a noun phrase?"""
    return (
        (token.pos in _MODIFIER or token.tag == "VBN" or token.norm in _GERUND_NOUNS)
        and token.is_word
        and not token.is_stop
        and token.text.isascii()
        and not any(ch in token.text for ch in "$\\{}_^=<>/@#*`")
        and not _ABBREVIATION.fullmatch(token.text)
    )


# 'w.r.t', 'e.g.', 'etc.': never part of a noun phrase
_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.){1,3}[A-Za-z]?\.?|etc\.?|vs\.?|cf\.?", re.IGNORECASE)


def _adjacent(words: list[Token], start: int, j: int) -> bool:
    """A phrase stays inside one field and one sentence."""
    return j == start or (
        words[j].field == words[j - 1].field and words[j].sentence == words[j - 1].sentence
    )


def _can_end(run: list[Token], i: int) -> bool:
    """A phrase ends in a noun; or in a word tagged adjective right after a noun that does not
    look like an adjective: the tagger reads 'policy gradient methods' as NOUN ADJ NOUN."""
    token = run[i]
    if token.joined and not _usable(token):  # 'trade-off', 'text-to-CAD': as its first part
        first = i
        while first > 0 and run[first].joined:
            first -= 1
        return run[first].pos in _HEAD and token.is_word
    if token.norm in _NOT_HEADS or token.tag == "VBN":
        return False
    if token.pos in _HEAD or token.norm in _GERUND_NOUNS or is_acronym(token.text):
        return True
    return (
        token.pos == "ADJ"
        and i > 0
        and run[i - 1].pos in _HEAD
        and not token.norm.endswith(_ADJECTIVE_SUFFIXES)
    )


def _key(phrase: list[Token], analysis: Analysis) -> str:
    """Normalised words, with an acronym the paper defines replaced by its long form."""
    out: list[str] = []
    for token in phrase:
        expansion = analysis.acronyms.get(acronym_singular(token.text))
        out.extend(expansion if expansion else (token.norm,))
    return " ".join(out)
