"""Taxonomy rules compiled once, matched against a paper's words, text and keyphrases.

Aliases, cues and exclusions become normalised word sequences looked up in one hash table, so a
paper costs one pass over its words whatever the size of the taxonomy; acronyms are whole-token,
case-sensitive lookups; patterns are compiled regular expressions run over the original text,
under a time limit.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import regex

from .config import DEFAULT_SPACY_MODEL
from .records import Keyphrase
from .taxonomy import Taxonomy
from .text import Analysis, Token, acronym_singular, load_spacy, tokenize_phrase

# Patterns run on the `regex` engine, which defuses most catastrophic backtracking, under a
# time limit per paper and field for the rest.
PATTERN_TIMEOUT = 0.5


@dataclass(slots=True)
class Hit:
    """One rule of one area that fired on one span of the paper."""

    area: str
    kind: str  # alias, cue, acronym, pattern or keyphrase
    rule: str
    field: str
    start: int
    end: int
    sentence: int
    keyphrase_rank: int | None = None  # rank of the best keyphrase the hit lies in
    keyphrase: str | None = None

    def overlaps(self, other: Hit) -> bool:
        return self.field == other.field and self.start < other.end and other.start < self.end


RuleKind = Literal["alias", "cue", "acronym", "pattern", "exclude"]
# The taxonomy field each kind of rule is written in, in the order rules are compiled.
RULE_FIELDS: dict[RuleKind, str] = {
    "alias": "aliases",
    "cue": "cues",
    "acronym": "acronyms",
    "pattern": "patterns",
    "exclude": "exclude",
}


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of one area as the matcher sees it: what the taxonomy says, and for phrases
    (aliases, cues, exclusions) the normalised word sequences it matches."""

    area: str
    kind: RuleKind
    text: str  # as written in the taxonomy
    index: int  # its place in the area's list: the third alias has index 2
    words: tuple[tuple[str, ...], ...] = ()  # ('pre', 'training') and ('pretraining',)

    @property
    def field(self) -> str:
        """The taxonomy field the rule is written in: 'aliases', 'cues', ..."""
        return RULE_FIELDS[self.kind]


