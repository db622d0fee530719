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

import regex

from .records import Keyphrase
from .taxonomy import Taxonomy
from .text import Analysis, acronym_singular, load_spacy, tokenize_phrase


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


class RuleMatcher:
    """All rules of a taxonomy, compiled. Build it once per run; :meth:`match` is per paper."""

    def __init__(self, taxonomy: Taxonomy, *, spacy_model: str | None = None) -> None:
        nlp = load_spacy(spacy_model) if spacy_model else load_spacy()
        self.taxonomy = taxonomy
        self.phrases: dict[tuple[str, ...], list[tuple[str, str, str]]] = defaultdict(list)
        self.exclusions: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.acronyms: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.patterns: list[tuple[str, str, regex.Pattern[str]]] = []
        for area in taxonomy.areas:
            for kind, phrases in (("alias", area.aliases), ("cue", area.cues)):
                for phrase in phrases:
                    for words in tokenize_phrase(nlp, phrase):
                        entry = (area.id, kind, phrase)
                        if entry not in self.phrases[words]:
                            self.phrases[words].append(entry)
            for phrase in area.exclude:
                for words in tokenize_phrase(nlp, phrase):
                    self.exclusions[words].add(area.id)
            for acronym in area.acronyms:
                self.acronyms[acronym].append((area.id, acronym))
            for pattern in area.patterns:
                self.patterns.append((area.id, pattern, regex.compile(pattern)))
        self.longest = max((len(k) for k in [*self.phrases, *self.exclusions]), default=1)
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
                key = tuple(norms[i:i + length])
                for area, kind, rule in self.phrases.get(key, ()):
                    hits.append(Hit(area, kind, rule, first.field, first.start, last.end,
                                    first.sentence))
                for area in self.exclusions.get(key, ()):
                    vetoes.append(Hit(area, "exclude", " ".join(key), first.field, first.start,
                                      last.end, first.sentence))
            short = acronym_singular(first.text)
            for area, acronym in self.acronyms.get(first.text, ()) or self.acronyms.get(short, ()):
                hits.append(Hit(area, "acronym", acronym, first.field, first.start, first.end,
                                first.sentence))
            expansion = analysis.acronyms.get(short)
            if expansion is not None and first.text[0].isupper():
                for area, kind, rule in self.phrases.get(expansion, ()):
                    hits.append(Hit(area, kind, rule, first.field, first.start, first.end,
                                    first.sentence))
        return hits, vetoes

    def _match_patterns(self, analysis: Analysis) -> list[Hit]:
        hits = []
        for field, text in (("title", analysis.title), ("abstract", analysis.abstract)):
            if not text:
                continue
            for area, rule, compiled in self.patterns:
                try:
                    found = list(compiled.finditer(text, timeout=PATTERN_TIMEOUT))
                except TimeoutError:
                    warnings.warn(f"pattern {rule!r} of area {area!r} ran over "
                                  f"{PATTERN_TIMEOUT} s on one paper and was skipped for it "
                                  "(`tagger taxonomy lint` flags patterns that backtrack)",
                                  RuntimeWarning, stacklevel=2)
                    continue
                for m in found:
                    if m.end() > m.start():
                        hits.append(Hit(area, "pattern", rule, field, m.start(), m.end(),
                                        _sentence_at(analysis, field, m.start())))
        return hits

    def _match_keyphrases(self, keyphrases: Sequence[Keyphrase], text_hits: list[Hit],
                          analysis: Analysis) -> list[Hit]:
        """Rules that match a keyphrase's normalised form where they did not match its words,
        e.g. an alias found only through the long form of an acronym inside a longer phrase."""
        hits: list[Hit] = []
        for keyphrase in keyphrases:
            words = tuple(keyphrase.normalized.split())
            for i in range(len(words)):
                for j in range(i + 1, min(len(words), i + self.longest) + 1):
                    for area, kind, rule in self.phrases.get(words[i:j], ()):
                        if kind != "alias":
                            continue
                        for span in keyphrase.spans:
                            hit = Hit(area, "keyphrase", rule, span.field, span.start, span.end,
                                      _sentence_at(analysis, span.field, span.start),
                                      keyphrase=keyphrase.normalized)
                            if not any(h.area == area and h.overlaps(hit) for h in text_hits + hits):
                                hits.append(hit)
        return hits

    def _vetoed(self, hit: Hit, vetoes: list[Hit]) -> bool:
        guards = self._guards[hit.area]
        return any(veto.area in guards and veto.overlaps(hit) for veto in vetoes)


def _mark_keyphrases(hits: list[Hit], keyphrases: Sequence[Keyphrase]) -> None:
    for rank, keyphrase in enumerate(keyphrases):
        for span in keyphrase.spans:
            for hit in hits:
                if (hit.keyphrase_rank is None and hit.field == span.field
                        and span.start <= hit.start and hit.end <= span.end):
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
