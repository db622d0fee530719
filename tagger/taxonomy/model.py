"""The research taxonomy as tagger holds it: areas and the rules that find them (pydantic), and the
tree they form, with where each node was written.

A taxonomy file looks like this::

    version: "2026.11"
    areas:
      - id: rl
        name: Reinforcement learning
        description: Agents that learn to act from reward.
        aliases: [reinforcement learning, policy gradient]
        acronyms: [RL, MDP]
        crosswalk:
          iclr: [reinforcement learning]
          icml: [Reinforcement Learning]
          iclr_topic: [Reinforcement Learning]
      - id: rl.offline
        name: Offline RL
        parent: rl
        aliases: [offline reinforcement learning]

docs/reference/taxonomy.md describes every field; :mod:`tagger.taxonomy.loading` reads such a file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import regex
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..io.display import printable
from .schemes import schemes

PACKAGED = "the packaged taxonomy"  # how messages name the taxonomy tagger ships (its source)
MAX_PHRASE_WORDS = 12  # of an alias, cue or exclusion: areas are named in a few words
MAX_PHRASE_CHARS = 150
MAX_ACRONYM_CHARS = 20
MAX_PATTERN_CHARS = 1_000
MAX_AREA_DEPTH = 16
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")


def _patterns_compile(value: list[str]) -> list[str]:
    for pattern in value:
        if len(pattern) > MAX_PATTERN_CHARS:
            raise ValueError(
                f"regular expression {pattern[:40]!r}... is {len(pattern):,} characters long; "
                f"patterns may have up to {MAX_PATTERN_CHARS:,}"
            )
        try:
            regex.compile(pattern)
        except regex.error as exc:
            raise ValueError(f"regular expression {pattern!r} does not compile: {exc}") from None
    return value


def _acronyms_are_tokens(value: list[str]) -> list[str]:
    for acronym in value:
        if not acronym or any(ch.isspace() for ch in acronym):
            raise ValueError(
                f"acronym {acronym!r} must be one word with no spaces (put phrases under 'aliases')"
            )
        if len(acronym) > MAX_ACRONYM_CHARS:
            raise ValueError(
                f"acronym {acronym[:20]!r}... is {len(acronym)} characters long; acronyms "
                f"may have up to {MAX_ACRONYM_CHARS}"
            )
    return value


def _phrases_are_short(value: list[str]) -> list[str]:
    for phrase in value:
        words = len(phrase.split())
        if words > MAX_PHRASE_WORDS or len(phrase) > MAX_PHRASE_CHARS:
            raise ValueError(
                f"phrase {phrase[:40]!r}... has {words:,} words and {len(phrase):,} "
                f"characters; a rule phrase may have up to {MAX_PHRASE_WORDS} words and "
                f"{MAX_PHRASE_CHARS} characters"
            )
        if not phrase.strip():
            raise ValueError("an empty phrase matches nothing; remove it")
    return value


class Area(BaseModel):
    """One research area and the rules that find it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    description: str = ""
    parent: str | None = None
    aliases: list[str] = Field(default_factory=list)
    """Phrases, matched case-insensitively on normalised tokens (plural, hyphen, case variants)."""
    cues: list[str] = Field(default_factory=list)
    """Weaker phrases, matched like aliases, that count for less than an alias."""
    acronyms: list[str] = Field(default_factory=list)
    """Case-sensitive whole tokens (a plural 's' is allowed): RL matches 'RL', not 'RLHF', 'rl'."""
    patterns: list[str] = Field(default_factory=list)
    """Regular expressions (Python syntax) searched in the original text."""
    exclude: list[str] = Field(default_factory=list)
    """Phrases that veto any hit of this area they overlap: 'computation graph' for graphs."""
    crosswalk: dict[str, list[str]] = Field(default_factory=dict)
    """Labels of each conference scheme (schemes.json) this area maps to."""
    requires: list[str] = Field(default_factory=list)
    """Phrases of which a paper must mention one (anywhere, matched like aliases) for this area,
    or one below it, to be tagged: 'agents' count for LLM agents only in a paper about language
    models."""
    fallback: bool = False
    """A catch-all sub-area ('language models in general'): listed only when no sibling is."""
    facet: bool = False
    """A root whose sub-areas say what kind of paper it is (a contribution type: theory, dataset,
    ...) rather than what it is about: their tags are a paper's ``facets``, not its ``tags``."""

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(
                f"area id {value!r} must be lower-case letters, digits, '_' or '-', "
                "in dot-separated parts, like 'rl.offline'"
            )
        return value

    _check_patterns = field_validator("patterns")(_patterns_compile)
    _check_acronyms = field_validator("acronyms")(_acronyms_are_tokens)
    _check_phrases = field_validator("aliases", "cues", "exclude", "requires")(_phrases_are_short)

    def prototype(self) -> str:
        """What the area is about, in words to embed: its name, description and first
        aliases (the tagger compares a paper's embedding with this text's)."""
        return f"{self.name}: {self.description} ({', '.join(self.aliases[:8])})"


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a node of a taxonomy was written."""

    source: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} line {self.line}"


@dataclass(frozen=True)
class Taxonomy:
    """A validated taxonomy: areas in file order, and the tree they form."""

    version: str
    areas: tuple[Area, ...]
    sha256: str
    source: str
    # where each node of the effective taxonomy was written: ('areas', 3, 'aliases', 0) ->
    # ('taxonomy.yaml', 57); an overlay's additions point into the overlay
    origins: dict[tuple[Any, ...], Origin] = field(default_factory=dict, compare=False, repr=False)
    extends: str | None = None  # the source of the taxonomy an overlay extends
    based_on: tuple[str, ...] = ()  # the sha256 of every taxonomy an overlay extends, nearest first

    @cached_property
    def by_id(self) -> dict[str, Area]:
        return {area.id: area for area in self.areas}

    @cached_property
    def children(self) -> dict[str, list[str]]:
        kids: dict[str, list[str]] = {area.id: [] for area in self.areas}
        for area in self.areas:
            if area.parent is not None:
                kids[area.parent].append(area.id)
        return kids

    @cached_property
    def roots(self) -> list[str]:
        return [area.id for area in self.areas if area.parent is None]

    @cached_property
    def described_only(self) -> tuple[str, ...]:
        """The topic areas no rule can find: neither they nor any area below them has an
        alias, cue, acronym or pattern (a taxonomy of names and descriptions, an overlay's area
        given a description alone). Tagging finds them by their descriptions."""
        ruled: set[str] = set()
        for area in self.areas:
            if area.aliases or area.cues or area.acronyms or area.patterns:
                ruled.update(self.path(area.id))
        return tuple(
            area.id for area in self.areas if area.id not in ruled and self.facet(area.id) is None
        )

    def facet(self, area_id: str) -> str | None:
        """The facet root ``area_id`` lies under (or is), None for a topic area."""
        root = self.path(area_id)[0]
        return root if self.by_id[root].facet else None

    @cached_property
    def _position(self) -> dict[str, int]:
        return {area.id: i for i, area in enumerate(self.areas)}

    def origin(self, area_id: str, *where: Any) -> Origin | None:
        """The file and line of ``where`` inside an area (``'aliases', 2``: its third alias),
        else of the area itself; None for a taxonomy that was not read from YAML."""
        key = ("areas", self._position[area_id])
        return self.origins.get((*key, *where), self.origins.get(key))

    def line_of(self, area_id: str, *where: Any) -> int | None:
        """The line of :meth:`origin`."""
        found = self.origin(area_id, *where)
        return found.line if found else None

    def path(self, area_id: str) -> list[str]:
        """Ids from the root down to ``area_id``."""
        chain = [area_id]
        while (parent := self.by_id[chain[-1]].parent) is not None:
            chain.append(parent)
        return chain[::-1]

    def descendants(self, area_id: str) -> set[str]:
        """``area_id`` and every area below it."""
        found, todo = set(), [area_id]
        while todo:
            current = todo.pop()
            found.add(current)
            todo.extend(self.children[current])
        return found

    def crosswalk(self, area_id: str) -> dict[str, list[str]]:
        """Each scheme's labels for ``area_id``: its own, else its nearest ancestor's."""
        result: dict[str, list[str]] = {}
        for scheme in schemes():
            for ancestor in reversed(self.path(area_id)):
                labels = self.by_id[ancestor].crosswalk.get(scheme)
                if labels:
                    result[scheme] = list(labels)
                    break
        return result

    def walk(self) -> Iterator[tuple[int, Area]]:
        """Depth-first (depth, area) in file order of siblings."""

        def visit(area_id: str, depth: int) -> Iterator[tuple[int, Area]]:
            yield depth, self.by_id[area_id]
            for child in self.children[area_id]:
                yield from visit(child, depth + 1)

        for root in self.roots:
            yield from visit(root, 0)

    def render_tree(self) -> str:
        """The tree, one area a line, indented by depth, with its name and number of rules."""
        lines = []
        for depth, area in self.walk():
            rules = len(area.aliases) + len(area.cues) + len(area.acronyms) + len(area.patterns)
            lines.append(f"{'  ' * depth}{area.id}  {printable(area.name)}  ({rules} rules)")
        return "".join(line + "\n" for line in lines)

    @property
    def label(self) -> str:
        """The taxonomy in a few words, as messages name it: "the packaged taxonomy 2026.11.3",
        "lab.yaml (version 2026.11.3+lab-1, extends the packaged taxonomy)"."""
        if self.source == PACKAGED:
            return f"{PACKAGED} {self.version}"
        based = f", extends {self.extends}" if self.extends else ""
        return f"{self.source} (version {self.version}{based})"

    def summary(self) -> str:
        """One line: which taxonomy it is, its version and its shape."""
        depth = max((depth for depth, _ in self.walk()), default=0) + 1
        return f"{self.label}: {len(self.areas)} areas, {len(self.roots)} roots, {depth} levels"

    def as_dict(self) -> dict[str, Any]:
        """The effective taxonomy as plain data: every area's fields that differ from their
        defaults, in file order."""
        return {
            "version": self.version,
            "areas": [area.model_dump(exclude_defaults=True) for area in self.areas],
        }

    def canonical(self) -> bytes:
        """The effective taxonomy as one line of JSON: what :attr:`sha256` is the hash of, and
        what `tagger taxonomy show --json` prints. Comments and layout do not change it."""
        return canonical_json(self.as_dict())

    def to_yaml(self) -> str:
        """The effective taxonomy as a YAML file that loads to the same taxonomy."""
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        return yaml.dump(
            self.as_dict(), Dumper=dumper, sort_keys=False, allow_unicode=True, width=100
        )


def build_taxonomy(
    version: str,
    areas: list[Area],
    source: str,
    origins: dict[tuple[Any, ...], Origin],
    extends: Taxonomy | None = None,
) -> Taxonomy:
    """A taxonomy of ``areas``; ``extends``: the taxonomy an overlay made it from."""
    based_on = (extends.sha256, *extends.based_on) if extends else ()
    made = Taxonomy(
        version, tuple(areas), "", source, origins, extends.source if extends else None, based_on
    )
    object.__setattr__(made, "sha256", hashlib.sha256(made.canonical()).hexdigest())
    return made


def canonical_json(data: Any) -> bytes:
    """``data`` as one line of JSON, ending in a newline, the same bytes on every machine."""
    import orjson

    return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)
