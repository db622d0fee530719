"""Lint a taxonomy: the structural errors loading finds, and the quieter faults it lets through.

:func:`lint_taxonomy` returns :class:`Finding` objects, one per problem, each with the YAML line
it is about. Errors make the taxonomy unusable (``load_taxonomy`` refuses it); warnings are rules
that will mislead the tagger: the same alias in two areas, acronyms that are English words,
regular expressions that can backtrack catastrophically, areas nothing can find, missing
crosswalks and, given a tagged corpus, rules that never fire.

A phrase or acronym meant for two areas (a paper on "fair clustering" is about both) is said so
on its line, with the reason: ``- fair clustering  # lint: shared, fairness applied to
clustering``. Lint then does not flag it there (:data:`SHARED_MARK`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TaxonomyError
from ..io.tagged import Skip, read_tagged, same_taxonomy
from ..records import TaggedPaper
from .loading import default_taxonomy_path, load_taxonomy, source_name
from .model import Taxonomy
from .rules import RuleSet
from .schemes import schemes

# Words an upper-case acronym would collide with, on top of spaCy's English stop words.
COMMON_WORDS = frozenset(
    {
        "it",
        "us",
        "am",
        "so",
        "on",
        "no",
        "go",
        "can",
        "may",
        "one",
        "aim",
        "art",
        "map",
        "mix",
        "set",
        "top",
        "war",
        "big",
    }
)
RULE_FIELDS = ("aliases", "cues", "acronyms", "patterns")  # what can tag an area (not exclude)
_SHOWN = 3  # rules named in a "never fired" finding
# A corpus with fewer papers than this per area of the taxonomy is too small for a rule's silence
# to mean anything: most areas of a 200-area taxonomy are absent from 19 papers. Below it, lint
# says so in one finding instead of advising to remove rules that merely had no paper to fire on.
PAPERS_PER_AREA = 10
LONG_PHRASE_WORDS = 8
SHARED_MARK = re.compile(r"#.*\blint: shared\b")  # on a rule's line: it is meant for two areas


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


def lint_taxonomy(
    path: str | Path | None = None,
    corpus: str | Path | None = None,
    *,
    skip: Skip | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Finding]:
    """Every finding for the taxonomy at ``path`` (default: the shipped one), in line order.

    ``corpus`` is a file of ``tagger tag`` output; with it, rules that never fired and areas never
    tagged are reported too. ``skip`` and ``warn`` are as for :func:`tagger.io.tagged.read_tagged`
    and :func:`tagger.io.tagged.same_taxonomy`: lines that are not tagged output, and a corpus
    tagged with another taxonomy.
    """
    path = Path(path) if path is not None else default_taxonomy_path()
    source = source_name(path)
    try:
        taxonomy = load_taxonomy(path)
    except TaxonomyError as exc:
        return [_structural(problem, source) for problem in exc.problems]
    linter = _Linter(taxonomy)
    linter.shared_phrases()
    linter.acronyms()
    linter.patterns()
    linter.empty_areas()
    linter.long_phrases()
    linter.crosswalks()
    if corpus is not None:
        records = read_tagged(corpus, skip=skip)
        if warn is not None:
            records = same_taxonomy(records, taxonomy, warn, str(corpus))
        linter.corpus(records, Path(corpus).name)
    marked = _shared_lines(path, source)
    findings = [
        f for f in linter.findings if not (id(f) in linter.shared and f.line in marked[f.source])
    ]
    return sorted(findings, key=lambda f: (f.source != source, f.source, f.line or 0))


def _shared_lines(path: Path, source: str) -> defaultdict[str, set[int]]:
    """The lines marked ``# lint: shared``, by source: of the file linted and of the packaged
    taxonomy (which an overlay may extend)."""
    marked: defaultdict[str, set[int]] = defaultdict(set)
    for name, file in {
        source: path,
        source_name(default_taxonomy_path()): default_taxonomy_path(),
    }.items():
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        marked[name] = {k for k, line in enumerate(lines, 1) if SHARED_MARK.search(line)}
    return marked


def _structural(problem: str, source: str) -> Finding:
    """A load error ('t.yaml line 8: area id 'rl' is used twice ...') as a Finding, in the
    file it names (an overlay's problem may be in the taxonomy it extends)."""
    match = re.match(r"(.*?) line (\d+): (.*)", problem, re.DOTALL)
    if match:
        source, line, message = match[1], int(match[2]), match[3]
    else:
        line, message = None, problem.removeprefix(f"{source}: ")
    area = re.match(r"area (?:id )?'([^']*)'", message)
    return Finding("error", line, area[1] if area else None, message, source)


class _Linter:
    def __init__(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self.findings: list[Finding] = []
        self.shared: set[int] = set()  # ids of the findings that a `# lint: shared` mark silences

    def warn(self, area: str, message: str, *where: Any, shared: bool = False) -> None:
        """A warning about ``area``, on the line of ``where`` inside it ('aliases', 2) if given:
        in the file that line is in (an overlay, or the taxonomy it extends). ``shared``: it is
        about a phrase another area has too, which its line may say is meant."""
        at = self.taxonomy.origin(area, *where)
        source, line = (at.source, at.line) if at else (self.taxonomy.source, None)
        finding = Finding("warning", line, area, f"area {area!r}: {message}", source)
        self.findings.append(finding)
        if shared:
            self.shared.add(id(finding))

    def place(self, area: str, *where: Any, beside: tuple[Any, ...]) -> str:
        """'line 40' of a node, in a finding about the node ``beside`` (area, field, index);
        'other.yaml line 40' when the two were written in different files."""
        found, here = self.taxonomy.origin(area, *where), self.taxonomy.origin(*beside)
        if found is None:
            return "line ?"
        return f"line {found.line}" if here and here.source == found.source else str(found)

    def shared_phrases(self) -> None:
        """An alias whose normalised words are another area's alias or cue, or a cue that is
        another area's alias (of the same facet: a contribution type may share words with a
        topic). Two areas' cues may share words: a cue is a word that suggests an area "but
        also occurs elsewhere" (taxonomy.yaml's header), so a cue shared is what cues are for."""
        first: dict[tuple[str | None, tuple[str, ...]], Any] = {}
        for rule in RuleSet(self.taxonomy).rules:
            if rule.kind not in ("alias", "cue"):
                continue
            for words in rule.words:
                other = first.setdefault((self.taxonomy.facet(rule.area), words), rule)
                if other.area == rule.area or rule.kind == other.kind == "cue":
                    continue
                kind = "its ancestor" if other.area in self.taxonomy.path(rule.area) else "area"
                there = self.place(
                    other.area, other.field, other.index, beside=(rule.area, rule.field, rule.index)
                )
                self.warn(
                    rule.area,
                    f"{rule.kind} {rule.text!r} is also the {other.kind} "
                    f"{other.text!r} of {kind} {other.area!r} "
                    f"({there}) "
                    "(keep it in one area, or mark its line `# lint: shared, WHY`)",
                    rule.field,
                    rule.index,
                    shared=True,
                )
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
                    there = self.place(other, "acronyms", other_k, beside=(area.id, "acronyms", k))
                    self.warn(
                        area.id,
                        f"acronym {acronym!r} is also an acronym of area {other!r} "
                        f"({there}) "
                        "(keep it in one area, or write the long forms as aliases)",
                        "acronyms",
                        k,
                        shared=True,
                    )
                owner.setdefault(acronym, (area.id, k))
                if acronym.lower() in common:
                    self.warn(
                        area.id,
                        f"acronym {acronym!r} is a common English word (it matches "
                        "ordinary upper-case text; use a pattern with context instead)",
                        "acronyms",
                        k,
                    )

    def patterns(self) -> None:
        for area in self.taxonomy.areas:
            for k, pattern in enumerate(area.patterns):
                if can_backtrack_catastrophically(pattern):
                    self.warn(
                        area.id,
                        f"pattern '{pattern}' can backtrack catastrophically: a "
                        "repeat contains another unbounded repeat or overlapping "
                        "alternatives (make the inner part match one way only)",
                        "patterns",
                        k,
                    )

    def long_phrases(self) -> None:
        """Aliases and cues so long they will rarely be written just so in a paper."""
        for area in self.taxonomy.areas:
            for field in ("aliases", "cues"):
                for k, phrase in enumerate(getattr(area, field)):
                    words = len(phrase.split())
                    if words > LONG_PHRASE_WORDS:
                        self.warn(
                            area.id,
                            f"{field[:-1] if field == 'cues' else 'alias'} {phrase!r} has "
                            f"{words} words; papers rarely write a phrase this long just so "
                            "(name the area in fewer words)",
                            field,
                            k,
                        )

    def empty_areas(self) -> None:
        for area in self.taxonomy.areas:
            has_rules = any(getattr(area, f) for f in RULE_FIELDS)
            if not has_rules and not self.taxonomy.children[area.id]:
                self.warn(
                    area.id,
                    "has no rules and no sub-areas, so nothing can tag it "
                    "(add aliases, cues, acronyms or patterns, or remove it)",
                )
            elif has_rules and area.facet:
                self.warn(
                    area.id,
                    "is a facet, and a facet's root is never listed, so its own rules tag "
                    "nothing (move them to the value they are evidence of)",
                )

    def crosswalks(self) -> None:
        """Topic areas without a label of a scheme the taxonomy crosswalks to (in some area);
        a facet maps to a conference's labels only where the conference has such labels."""
        used = {scheme for area in self.taxonomy.areas for scheme in area.crosswalk}
        for area in self.taxonomy.areas:
            if self.taxonomy.facet(area.id):
                continue
            crosswalk = self.taxonomy.crosswalk(area.id)
            missing = [s for s in schemes() if s in used and s not in crosswalk]
            if missing:
                self.warn(
                    area.id,
                    f"no {', '.join(missing)} crosswalk, its own or an ancestor's "
                    "(add crosswalk labels to it or to a parent)",
                )

    def corpus(self, records: Iterable[TaggedPaper], name: str) -> None:
        """Rules that never fired in a tagged corpus, and areas it never tagged; of a corpus with
        fewer than ``PAPERS_PER_AREA`` papers an area, one finding that says it is too small."""
        fired: dict[str, set[str]] = defaultdict(set)
        tagged: set[str] = set()
        papers = 0
        for record in records:
            papers += 1
            for tag in record.tags + record.facets:
                tagged.add(tag.id)
                for evidence in tag.evidence:
                    fired[evidence.area].add(evidence.rule)
        needed = PAPERS_PER_AREA * len(self.taxonomy.areas)
        if papers < needed:
            self._small_corpus(name, papers, needed, fired, tagged)
            return
        for area in self.taxonomy.areas:
            rules = [r for f in RULE_FIELDS for r in getattr(area, f)]
            silent = [r for r in rules if r not in fired[area.id]]
            if area.id not in tagged:
                none = f", and none of its {len(rules)} rules fired" if rules else ""
                none = none if silent == rules else ""
                self.warn(
                    area.id,
                    f"never tagged in {name}{none} (check its rules against "
                    "papers that should have it)",
                )
                if none:
                    continue
            if silent:
                shown = ", ".join(repr(r) for r in silent[:_SHOWN])
                more = ", ..." if len(silent) > _SHOWN else ""
                self.warn(
                    area.id,
                    f"{len(silent)} of {len(rules)} rules never fired in "
                    f"{name}: {shown}{more} (check their spelling, or remove them)",
                )

    def _small_corpus(
        self, name: str, papers: int, needed: int, fired: dict[str, set[str]], tagged: set[str]
    ) -> None:
        """One finding for a corpus too small to call a rule unused: the counts, not the rules."""
        areas = self.taxonomy.areas
        rules = [(a.id, r) for a in areas for f in RULE_FIELDS for r in getattr(a, f)]
        silent = sum(rule not in fired[area] for area, rule in rules)
        untagged = sum(a.id not in tagged for a in areas)
        message = (
            f"{name} holds {papers:,} papers, too few to tell unused rules from rules no paper "
            f"there called for: {untagged} of {len(areas)} areas were never tagged and "
            f"{silent:,} of {len(rules):,} rules never fired (lint with {needed:,} papers or more, "
            f"{PAPERS_PER_AREA} an area, to have them listed)"
        )
        self.findings.append(Finding("warning", None, None, message, self.taxonomy.source))


def can_backtrack_catastrophically(pattern: str) -> bool:
    """A heuristic over the pattern as the ``regex`` engine (which runs the patterns) parses it:
    a repeat (at most more than once) whose body holds an unbounded repeat, like ``(a+)+`` or
    ``(\\w+\\s?)+``, or alternatives that start alike, like ``(a|a)*``. Possessive repeats and
    atomic groups never backtrack and are not flagged. A pattern it cannot read is not flagged."""
    try:
        parsed = _parse(pattern)
    except Exception:  # noqa: BLE001 - regex.compile accepted it; the analysis is best effort
        return False
    return _nested(parsed, inside_repeat=False)


def _parse(pattern: str) -> Any:
    """The parse tree the ``regex`` module builds before compiling (its own parser, so its
    syntax, such as ``\\p{Lu}`` or ``(?V1)``, is understood); flags set inside the pattern
    apply to all of it, as in ``regex.compile``."""
    from regex import _regex_core as core

    flags = 0
    while True:
        source = core.Source(pattern)
        info = core.Info(flags, source.char_type, {})
        source.ignore_space = bool(info.flags & core.VERBOSE)
        try:
            return core._parse_pattern(source, info)
        except core._UnscopedFlagSet:
            flags = info.global_flags


def _children(node: Any) -> list[Any]:
    """The sub-patterns of a parse-tree node, whatever its kind."""
    from regex._regex_core import RegexBase

    found = []
    for value in vars(node).values():
        if isinstance(value, RegexBase):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, RegexBase))
    return found


