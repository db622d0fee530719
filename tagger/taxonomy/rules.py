"""Taxonomy rules compiled once, matched against a paper's words, text and keyphrases.

Aliases, cues and exclusions become normalised word sequences looked up in one hash table, so a
paper costs one pass over its words whatever the size of the taxonomy; acronyms are whole-token,
case-sensitive lookups; patterns are compiled regular expressions run over the original text.

No clock decides what a paper's hits are: every pattern runs to the end on every field, so a
paper gets the same hits on a fast machine and a loaded one. A pattern that backtracks for
longer than PATTERN_LIMIT seconds of CPU on one field (the `regex` engine defuses most
catastrophic backtracking, and `tagger taxonomy lint` names the patterns that can) stops the
run with an error naming it, rather than being skipped for that paper.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import regex

from ..config import DEFAULT_SPACY_MODEL, tagger_version
from ..errors import TaggerError
from ..io import cache
from ..language.spans import DisjointSpans, SpanIndex
from ..language.text import (
    Analysis,
    Token,
    acronym_singular,
    load_spacy,
    spacy_model_version,
    tokenize_phrase,
)
from ..records import Keyphrase
from .model import Taxonomy

# Seconds of CPU a pattern may take on one field of a paper before the run stops: a safeguard
# against a pattern that backtracks without end, far above what any pattern that ends takes
# (the packaged taxonomy's take microseconds an abstract).
PATTERN_LIMIT = 10.0


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


RuleKind = Literal["alias", "cue", "acronym", "pattern", "exclude", "requires"]
# The taxonomy field each kind of rule is written in, in the order rules are compiled.
RULE_FIELDS: dict[RuleKind, str] = {
    "alias": "aliases",
    "cue": "cues",
    "acronym": "acronyms",
    "pattern": "patterns",
    "exclude": "exclude",
    "requires": "requires",
}
PHRASE_KINDS = ("alias", "cue", "exclude", "requires")  # matched as normalised words


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
    read; the word tokenisation behind them is :func:`tagger.language.text.tokenize_phrase`, here
    only.
    """

    def __init__(
        self, taxonomy: Taxonomy, *, spacy_model: str = DEFAULT_SPACY_MODEL, nlp: Any = None
    ) -> None:
        """``nlp``: a spaCy pipeline whose tokenizer splits the rules' phrases; by default
        ``spacy_model``'s, as tagger loads it, and then the phrases' words are kept in the cache
        directory under the taxonomy's sha256 (:func:`_tokenized`)."""
        self.taxonomy = taxonomy
        rules: list[Rule] = []
        phrases: dict[tuple[str, ...], list[Rule]] = defaultdict(list)
        exclusions: dict[tuple[str, ...], set[str]] = defaultdict(set)
        requirements: dict[tuple[str, ...], set[str]] = defaultdict(set)
        acronyms: dict[str, list[Rule]] = defaultdict(list)
        self._patterns: list[tuple[Rule, regex.Pattern[str]]] = []
        tokenized = _tokenized(taxonomy, spacy_model, nlp)
        for area in taxonomy.areas:
            for kind, field in RULE_FIELDS.items():
                for index, text in enumerate(getattr(area, field)):
                    words = tokenized[text] if kind in PHRASE_KINDS else ()
                    rule = Rule(area.id, kind, text, index, words)
                    rules.append(rule)
                    if kind == "acronym":
                        acronyms[text].append(rule)
                    elif kind == "pattern":
                        self._patterns.append((rule, regex.compile(text)))
                    for sequence in words:
                        if kind == "exclude":
                            exclusions[sequence].add(area.id)
                        elif kind == "requires":
                            requirements[sequence].add(area.id)
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
        # the phrases, exclusions and requirements as a trie of normalised words: a paper's words
        # are walked only as far as some rule goes on, so a long rule does not make every word
        # cost more
        self._trie: dict = {}
        for words in [*self.phrases, *self._exclusions, *requirements]:
            node = self._trie
            for word in words:
                node = node.setdefault(word, {})
            node[None] = (
                self.phrases.get(words, ()),
                sorted(self._exclusions.get(words, ())),
                sorted(requirements.get(words, ())),
            )
        # an area's exclusions and requirements also guard its descendants
        self._guards = {area.id: set(taxonomy.path(area.id)) for area in taxonomy.areas}
        self._needs = {
            area.id: [a for a in taxonomy.path(area.id) if taxonomy.by_id[a].requires]
            for area in taxonomy.areas
        }

    def match(self, analysis: Analysis, keyphrases: Sequence[Keyphrase] = ()) -> list[Hit]:
        """Every rule hit in the paper, vetoed by exclusions, annotated with keyphrase ranks.

        Its cost grows in proportion to the paper's length: overlaps are looked up in sorted
        spans, never by comparing every hit with every other."""
        sentences = _Sentences(analysis)
        hits, vetoes, met = self._match_words(analysis)
        hits.extend(self._match_patterns(analysis, sentences))
        hits.extend(self._match_keyphrases(keyphrases, hits, sentences))
        vetoed = _by_area_and_field(vetoes)
        hits = [
            hit
            for hit in hits
            if not self._vetoed(hit, vetoed) and all(a in met for a in self._needs[hit.area])
        ]
        _mark_keyphrases(hits, keyphrases)
        return hits

    def _match_words(self, analysis: Analysis) -> tuple[list[Hit], list[Hit], set[str]]:
        """Hits of phrases and acronyms, vetoes of exclusions, and the areas whose requirement
        the paper meets."""
        words = analysis.words
        hits: list[Hit] = []
        vetoes: list[Hit] = []
        met: set[str] = set()
        for i, first in enumerate(words):
            node = self._trie
            for j in range(i, len(words)):
                last = words[j]
                if last.field != first.field or (node := node.get(last.norm)) is None:
                    break
                rules, excluded, required = node.get(None, ((), (), ()))
                met.update(required)
                for rule in rules:
                    hits.append(_hit(rule.area, rule.kind, rule.text, first, last))
                for area in excluded:
                    key = " ".join(word.norm for word in words[i : j + 1])
                    vetoes.append(_hit(area, "exclude", key, first, last))
            short = acronym_singular(first.text)
            for rule in self.acronyms.get(first.text, ()) or self.acronyms.get(short, ()):
                hits.append(_hit(rule.area, "acronym", rule.text, first, first))
            expansion = analysis.acronyms.get(short)
            if expansion is not None and first.text[0].isupper():
                # a defined acronym counts as its long form: 'GNNs' after 'graph neural networks'
                for rule in self.phrases.get(expansion, ()):
                    hits.append(_hit(rule.area, rule.kind, rule.text, first, first))
        return hits, vetoes, met

    def _match_patterns(self, analysis: Analysis, sentences: _Sentences) -> list[Hit]:
        """Hits of the patterns, each run over the whole of each field; one that backtracks past
        PATTERN_LIMIT stops the run (:func:`ran_over`)."""
        hits = []
        for field, text in (("title", analysis.title), ("abstract", analysis.abstract)):
            if not text:
                continue
            for rule, compiled in self._patterns:
                try:
                    found = list(compiled.finditer(text, timeout=PATTERN_LIMIT))
                except TimeoutError:
                    raise ran_over(rule.area, rule.text) from None
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
                                sentences.at(field, m.start()),
                            )
                        )
        return hits

    def _match_keyphrases(
        self, keyphrases: Sequence[Keyphrase], text_hits: list[Hit], sentences: _Sentences
    ) -> list[Hit]:
        """Rules that match a keyphrase's normalised form where they did not match its words,
        e.g. an alias found only through the long form of an acronym inside a longer phrase."""
        hits: list[Hit] = []
        in_text = _by_area_and_field(text_hits)
        added: dict[tuple[str, str], DisjointSpans] = defaultdict(DisjointSpans)
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
                                sentences.at(span.field, span.start),
                                keyphrase=keyphrase.normalized,
                            )
                            place = (rule.area, span.field)
                            if place in in_text and in_text[place].overlaps(span.start, span.end):
                                continue
                            if not added[place].overlaps(span.start, span.end):
                                added[place].add(span.start, span.end)
                                hits.append(hit)
        return hits

    def _vetoed(self, hit: Hit, vetoes: dict[tuple[str, str], SpanIndex]) -> bool:
        return any(
            (area, hit.field) in vetoes and vetoes[area, hit.field].overlaps(hit.start, hit.end)
            for area in self._guards[hit.area]
        )


