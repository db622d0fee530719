"""Which tagged papers a new taxonomy cannot change, decided without reading them again.

Retagging a paper costs what reading it costs (spaCy's tokenizer, the word analysis), and an
edit of a few areas leaves most papers of a corpus as they were. Given the taxonomy a paper was
tagged with and the new one, :class:`Untouched` says, from the paper's text alone, when its tags
and facets cannot differ; `tagger retag` then writes its line with the new provenance and
nothing else changed, and reads only the other papers again.

The reasoning. A paper's tags are a function of its rule hits and of the areas those hits make
candidates (a hit's area and its ancestors): their rules, names, places in the tree,
crosswalks, descriptions, and whether they have sub-areas. Call an area *dirty* when it differs
between the two taxonomies (added, dropped, any field changed, its first sub-area gained or its
last lost), or lies below one that does (its exclusions, requirements, crosswalk and place come
from above). An ancestor of a dirty area is not dirty itself: for a paper with no hit on a dirty
area, its evidence, features and sub-area candidates are the same. A paper whose hits all lie
on clean areas has the same candidates with the same evidence and features under both
taxonomies, so the same tags. And a paper has no hit on a dirty area, under either taxonomy, if
its text holds none of those areas' rules: no phrase (its normalised words, as stems, in a row
in the lower-cased, NFKC-folded text or in a keyphrase's normalised form: 'matrices' holds
'matri', 'studies' holds 'stud'), no acronym, no pattern match. Candidates also come from the
paper's nearest shipped papers (tagging.neighbours): a paper none of whose neighbours is tagged
with a dirty area has the same of those too. The test is a superset: a paper it cannot clear is
simply read again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import regex

from ..language import vectors
from ..language.text import clean, tokenize_phrase
from ..records import TaggedPaper
from ..taxonomy.model import Area, Taxonomy
from ..taxonomy.rules import PATTERN_LIMIT
from .neighbours import NeighbourIndex, abstract_key


class Untouched:
    """``untouched.cleared(records)``: whether each record, tagged with ``old``, is tagged the
    same with ``new`` (True is certain; False means: read it again)."""

    def __init__(
        self,
        old: Taxonomy,
        new: Taxonomy,
        nlp: Any,
        indexes: Mapping[str, tuple[NeighbourIndex, int]] | None = None,
    ) -> None:
        changed = _changed_rules(old, new)
        self.everything = changed is None  # nothing can be cleared
        rules, self.dirty = changed or (set(), set())
        self.indexes = dict(indexes or {})  # kind -> (index, neighbours read)
        self.words: set[str] = set()  # stems of the changed one-word phrases
        self.phrases: dict[tuple[str, ...], re.Pattern[str]] = {}  # and of longer ones
        self.acronyms: set[str] = set()
        self.patterns: list[regex.Pattern[str]] = []
        for field, text in rules:
            if field == "acronyms":
                self.acronyms.add(text)
            elif field == "patterns":
                self.patterns.append(regex.compile(text))
            else:
                for words in tokenize_phrase(nlp, text):
                    stems = tuple(_stem(word) for word in words)
                    if len(stems) == 1:
                        self.words.add(stems[0])
                    else:
                        self.phrases[stems] = _adjacent(stems)

    def cleared(self, records: Sequence[TaggedPaper]) -> list[bool]:
        """For each record, whether it is tagged the same with the new taxonomy (True is
        certain; False means: read it again). The neighbours of all of them are found at once:
        one pass over each index, not one a record."""
        if self.everything:
            return [False] * len(records)
        near = self._near_dirty(records)
        return [
            not dirty and self._holds_no_rule(r) for r, dirty in zip(records, near, strict=True)
        ]

    def _near_dirty(self, records: Sequence[TaggedPaper]) -> list[bool]:
        """For each record, whether it has no stored vector, or a neighbour the fitted model
        reads is tagged with a dirty area (its votes may differ)."""
        found = [not record.vector for record in records]
        with_vector = [k for k, record in enumerate(records) if record.vector]
        codes = [vectors.decode(records[k].vector or "") for k in with_vector]
        keys = [abstract_key(records[k].paper.abstract) for k in with_vector]
        for index, n in self.indexes.values():
            for k, near in zip(with_vector, index.nearest(codes, keys, n), strict=True):
                found[k] = found[k] or any(
                    area in self.dirty for j, _ in near for area in index.tags_of(j)
                )
        return found

    def _holds_no_rule(self, record: TaggedPaper) -> bool:
        """Whether the record's text and keyphrases hold none of the changed rules."""
        paper = record.paper
        text = f"{clean(paper.title or '')}\n{clean(paper.abstract)}"
        if any(acronym in text for acronym in self.acronyms):
            return False
        folded = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
        folded += "\n" + "\n".join(k.normalized for k in record.keyphrases)
        if any(stem in folded for stem in self.words):
            return False
        if any(
            all(stem in folded for stem in stems) and adjacent.search(folded)
            for stems, adjacent in self.phrases.items()
        ):
            return False
        for field in (paper.title or "", paper.abstract):
            for pattern in self.patterns:
                try:
                    if pattern.search(field, timeout=PATTERN_LIMIT):
                        return False
                except TimeoutError:  # read again: the rules say which pattern and stop the run
                    return False
        return True


