"""The research taxonomy: YAML in, validated pydantic models out, with errors that name the line.

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

See the README for every field.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import regex
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .display import printable
from .errors import TaxonomyError
from .schemes import schemes

MAX_PHRASE_WORDS = 12  # of an alias, cue or exclusion: areas are named in a few words
MAX_PHRASE_CHARS = 150
MAX_ACRONYM_CHARS = 20
MAX_PATTERN_CHARS = 1_000
MAX_AREA_DEPTH = 16
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")


def default_taxonomy_path() -> Path:
    """The default taxonomy: the copy installed inside the package, or, when running from a
    source checkout, the repository's top-level ``taxonomy.yaml``."""
    installed = Path(str(resources.files("tagger"))) / "data" / "taxonomy.yaml"
    return (
        installed
        if installed.is_file()
        else Path(__file__).resolve().parent.parent / "taxonomy.yaml"
    )


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

    @field_validator("patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        for pattern in value:
            if len(pattern) > MAX_PATTERN_CHARS:
                raise ValueError(
                    f"regular expression {pattern[:40]!r}... is {len(pattern):,} characters long; "
                    f"patterns may have up to {MAX_PATTERN_CHARS:,}"
                )
            try:
                regex.compile(pattern)
            except regex.error as exc:
                raise ValueError(
                    f"regular expression {pattern!r} does not compile: {exc}"
                ) from None
        return value

    @field_validator("acronyms")
    @classmethod
    def _acronyms_are_tokens(cls, value: list[str]) -> list[str]:
        for acronym in value:
            if not acronym or any(ch.isspace() for ch in acronym):
                raise ValueError(
                    f"acronym {acronym!r} must be one word with no spaces "
                    "(put phrases under 'aliases')"
                )
            if len(acronym) > MAX_ACRONYM_CHARS:
                raise ValueError(
                    f"acronym {acronym[:20]!r}... is {len(acronym)} characters long; acronyms "
                    f"may have up to {MAX_ACRONYM_CHARS}"
                )
        return value

    @field_validator("aliases", "cues", "exclude", "requires")
    @classmethod
    def _phrases_are_short(cls, value: list[str]) -> list[str]:
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


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str
    areas: list[Area]


@dataclass(frozen=True)
class Taxonomy:
    """A validated taxonomy: areas in file order, and the tree they form."""

    version: str
    areas: tuple[Area, ...]
    sha256: str
    source: str
    # 1-based line of each node of the file: ('areas', 3, 'aliases', 0) -> 57
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict, compare=False, repr=False)

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

    def facet(self, area_id: str) -> str | None:
        """The facet root ``area_id`` lies under (or is), None for a topic area."""
        root = self.path(area_id)[0]
        return root if self.by_id[root].facet else None

    @cached_property
    def _position(self) -> dict[str, int]:
        return {area.id: i for i, area in enumerate(self.areas)}

    def line_of(self, area_id: str, *where: Any) -> int | None:
        """The line of ``where`` inside an area (``'aliases', 2``: its third alias), else of
        the area itself; None for a taxonomy that was not read from YAML."""
        key = ("areas", self._position[area_id])
        return self.lines.get((*key, *where), self.lines.get(key))

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

    def summary(self) -> str:
        """One line: where the taxonomy comes from, its version and its shape."""
        depth = max((depth for depth, _ in self.walk()), default=0) + 1
        return (
            f"{self.source}: version {self.version}, {len(self.areas)} areas, "
            f"{len(self.roots)} roots, {depth} levels"
        )


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Read, validate and cross-check a taxonomy file. Raises ``TaxonomyError`` listing every
    problem."""
    path = Path(path) if path is not None else default_taxonomy_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TaxonomyError([f"{path}: no such taxonomy file"]) from None
    except IsADirectoryError:
        raise TaxonomyError([f"{path}: is a directory, not a taxonomy file"]) from None
    except OSError as exc:
        raise TaxonomyError([f"{path}: cannot be read: {exc.strerror}"]) from None
    return parse_taxonomy(raw, source=str(path))


def parse_taxonomy(raw: bytes | str, *, source: str = "<taxonomy>") -> Taxonomy:
    """Validate a taxonomy given as YAML text; ``source`` names it in messages."""
    text = _decode(raw, source) if isinstance(raw, bytes) else raw
    data_bytes = text.encode("utf-8", errors="surrogatepass")
    try:
        # one parse gives both the node tree (for line numbers) and the data; the C loader is
        # the same safe loader, ten times faster, when PyYAML was built with libyaml
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_size(node, source)  # before anything walks the tree its aliases make
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except RecursionError:
        raise TaxonomyError([f"{source}: the YAML nests too deeply to read"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "could not determine a constructor" in str(exc):
            problem = (
                f"{problem}: YAML tags that build objects are not allowed; "
                "write plain strings, lists and mappings"
            )
        raise TaxonomyError([f"{source}{where}: {problem}"]) from None
    lines = _line_numbers(node) if node is not None else {}
    if not isinstance(data, dict):
        raise TaxonomyError([f"{source}: expected a mapping with 'version' and 'areas' at the top"])

    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        raise TaxonomyError(
            [_render(error, source, lines, data) for error in exc.errors()]
        ) from None

    problems = _cross_check(parsed.areas, source, lines)
    if problems:
        raise TaxonomyError(problems)
    return Taxonomy(
        version=parsed.version,
        areas=tuple(parsed.areas),
        sha256=hashlib.sha256(data_bytes).hexdigest(),
        source=source,
        lines=lines,
    )


MAX_YAML_NODES = 1_000_000  # the shipped taxonomy has some 40,000
MAX_YAML_DEPTH = 32  # a taxonomy file nests 6 deep: areas, an area, crosswalk, a scheme, a label


def _decode(raw: bytes, source: str) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TaxonomyError([f"{source}: the file is UTF-16; save it as UTF-8"])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, byte = raw.count(b"\n", 0, exc.start) + 1, raw[exc.start]
        problem = f"invalid UTF-8 (byte 0x{byte:02X}); save the file as UTF-8"
        raise TaxonomyError([f"{source} line {line}: {problem}"]) from None


def _check_size(node: yaml.Node, source: str) -> None:
    """Refuse a document that its aliases expand beyond MAX_YAML_NODES nodes (a 'billion laughs'),
    that nests deeper than MAX_YAML_DEPTH, or whose anchor refers to itself: sizes are counted
    once per node, so the check costs what the text does, not what it expands to. A document
    without aliases (every node met once) is checked in one quick pass."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(node, 1)]
    while stack:
        current, level = stack.pop()
        if id(current) in seen:
            return _check_expanded_size(node, source)  # an alias: count what it expands to
        seen.add(id(current))
        if level > MAX_YAML_DEPTH:
            line = current.start_mark.line + 1
            raise TaxonomyError(
                [f"{source} line {line}: the YAML nests more than {MAX_YAML_DEPTH} levels deep"]
            )
        if isinstance(current, yaml.MappingNode):
            for pair in current.value:
                stack.append((pair[0], level + 1))
                stack.append((pair[1], level + 1))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend((kid, level + 1) for kid in current.value)
    if len(seen) > MAX_YAML_NODES:
        raise TaxonomyError([f"{source}: more than {MAX_YAML_NODES:,} YAML values"])