class RuleSet:
    """All rules of a taxonomy, compiled once per run; :meth:`match` is per paper.

    :attr:`rules` (every rule, in taxonomy order), :attr:`phrases` (aliases and cues by the
    normalised words they match) and :attr:`acronyms` are the public view that lint and suggest
    read; the word tokenisation behind them is :func:`tagger.text.tokenize_phrase`, here only.
    """

    def __init__(self, taxonomy: Taxonomy, *, spacy_model: str = DEFAULT_SPACY_MODEL) -> None:
        nlp = load_spacy(spacy_model)
        self.taxonomy = taxonomy
        rules: list[Rule] = []
        phrases: dict[tuple[str, ...], list[Rule]] = defaultdict(list)
        exclusions: dict[tuple[str, ...], set[str]] = defaultdict(set)
        acronyms: dict[str, list[Rule]] = defaultdict(list)
        self._patterns: list[tuple[Rule, regex.Pattern[str]]] = []
        for area in taxonomy.areas:
            for kind, field in RULE_FIELDS.items():
                for index, text in enumerate(getattr(area, field)):
                    words = (
                        tuple(tokenize_phrase(nlp, text))
                        if kind in ("alias", "cue", "exclude")
                        else ()
                    )
                    rule = Rule(area.id, kind, text, index, words)
                    rules.append(rule)
                    if kind == "acronym":
                        acronyms[text].append(rule)
                    elif kind == "pattern":
                        self._patterns.append((rule, regex.compile(text)))
                    for sequence in words:
                        if kind == "exclude":
                            exclusions[sequence].add(area.id)
                        elif not any(
                            (r.area, r.kind, r.text) == (area.id, kind, text)
                            for r in phrases[sequence]
                        ):
                            phrases[sequence].append(rule)
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.phrases: dict[tuple[str, ...], tuple[Rule, ...]] = {
            words: tuple(found) for words, found in phrases.items()
        }
        self.acronyms: dict[str, tuple[Rule, ...]] = {
            text: tuple(found) for text, found in acronyms.items()
        }
        self._exclusions = dict(exclusions)
        self.longest = max((len(k) for k in [*self.phrases, *self._exclusions]), default=1)
        # an area's exclusions also guard its descendants
        self._guards = {area.id: set(taxonomy.path(area.id)) for area in taxonomy.areas}

    def match(self, analysis: Analysis, keyphrases: Sequence[Keyphrase] = ()) -> list[Hit]:
        """Every rule hit in the paper, vetoed by exclusions, annotated with keyphrase ranks."""
        hits, vetoes = self._match_words(analysis)
        hits.extend(self._match_patterns(analysis))
        hits.extend(self._match_keyphrases(keyphrases, hits, analysis))
        hits = [hit for hit in hits if not self._vetoed(hit, vetoes)]
        _mark_keyphrases(hits, keyphrases)
        return hits

    def _match_words(self, analysis: Analysis) -> tuple[list[Hit], list[Hit]]:
        words = analysis.words
        norms = [w.norm for w in words]
        hits: list[Hit] = []
        vetoes: list[Hit] = []
        for i, first in enumerate(words):
            for length in range(1, min(self.longest, len(words) - i) + 1):
                last = words[i + length - 1]
                if last.field != first.field:
                    break
                key = tuple(norms[i : i + length])
                for rule in self.phrases.get(key, ()):
                    hits.append(_hit(rule.area, rule.kind, rule.text, first, last))
                for area in self._exclusions.get(key, ()):
                    vetoes.append(_hit(area, "exclude", " ".join(key), first, last))
            short = acronym_singular(first.text)
            for rule in self.acronyms.get(first.text, ()) or self.acronyms.get(short, ()):
                hits.append(_hit(rule.area, "acronym", rule.text, first, first))
            expansion = analysis.acronyms.get(short)
            if expansion is not None and first.text[0].isupper():
                # a defined acronym counts as its long form: 'GNNs' after 'graph neural networks'
                for rule in self.phrases.get(expansion, ()):
                    hits.append(_hit(rule.area, rule.kind, rule.text, first, first))
        return hits, vetoes

    def _match_patterns(self, analysis: Analysis) -> list[Hit]:
        hits = []
        for field, text in (("title", analysis.title), ("abstract", analysis.abstract)):
            if not text:
                continue
            for rule, compiled in self._patterns:
                try:
                    found = list(compiled.finditer(text, timeout=PATTERN_TIMEOUT))
                except TimeoutError:
                    warnings.warn(
                        f"pattern {rule.text!r} of area {rule.area!r} ran over "
                        f"{PATTERN_TIMEOUT} s on one paper and was skipped for it "
                        "(`tagger taxonomy lint` flags patterns that backtrack)",
                        RuntimeWarning,
                        stacklevel=2,
                    )
                    continue
                for m in found:
                    if m.end() > m.start():
                        hits.append(
                            Hit(
                                rule.area,
                                "pattern",
                                rule.text,
                                field,
                                m.start(),
                                m.end(),
                                _sentence_at(analysis, field, m.start()),
                            )
                        )
        return hits

    def _match_keyphrases(
        self, keyphrases: Sequence[Keyphrase], text_hits: list[Hit], analysis: Analysis
    ) -> list[Hit]:
        """Rules that match a keyphrase's normalised form where they did not match its words,
        e.g. an alias found only through the long form of an acronym inside a longer phrase."""
        hits: list[Hit] = []
        for keyphrase in keyphrases:
            words = tuple(keyphrase.normalized.split())
            for i in range(len(words)):
                for j in range(i + 1, min(len(words), i + self.longest) + 1):
                    for rule in self.phrases.get(words[i:j], ()):
                        if rule.kind != "alias":
                            continue
                        for span in keyphrase.spans:
                            hit = Hit(
                                rule.area,
                                "keyphrase",
                                rule.text,
                                span.field,
                                span.start,
                                span.end,
                                _sentence_at(analysis, span.field, span.start),
                                keyphrase=keyphrase.normalized,
                            )
                            if not any(
                                h.area == rule.area and h.overlaps(hit) for h in text_hits + hits
                            ):
                                hits.append(hit)
        return hits

    def _vetoed(self, hit: Hit, vetoes: list[Hit]) -> bool:
        guards = self._guards[hit.area]
        return any(veto.area in guards and veto.overlaps(hit) for veto in vetoes)


def _hit(area: str, kind: str, rule: str, first: Token, last: Token) -> Hit:
    """A hit on the words from ``first`` to ``last``."""
    return Hit(area, kind, rule, first.field, first.start, last.end, first.sentence)


def _mark_keyphrases(hits: list[Hit], keyphrases: Sequence[Keyphrase]) -> None:
    for rank, keyphrase in enumerate(keyphrases):
        for span in keyphrase.spans:
            for hit in hits:
                if (
                    hit.keyphrase_rank is None
                    and hit.field == span.field
                    and span.start <= hit.start
                    and hit.end <= span.end
                ):
                    hit.keyphrase_rank = rank
                    hit.keyphrase = keyphrase.normalized


def _sentence_at(analysis: Analysis, field: str, offset: int) -> int:
    sentence = 0
    for word in analysis.words:
        if word.field == field:
            if word.start > offset:
                break
            sentence = word.sentence
    return sentence