RULES = ("aliases", "cues", "acronyms", "patterns", "exclude", "requires")


def _changed_rules(old: Taxonomy, new: Taxonomy) -> tuple[set[tuple[str, str]], set[str]] | None:
    """The rules (field, text) a paper must hold none of to be tagged alike by both taxonomies,
    and the dirty areas (with those below them, in either taxonomy); None when no paper can be
    cleared (the areas both have come in another order, which can order evidence differently;
    or either has areas no rule finds, which any paper may have as candidates by description).

    An area whose rules alone changed contributes the rules added or removed: a paper with
    none of them has the same hits on it. An area that changed otherwise (added, dropped,
    renamed, moved, described anew, its crosswalk, its first sub-area gained or last lost,
    requirements set or lifted) contributes every rule of it and of the areas below it, in both
    taxonomies: those areas' candidates read it."""
    shared = [area.id for area in old.areas if area.id in new.by_id]
    if shared != [area.id for area in new.areas if area.id in old.by_id]:
        return None
    if old.described_only or new.described_only:  # found by description: any paper may move
        return None
    rules: set[tuple[str, str]] = set()
    dirty: set[str] = set()
    for area_id in old.by_id.keys() | new.by_id.keys():
        before, after = old.by_id.get(area_id), new.by_id.get(area_id)
        if before is None or after is None or _shape(old, before) != _shape(new, after):
            dirty.add(area_id)
            continue
        for field in RULES:
            gone_or_new = set(getattr(before, field)) ^ set(getattr(after, field))
            rules |= {(field, text) for text in gone_or_new}
    below_dirty = set(dirty)
    for taxonomy in (old, new):
        for area_id in dirty & taxonomy.by_id.keys():
            for below in taxonomy.descendants(area_id):
                below_dirty.add(below)
                area = taxonomy.by_id[below]
                rules |= {(field, text) for field in RULES for text in getattr(area, field)}
    return rules, below_dirty


def _shape(taxonomy: Taxonomy, area: Area) -> tuple:
    """What an area is, its rules aside: what its candidates and those of the areas below it
    read of it (the embedded description among them)."""
    return (
        area.model_dump(exclude=set(RULES)),
        area.prototype(),
        bool(area.requires),
        bool(taxonomy.children[area.id]),
    )


def _stem(word: str) -> str:
    """What the folded text holds where a word of this normalised form is: the form without
    its last two letters (normalize_word turns 'indices' into 'index', 'studies' into
    'study': 'ind' and 'stud' stay)."""
    return word[:-2] if len(word) > 2 else word


def _adjacent(stems: tuple[str, ...]) -> re.Pattern[str]:
    """The stems in order, each word's rest and the space or nothing between words skipped: a
    phrase's words are consecutive words of the paper (a hyphen between them is part of the
    word before)."""
    return re.compile(r"\S*\s*".join(re.escape(stem) for stem in stems))