def _nested(node: Any, inside_repeat: bool) -> bool:
    from regex._regex_core import Atomic, GreedyRepeat, PossessiveRepeat

    if isinstance(node, (PossessiveRepeat, Atomic)):  # matched once, never backtracked into
        return any(_nested(child, False) for child in _children(node))
    if isinstance(node, GreedyRepeat):  # LazyRepeat is one too
        unbounded = node.max_count is None
        if inside_repeat and unbounded:
            return True
        if (unbounded or node.max_count > 1) and (
            _nested(node.subpattern, True) or _alternatives_overlap(node.subpattern)
        ):
            return True
        return _nested(node.subpattern, inside_repeat)
    return any(_nested(child, inside_repeat) for child in _children(node))


def _alternatives_overlap(node: Any, repeated: Any = None) -> bool:
    """Alternatives of a repeated body that can share out the same text: once the prefix all of
    them share is set aside, two still start alike or both end (``(a|a)+``); or one ends there
    and another goes on with what starts the next repetition (``(a|aa)+``). ``(a|ab)+`` is fine:
    after the 'a', 'ab' needs a 'b'."""
    from regex._regex_core import Branch, GreedyRepeat, Sequence

    repeated = node if repeated is None else repeated
    if isinstance(node, Branch):
        sequences = [
            [_key(item) for item in (b.items if isinstance(b, Sequence) else [b])]
            for b in node.branches
        ]
        shared = 0
        while all(len(s) > shared for s in sequences) and len({s[shared] for s in sequences}) == 1:
            shared += 1
        starts = [s[shared] if len(s) > shared else None for s in sequences]
        if len(starts) != len(set(starts)):
            return True
        next_start = _first_key(repeated)
        if None in starts and next_start is not None and next_start in starts:
            return True
    if isinstance(node, GreedyRepeat):
        return False  # a repeat inside is _nested's business
    return any(_alternatives_overlap(child, repeated) for child in _children(node))


def _first_key(node: Any) -> tuple | None:
    """The key of the first atom every match of a node starts with, if there is one."""
    from regex._regex_core import Branch, Group, Sequence

    if isinstance(node, Group):
        return _first_key(node.subpattern)
    if isinstance(node, Sequence):
        return _first_key(node.items[0]) if node.items else None
    if isinstance(node, Branch):
        firsts = {_first_key(branch) for branch in node.branches}
        return firsts.pop() if len(firsts) == 1 else None
    return _key(node)


def _key(node: Any) -> tuple:
    """A hashable picture of a parse-tree node, equal for nodes that match the same way."""
    from regex._regex_core import RegexBase

    parts: list[Any] = [type(node).__name__]
    for name, value in sorted(vars(node).items()):
        if isinstance(value, RegexBase):
            parts.append((name, _key(value)))
        elif isinstance(value, (list, tuple)):
            parts.append(
                (name, tuple(_key(v) if isinstance(v, RegexBase) else repr(v) for v in value))
            )
        elif isinstance(value, (int, str, bool, type(None))):
            parts.append((name, value))
    return tuple(parts)
