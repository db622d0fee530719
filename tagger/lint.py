"""Lint a taxonomy: the structural errors loading finds, and the quieter faults it lets through.

:func:`lint_taxonomy` returns :class:`Finding` objects, one per problem, each with the YAML line
it is about. Errors make the taxonomy unusable (``load_taxonomy`` refuses it); warnings are rules
that will mislead the tagger: the same alias in two areas, acronyms that are English words,
regular expressions that can backtrack catastrophically, areas nothing can find, missing
crosswalks and, given a tagged corpus, rules that never fire.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, TaxonomyError
from .taxonomy import SCHEMES, Taxonomy, _line_numbers, default_taxonomy_path, load_taxonomy

try:  # Python 3.11+; sre_parse is the deprecated name of the same module
    import re._parser as _sre
except ImportError:  # pragma: no cover
    import sre_parse as _sre  # type: ignore[no-redef]

# Words an upper-case acronym would collide with, on top of spaCy's English stop words.
COMMON_WORDS = frozenset({"it", "us", "am", "so", "on", "no", "go", "can", "may", "one", "aim",
                          "art", "map", "mix", "set", "top", "war", "big"})
RULE_KINDS = ("aliases", "cues", "acronyms", "patterns")
_SHOWN = 3  # rules named in a "never fired" finding


@dataclass(frozen=True)
class Finding:
    """One problem of a taxonomy file: ``taxonomy.yaml line 40: warning: area 'x': ...``."""

    severity: str  # "error" or "warning"
    line: int | None
    area: str | None
    message: str
    source: str = "taxonomy.yaml"

    def __str__(self) -> str:
        where = f"{self.source} line {self.line}" if self.line else self.source
        return f"{where}: {self.severity}: {self.message}"


def lint_taxonomy(path: str | Path | None = None,
                  corpus: str | Path | None = None) -> list[Finding]:
    """Every finding for the taxonomy at ``path`` (default: the shipped one), in line order.

    ``corpus`` is a file of ``tagger tag`` output; with it, rules that never fired and areas never
    tagged are reported too.
    """
    path = Path(path) if path is not None else default_taxonomy_path()
    try:
        taxonomy = load_taxonomy(path)
    except TaxonomyError as exc:
        return [_structural(problem, str(path)) for problem in exc.problems]
    node = yaml.compose(path.read_text(encoding="utf-8-sig"), Loader=yaml.SafeLoader)
    lines = _line_numbers(node)
    linter = _Linter(taxonomy, lines)
    linter.shared_phrases()
    linter.acronyms()
    linter.patterns()
    linter.empty_areas()
    linter.crosswalks()
    if corpus is not None:
        linter.corpus(Path(corpus))
    return sorted(linter.findings, key=lambda f: (f.line or 0))


def _structural(problem: str, source: str) -> Finding:
    """A load error ('t.yaml line 8: area id 'rl' is used twice ...') as a Finding."""
    match = re.match(rf"{re.escape(source)}(?: line (\d+))?: (.*)", problem, re.DOTALL)
    line, message = (int(match[1]) if match[1] else None, match[2]) if match else (None, problem)
    area = re.match(r"area (?:id )?'([^']*)'", message)
    return Finding("error", line, area[1] if area else None, message, source)


class _Linter:
    def __init__(self, taxonomy: Taxonomy, lines: dict[tuple[Any, ...], int]) -> None:
        self.taxonomy = taxonomy
        self.lines = lines
        self.index = {area.id: i for i, area in enumerate(taxonomy.areas)}
        self.findings: list[Finding] = []

    def warn(self, area: str, message: str, *where: Any) -> None:
        """A warning about ``area``, on the line of ``where`` inside it ('aliases', 2) if given."""
        line = self.line_of(area, *where)
        self.findings.append(Finding("warning", line, area, f"area {area!r}: {message}",
                                     self.taxonomy.source))

    def line_of(self, area: str, *where: Any) -> int | None:
        return self.lines.get(("areas", self.index[area], *where), self.taxonomy.lines.get(area))

    def shared_phrases(self) -> None:
        """An alias or cue whose normalised words are another area's alias or cue."""
        from .text import load_spacy, tokenize_phrase

        nlp = load_spacy()
        first: dict[tuple[str, ...], tuple[str, str, str, int]] = {}
        for area in self.taxonomy.areas:
            for field in ("aliases", "cues"):
                for k, phrase in enumerate(getattr(area, field)):
                    for words in tokenize_phrase(nlp, phrase):
                        if words not in first:
                            first[words] = (area.id, field, phrase, k)
                            continue
                        other, other_field, other_phrase, other_k = first[words]
                        if other == area.id:
                            continue
                        kind = "its ancestor" if other in self.taxonomy.path(area.id) else "area"
                        self.warn(area.id, f"{_singular(field)} {phrase!r} is also the "
                                  f"{_singular(other_field)} {other_phrase!r} of {kind} {other!r} "
                                  f"(line {self.line_of(other, other_field, other_k)}) "
                                  "(keep it in one area)", field, k)
                        break  # one finding per phrase

    def acronyms(self) -> None:
        """An acronym two areas claim, or one that is an English word when upper-cased."""
        from spacy.lang.en.stop_words import STOP_WORDS

        common = COMMON_WORDS | {word.lower() for word in STOP_WORDS}
        owner: dict[str, tuple[str, int]] = {}
        for area in self.taxonomy.areas:
            for k, acronym in enumerate(area.acronyms):
                if acronym in owner and owner[acronym][0] != area.id:
                    other, other_k = owner[acronym]
                    self.warn(area.id, f"acronym {acronym!r} is also an acronym of area {other!r} "
                              f"(line {self.line_of(other, 'acronyms', other_k)}) "
                              "(keep it in one area, or write the long forms as aliases)",
                              "acronyms", k)
                owner.setdefault(acronym, (area.id, k))
                if acronym.lower() in common:
                    self.warn(area.id, f"acronym {acronym!r} is a common English word (it matches "
                              "ordinary upper-case text; use a pattern with context instead)",
                              "acronyms", k)

    def patterns(self) -> None:
        for area in self.taxonomy.areas:
            for k, pattern in enumerate(area.patterns):
                if can_backtrack_catastrophically(pattern):
                    self.warn(area.id, f"pattern '{pattern}' can backtrack catastrophically: a "
                              "repeat contains another unbounded repeat or overlapping "
                              "alternatives (make the inner part match one way only)",
                              "patterns", k)

    def empty_areas(self) -> None:
        for area in self.taxonomy.areas:
            has_rules = any(getattr(area, f) for f in RULE_KINDS)
            if not has_rules and not self.taxonomy.children[area.id]:
                self.warn(area.id, "has no rules and no sub-areas, so nothing can tag it "
                          "(add aliases, cues, acronyms or patterns, or remove it)")

    def crosswalks(self) -> None:
        for area in self.taxonomy.areas:
            missing = [s for s in SCHEMES if s not in self.taxonomy.crosswalk(area.id)]
            if missing:
                self.warn(area.id, f"no {', '.join(missing)} crosswalk, its own or an ancestor's "
                          "(add crosswalk labels to it or to a parent)")

    def corpus(self, path: Path) -> None:
        """Rules that never fired in a tagged corpus, and areas it never tagged."""
        fired: dict[str, set[str]] = defaultdict(set)
        tagged: set[str] = set()
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    for tag in json.loads(line)["tags"]:
                        tagged.add(tag["id"])
                        for evidence in tag["evidence"]:
                            fired[evidence["area"]].add(evidence["rule"])
                except (ValueError, KeyError, TypeError):
                    raise InputError("not a line of tagged JSONL (run `tagger tag` first)",
                                     source=str(path), line=number) from None
        for area in self.taxonomy.areas:
            rules = [r for f in RULE_KINDS for r in getattr(area, f)]
            silent = [r for r in rules if r not in fired[area.id]]
            if area.id not in tagged:
                none = f", and none of its {len(rules)} rules fired" if rules else ""
                none = none if silent == rules else ""
                self.warn(area.id, f"never tagged in {path.name}{none} (check its rules against "
                          "papers that should have it)")
                if none:
                    continue
            if silent:
                shown = ", ".join(repr(r) for r in silent[:_SHOWN])
                more = ", ..." if len(silent) > _SHOWN else ""
                self.warn(area.id, f"{len(silent)} of {len(rules)} rules never fired in "
                          f"{path.name}: {shown}{more} (check their spelling, or remove them)")