def ran_over(area: str, pattern: str) -> TaggerError:
    """The error that stops a run when a pattern backtracks past PATTERN_LIMIT."""
    return TaggerError(
        f"pattern {pattern!r} of area {area!r} ran for more than {PATTERN_LIMIT:g} s on one "
        "paper: it backtracks without end (`tagger taxonomy lint` names patterns that can); "
        "rewrite it, with a possessive quantifier or an atomic group, and run again"
    )


def _hit(area: str, kind: str, rule: str, first: Token, last: Token) -> Hit:
    """A hit on the words from ``first`` to ``last``."""
    return Hit(area, kind, rule, first.field, first.start, last.end, first.sentence)


def _mark_keyphrases(hits: list[Hit], keyphrases: Sequence[Keyphrase]) -> None:
    """Give each hit the rank of the best keyphrase it lies inside, if any."""
    by_field: dict[str, list[Hit]] = defaultdict(list)
    for hit in sorted(hits, key=lambda hit: hit.start):
        by_field[hit.field].append(hit)
    starts = {field: [hit.start for hit in found] for field, found in by_field.items()}
    for rank, keyphrase in enumerate(keyphrases):
        for span in keyphrase.spans:
            found = by_field.get(span.field, [])
            i = bisect.bisect_left(starts.get(span.field, []), span.start)
            while i < len(found) and found[i].start < span.end:
                hit = found[i]
                if hit.keyphrase_rank is None and hit.end <= span.end:
                    hit.keyphrase_rank = rank
                    hit.keyphrase = keyphrase.normalized
                i += 1