def _check_expanded_size(node: yaml.Node, source: str) -> None:
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        key, kids = id(current), _kids(current)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(kid)] for kid in kids)
            depth[key] = 1 + max((depth[id(kid)] for kid in kids), default=0)
            line = current.start_mark.line + 1
            if size[key] > MAX_YAML_NODES:
                raise TaxonomyError(
                    [
                        f"{source} line {line}: YAML aliases expand this to more than "
                        f"{MAX_YAML_NODES:,} values; write the values out instead"
                    ]
                )
            if depth[key] > MAX_YAML_DEPTH:
                raise TaxonomyError(
                    [f"{source} line {line}: the YAML nests more than {MAX_YAML_DEPTH} levels deep"]
                )
            continue
        if key in size:
            continue
        if key in on_path:
            line = current.start_mark.line + 1
            raise TaxonomyError([f"{source} line {line}: a YAML anchor refers to itself"])
        on_path.add(key)
        stack.append((current, True))
        stack.extend((kid, False) for kid in kids)


def _kids(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _line_numbers(node: yaml.Node) -> dict[tuple[Any, ...], int]:
    """Map each path in the document (('areas', 3, 'parent'), ...) to its 1-based line."""
    lines: dict[tuple[Any, ...], int] = {}

    def visit(current: yaml.Node, path: tuple[Any, ...]) -> None:
        lines[path] = current.start_mark.line + 1
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                visit(value, path + (key.value,))
                lines[path + (key.value,)] = (
                    key.start_mark.line + 1
                )  # the key's line, not the value's
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                visit(item, path + (index,))

    visit(node, ())
    return lines


def _line_of(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def _render(
    error: dict[str, Any], source: str, lines: dict[tuple[Any, ...], int], data: dict[str, Any]
) -> str:
    loc = tuple(error["loc"])
    line = _line_of(lines, loc)
    where = f"{source} line {line}" if line else source
    subject = ""
    if len(loc) >= 2 and loc[0] == "areas" and isinstance(loc[1], int):
        areas = data.get("areas") or []
        area_id = (
            areas[loc[1]].get("id")
            if loc[1] < len(areas) and isinstance(areas[loc[1]], dict)
            else None
        )
        subject = f"area {area_id!r}" if area_id else f"area #{loc[1] + 1}"
        rest = ".".join(str(part) for part in loc[2:])
        subject = f"{subject}, field '{rest}'" if rest else subject
    else:
        subject = "field '" + ".".join(str(part) for part in loc) + "'" if loc else "the file"
    kind, message = error["type"], error["msg"]
    if kind == "extra_forbidden":
        allowed = sorted(Area.model_fields if len(loc) == 3 else _File.model_fields)
        guess = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f" (did you mean '{guess[0]}'?)" if guess else f"; allowed: {', '.join(allowed)}"
        return f"{where}: {subject}: unknown field{hint}"
    if kind == "missing":
        return f"{where}: {subject}: required field is missing"
    message = message.removeprefix("Value error, ")
    return f"{where}: {subject}: {message}"


def _cross_check(areas: list[Area], source: str, lines: dict[tuple[Any, ...], int]) -> list[str]:
    problems: list[str] = []
    seen: dict[str, int] = {}
    for index, area in enumerate(areas):
        line = lines.get(("areas", index, "id"), lines.get(("areas", index)))
        if area.id in seen:
            problems.append(
                f"{source} line {line}: area id {area.id!r} is used twice "
                f"(first on line {seen[area.id]}); ids must be unique"
            )
        else:
            seen[area.id] = line or 0
    ids = list(seen)
    for index, area in enumerate(areas):
        if area.parent is not None and area.parent not in seen:
            line = lines.get(("areas", index, "parent"))
            guess = difflib.get_close_matches(area.parent, ids, n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            problems.append(
                f"{source} line {line}: area {area.id!r} names parent {area.parent!r}, "
                f"which does not exist{hint}"
            )
    parents = {area.id: area.parent for area in areas}
    for index, area in enumerate(areas):
        chain, current = [area.id], area.parent
        visited = {area.id}
        while current is not None and current in parents and current not in visited:
            chain.append(current)
            visited.add(current)
            current = parents[current]
        line = lines.get(("areas", index, "parent"))
        if current == area.id:
            problems.append(
                f"{source} line {line}: area {area.id!r} is its own ancestor "
                f"({' -> '.join(chain + [area.id])}); parents must form a tree"
            )
        elif current is None and len(chain) == MAX_AREA_DEPTH + 1:  # the first one too deep
            problems.append(
                f"{source} line {line}: area {area.id!r} lies more than {MAX_AREA_DEPTH} levels "
                "deep; a taxonomy may have at most that many"
            )
    for index, area in enumerate(areas):
        if area.facet and area.parent is not None:
            line = lines.get(("areas", index, "facet"))
            problems.append(
                f"{source} line {line}: area {area.id!r} is marked 'facet' but has a parent; "
                "only a root can be a facet (its sub-areas are the facet's values)"
            )
    known = schemes()
    for index, area in enumerate(areas):
        for scheme, labels in area.crosswalk.items():
            if scheme not in known:
                line = lines.get(("areas", index, "crosswalk", scheme))
                guess = difflib.get_close_matches(scheme, list(known), n=1)
                hint = f" (did you mean {guess[0]!r}?)" if guess else ""
                problems.append(
                    f"{source} line {line}: area {area.id!r}: crosswalk scheme "
                    f"{scheme!r} is not one of {', '.join(known)}{hint}"
                )
                continue
            for k, label in enumerate(labels):
                if label not in known[scheme].labels:
                    line = lines.get(("areas", index, "crosswalk", scheme, k))
                    guess = difflib.get_close_matches(label, known[scheme].labels, n=1, cutoff=0.5)
                    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
                    problems.append(
                        f"{source} line {line}: area {area.id!r}: {label!r} is not one of "
                        f"the {scheme} labels{hint}"
                    )
    return problems