def can_backtrack_catastrophically(pattern: str) -> bool:
    """A heuristic over the parsed pattern: a repeat (at most more than once) whose body holds an
    unbounded repeat, like ``(a+)+`` or ``(\\w+\\s?)+``, or alternatives that start alike, like
    ``(a|a)*``. Possessive repeats and atomic groups never backtrack and are not flagged."""
    return _nested(_sre.parse(pattern), inside_repeat=False)


_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT)


def _nested(items: Any, inside_repeat: bool) -> bool:
    for op, av in items:
        if op in _REPEATS:
            low, high, body = av
            if inside_repeat and high == _sre.MAXREPEAT:
                return True
            if high > 1 and (_nested(body, True) or _alternatives_overlap(body)):
                return True
            if _nested(body, inside_repeat):
                return True
        elif op is _sre.SUBPATTERN:
            if _nested(av[3], inside_repeat):
                return True
        elif op is _sre.BRANCH:
            if any(_nested(branch, inside_repeat) for branch in av[1]):
                return True
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            if _nested(av[1], inside_repeat):
                return True
    return False


def _alternatives_overlap(body: Any) -> bool:
    """``(a|a)``: two alternatives of the repeated body start alike. The parser has already moved
    a common prefix out, so ``a|a`` arrives as ``a`` followed by two empty alternatives."""
    for op, av in body:
        if op is _sre.SUBPATTERN and _alternatives_overlap(av[3]):
            return True
        if op is _sre.BRANCH:
            starts = [repr(list(branch)[:1]) for branch in av[1]]
            if len(starts) != len(set(starts)):
                return True
    return False


def _singular(field: str) -> str:
    return {"aliases": "alias", "cues": "cue"}[field]