class _Sentences:
    """Which sentence an offset of the title or abstract falls in, by binary search."""

    def __init__(self, analysis: Analysis) -> None:
        self.starts: dict[str, list[int]] = defaultdict(list)
        self.sentences: dict[str, list[int]] = defaultdict(list)
        for word in analysis.words:
            self.starts[word.field].append(word.start)
            self.sentences[word.field].append(word.sentence)

    def at(self, field: str, offset: int) -> int:
        """The sentence of the last word that starts at or before ``offset`` (0 if none)."""
        i = bisect.bisect_right(self.starts[field], offset)
        return self.sentences[field][i - 1] if i else 0


def _by_area_and_field(hits: Iterable[Hit]) -> dict[tuple[str, str], SpanIndex]:
    spans: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for hit in hits:
        spans[hit.area, hit.field].append((hit.start, hit.end))
    return {place: SpanIndex(found) for place, found in spans.items()}


def _tokenized(
    taxonomy: Taxonomy, spacy_model: str, nlp: Any
) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The normalised word sequences of every phrase rule (alias, cue, exclusion, requirement)
    of the taxonomy, by its text. Splitting some 8,500 phrases with spaCy's tokenizer is most of
    compiling the shipped taxonomy (0.2-0.4 s of every cold start), so with tagger's own
    tokenizer (``nlp`` None) they are kept in the cache directory, keyed by the taxonomy's
    sha256, the spaCy model's and spaCy's versions, tagger's version and the source of the
    module that tokenizes (language/text.py); an entry that is damaged, or not this key's, is
    made again (io.cache), and a cache that cannot be read or written is ignored. spaCy runs
    in a memory zone: the words are Python strings, its copies are freed."""
    texts = sorted(
        {
            text
            for area in taxonomy.areas
            for kind in PHRASE_KINDS
            for text in getattr(area, RULE_FIELDS[kind])
        }
    )
    cached = _cache_entry(taxonomy, spacy_model) if nlp is None else None
    if cached is not None:
        kept = _kept_words(cache.load(*cached), texts)
        if kept is not None:
            return kept
    if nlp is None:
        nlp = load_spacy(spacy_model, tagging=False)  # the same tokenizer, no tagger
    with nlp.memory_zone():
        tokenized = {text: tuple(tokenize_phrase(nlp, text)) for text in texts}
    if cached is not None:
        words = [tokenized[text] for text in texts]
        cache.save(*cached, json.dumps({"texts": texts, "words": words}).encode("utf-8"))
    return tokenized


def _kept_words(
    data: bytes | None, texts: list[str]
) -> dict[str, tuple[tuple[str, ...], ...]] | None:
    """The words a cache entry holds for ``texts`` (its bytes, checked by io.cache), or None if
    it holds none, or other texts, or is no entry of this shape."""
    if data is None:
        return None
    try:
        kept = json.loads(data)
        if kept["texts"] != texts or len(kept["words"]) != len(texts):
            return None
        words = {
            text: tuple(tuple(words) for words in variants)
            for text, variants in zip(texts, kept["words"], strict=True)
        }
    except (ValueError, TypeError, KeyError):
        return None
    return words


def _cache_entry(taxonomy: Taxonomy, spacy_model: str) -> tuple[Path, str] | None:
    """Where the words of the taxonomy's phrases are kept, and the key they are kept under
    (io.cache checks both); None without a usable cache."""
    where = cache.subdirectory("rules")
    if where is None:
        return None
    from importlib.metadata import version

    from ..language import text

    key = hashlib.sha256(
        json.dumps(
            [
                taxonomy.sha256,
                spacy_model_version(spacy_model),
                version("spacy"),
                tagger_version(),
                hashlib.sha256(Path(text.__file__).read_bytes()).hexdigest(),
            ]
        ).encode()
    ).hexdigest()
    return where / f"{key}.json", key
