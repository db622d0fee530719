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

import contextlib
import difflib
import hashlib
import json
import os
import re
import typing
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


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str
    areas: list[Area]


class _Rules(BaseModel):
    """Rules an overlay adds to an area of its base, or removes from it."""

    model_config = ConfigDict(extra="forbid")

    aliases: list[str] = Field(default_factory=list)
    cues: list[str] = Field(default_factory=list)
    acronyms: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    requires: list[str] = Field(default_factory=list)

    _check_patterns = field_validator("patterns")(_patterns_compile)
    _check_acronyms = field_validator("acronyms")(_acronyms_are_tokens)
    _check_phrases = field_validator("aliases", "cues", "exclude", "requires")(_phrases_are_short)


class _Set(BaseModel):
    """Fields an overlay gives new values: ``parent`` moves the area (with its sub-areas),
    ``crosswalk`` replaces the labels of each scheme it names (an empty list removes them)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    description: str | None = None
    parent: str | None = None
    crosswalk: dict[str, list[str]] = Field(default_factory=dict)
    fallback: bool | None = None
    facet: bool | None = None


class _Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    add: _Rules = Field(default_factory=_Rules)
    remove: _Rules = Field(default_factory=_Rules)
    set: _Set = Field(default_factory=_Set)


class _Overlay(BaseModel):
    """A taxonomy written as changes to another: see :func:`load_taxonomy`."""

    model_config = ConfigDict(extra="forbid")

    extends: str = Field(min_length=1)
    version: str | None = None
    areas: list[Area] = Field(default_factory=list)
    edit: dict[str, _Edit] = Field(default_factory=dict)
    drop: list[str] = Field(default_factory=list)


# what each rule field holds one of, in messages
_ONE = {
    "aliases": "alias",
    "cues": "cue",
    "acronyms": "acronym",
    "patterns": "pattern",
    "exclude": "exclusion",
    "requires": "requirement",
}
MAX_EXTENDS = 16  # overlays of overlays: a chain this long is a mistake
BUILTIN = "builtin"  # `extends: builtin`: the taxonomy shipped with tagger


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

    def summary(self) -> str:
        """One line: where the taxonomy comes from, its version and its shape."""
        depth = max((depth for depth, _ in self.walk()), default=0) + 1
        based = f" (extends {self.extends})" if self.extends else ""
        return (
            f"{self.source}{based}: version {self.version}, {len(self.areas)} areas, "
            f"{len(self.roots)} roots, {depth} levels"
        )

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


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Read, validate and cross-check a taxonomy file, or an overlay and what it extends.
    Raises ``TaxonomyError`` listing every problem, each with its file and line."""
    return _load(Path(path) if path is not None else default_taxonomy_path(), ())


MAX_TAXONOMY_BYTES = 64 * 2**20  # the shipped taxonomy is under 1 MB


def _load(path: Path, extending: tuple[Path, ...]) -> Taxonomy:
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise TaxonomyError([f"{path}: is not a regular file (a device or a pipe?)"])
        if path.is_file() and path.stat().st_size > MAX_TAXONOMY_BYTES:
            raise TaxonomyError(
                [f"{path}: is larger than {MAX_TAXONOMY_BYTES // 2**20} MB; not a taxonomy"]
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TaxonomyError([f"{path}: no such taxonomy file"]) from None
    except IsADirectoryError:
        raise TaxonomyError([f"{path}: is a directory, not a taxonomy file"]) from None
    except OSError as exc:
        raise TaxonomyError([f"{path}: cannot be read: {exc.strerror}"]) from None
    return _parse(raw, str(path), path.parent, (*extending, path.resolve()))


def parse_taxonomy(raw: bytes | str, *, source: str = "<taxonomy>") -> Taxonomy:
    """Validate a taxonomy given as YAML text; ``source`` names it in messages. An overlay's
    ``extends`` path is read relative to the current directory."""
    return _parse(raw, source, Path.cwd(), ())


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a node of a taxonomy was written."""

    source: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} line {self.line}"


def _parse(raw: bytes | str, source: str, directory: Path, extending: tuple[Path, ...]) -> Taxonomy:
    data, lines = _read_yaml(raw, source)
    if not isinstance(data, dict):
        raise TaxonomyError([f"{source}: expected a mapping with 'version' and 'areas' at the top"])
    if "extends" in data:
        return _overlay(data, lines, source, directory, extending)
    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        raise TaxonomyError(
            [_render(error, source, lines, data) for error in exc.errors()]
        ) from None
    origins = {path: Origin(source, line) for path, line in lines.items()}
    problems = _cross_check(parsed.areas, origins, source)
    if problems:
        raise TaxonomyError(problems)
    return _taxonomy(parsed.version, parsed.areas, source, origins)


def _taxonomy(
    version: str,
    areas: list[Area],
    source: str,
    origins: dict[tuple[Any, ...], Origin],
    extends: str | None = None,
) -> Taxonomy:
    made = Taxonomy(version, tuple(areas), "", source, origins, extends)
    object.__setattr__(made, "sha256", hashlib.sha256(made.canonical()).hexdigest())
    return made


def canonical_json(data: Any) -> bytes:
    """``data`` as one line of JSON, ending in a newline, the same bytes on every machine."""
    import orjson

    return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)


def remember(taxonomy: Taxonomy) -> None:
    """Keep the taxonomy's canonical JSON in the cache directory, under its sha256, once: what
    `tagger retag` compares a later taxonomy with, to find the papers an edit cannot change.
    A cache that cannot be written is ignored."""
    from .embedders import cache_dir

    where = cache_dir()
    path = where / "taxonomies" / f"{taxonomy.sha256}.json" if where else None
    if path is None or path.exists():
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(taxonomy.canonical())
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()


def recall(sha256: str) -> Taxonomy | None:
    """The taxonomy :func:`remember` kept under ``sha256``, if it is there and intact."""
    from .embedders import cache_dir

    where = cache_dir()
    if where is None or not re.fullmatch(r"[0-9a-f]{64}", sha256):
        return None
    try:
        raw = (where / "taxonomies" / f"{sha256}.json").read_bytes()
        if hashlib.sha256(raw).hexdigest() != sha256:
            return None
        data = json.loads(raw)
        areas = [Area.model_validate(area) for area in data["areas"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return _taxonomy(data["version"], areas, f"the taxonomy of sha256 {sha256[:12]}", {})


def _read_yaml(raw: bytes | str, source: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The document and the line of each of its nodes, safely: no objects built, no alias
    bombs, no nesting that would exhaust the stack."""
    text = _decode(raw, source) if isinstance(raw, bytes) else raw
    try:
        # one parse gives both the node tree (for line numbers) and the data; the C loader is
        # the same safe loader, ten times faster, when PyYAML was built with libyaml
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_size(node, source)  # before anything walks the tree its aliases make
                _duplicate_keys(node, source)
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
    return data, (_line_numbers(node) if node is not None else {})


def _overlay(
    data: dict[str, Any],
    lines: dict[tuple[Any, ...], int],
    source: str,
    directory: Path,
    extending: tuple[Path, ...],
) -> Taxonomy:
    """The taxonomy an overlay makes of its base: the base's areas in their order, dropped
    ones (with every area below them) left out, edits applied in place (removals before
    additions, so an alias can be replaced), then the overlay's new areas. Every node keeps
    the file and line it was written on."""
    try:
        parsed = _Overlay.model_validate(data)
    except ValidationError as exc:
        raise TaxonomyError(
            [_render(error, source, lines, data, _Overlay) for error in exc.errors()]
        ) from None

    def here(*path: Any) -> Origin:
        return Origin(source, _line_of(lines, path) or 1)

    base = _base(parsed.extends, here("extends"), directory, extending)
    problems: list[str] = []
    dropped: dict[str, Origin] = {}
    for k, area_id in enumerate(parsed.drop):
        if area_id in base.by_id:
            dropped.update(dict.fromkeys(base.descendants(area_id), here("drop", k)))
        else:
            problems.append(f"{here('drop', k)}: drop: {_no_area(area_id, base)}")
    for area_id in parsed.edit:
        if area_id not in base.by_id:
            problems.append(f"{here('edit', area_id)}: edit: {_no_area(area_id, base)}")
        elif area_id in dropped:
            problems.append(
                f"{here('edit', area_id)}: edit: area {area_id!r} is dropped ({dropped[area_id]}), "
                "with what is below it; move it out first (set: parent) or do not edit it"
            )

    areas: list[Area] = []
    origins: dict[tuple[Any, ...], Origin] = {}
    base_origins = _by_area(base.origins)
    for j, area in enumerate(base.areas):
        if area.id in dropped:
            continue
        fields, sub = area.model_dump(), base_origins.get(j, {})
        if area.id in parsed.edit:
            problems += _edit(parsed.edit[area.id], area.id, fields, sub, here)
        origins.update({("areas", len(areas), *path): found for path, found in sub.items()})
        areas.append(Area.model_validate(fields) if area.id in parsed.edit else area)
    new_lines = _by_area({path: Origin(source, line) for path, line in lines.items()})
    for n, area in enumerate(parsed.areas):
        if area.id in base.by_id and area.id not in dropped:
            problems.append(
                f"{here('areas', n, 'id')}: area id {area.id!r} is already in "
                f"{base.origin(area.id)}: change it under `edit:` (or drop it first to replace it)"
            )
            continue
        sub = new_lines.get(n, {})
        origins.update({("areas", len(areas), *path): found for path, found in sub.items()})
        areas.append(area)
    problems += _cross_check(areas, origins, source, dropped)
    if problems:
        raise TaxonomyError(problems)
    version = f"{base.version}+{parsed.version or Path(source).stem}"
    return _taxonomy(version, areas, source, origins, extends=base.source)


def _base(extends: str, where: Origin, directory: Path, extending: tuple[Path, ...]) -> Taxonomy:
    path = default_taxonomy_path() if extends == BUILTIN else directory / extends
    if path.resolve() in extending:
        chain = " -> ".join(p.name for p in (*extending, path.resolve()))
        raise TaxonomyError([f"{where}: extends {extends!r}, which leads back to itself ({chain})"])
    if len(extending) > MAX_EXTENDS:
        raise TaxonomyError(
            [f"{where}: more than {MAX_EXTENDS} overlays extend one another; merge some of them"]
        )
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise TaxonomyError(
            [f"{where}: extends {extends!r}, and {path} {what} ('builtin' is the shipped taxonomy)"]
        )
    return _load(path, extending)


def _no_area(area_id: str, base: Taxonomy) -> str:
    guess = difflib.get_close_matches(area_id, list(base.by_id), n=1)
    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
    return f"there is no area {area_id!r} in {base.source}{hint}"


def _by_area(origins: dict[tuple[Any, ...], Origin]) -> dict[int, dict[tuple[Any, ...], Origin]]:
    """Origins of ('areas', i, ...) paths grouped by i, each relative to its area."""
    grouped: dict[int, dict[tuple[Any, ...], Origin]] = {}
    for path, found in origins.items():
        if len(path) >= 2 and path[0] == "areas" and isinstance(path[1], int):
            grouped.setdefault(path[1], {})[path[2:]] = found
    return grouped


def _edit(
    edit: _Edit,
    area_id: str,
    fields: dict[str, Any],
    sub: dict[tuple[Any, ...], Origin],
    here: Any,
) -> list[str]:
    """Apply one area's edit to its fields (a model_dump) and their origins; the problems."""
    problems: list[str] = []
    for op in ("remove", "add"):
        for name in _Rules.model_fields:
            current: list[str] = fields[name]
            present = set(current)
            for m, item in enumerate(getattr(getattr(edit, op), name)):
                where, one = here("edit", area_id, op, name, m), _ONE[name]
                if op == "remove" and item not in present:
                    guess = difflib.get_close_matches(item, current, n=1)
                    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
                    problems.append(f"{where}: area {area_id!r} has no {one} {item!r}{hint}")
                elif op == "remove":
                    k = current.index(item)
                    del current[k]
                    present.discard(item)
                    _renumber(sub, name, k)
                elif item in present:
                    first = sub.get((name, current.index(item)))
                    problems.append(
                        f"{where}: area {area_id!r} already has the {one} {item!r}"
                        + (f" ({first})" if first else "")
                    )
                else:
                    current.append(item)
                    present.add(item)
                    sub[(name, len(current) - 1)] = where
    given = edit.set
    for name in [name for name in _Set.model_fields if name in given.model_fields_set]:
        value, where = getattr(given, name), here("edit", area_id, "set", name)
        if name == "crosswalk":
            for scheme, labels in value.items():
                for path in [p for p in sub if p[:2] == ("crosswalk", scheme)]:
                    del sub[path]
                if labels:
                    fields["crosswalk"][scheme] = list(labels)
                    sub[("crosswalk", scheme)] = here("edit", area_id, "set", "crosswalk", scheme)
                    for k in range(len(labels)):
                        sub[("crosswalk", scheme, k)] = here(
                            "edit", area_id, "set", "crosswalk", scheme, k
                        )
                else:
                    fields["crosswalk"].pop(scheme, None)
        elif value is None and name != "parent":  # parent: null makes it a root
            problems.append(f"{where}: area {area_id!r}: {name} cannot be null")
        else:
            fields[name] = value
            sub[(name,)] = where
    return problems


def _renumber(sub: dict[tuple[Any, ...], Origin], name: str, removed: int) -> None:
    """The origins of a list field after its item ``removed`` is taken out."""
    moved = {p: sub.pop(p) for p in [p for p in sub if p[:1] == (name,) and len(p) == 2]}
    for (_, k), found in moved.items():
        if k != removed:
            sub[(name, k - (k > removed))] = found


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


def _duplicate_keys(node: yaml.Node, source: str) -> None:
    """Refuse a mapping that gives a key twice: YAML would keep the last silently (an overlay's
    second edit of an area would replace its first)."""
    problems = []
    stack = [node]
    seen_nodes: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen_nodes:
            continue
        seen_nodes.add(id(current))
        if isinstance(current, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key, _ in current.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue
                line = key.start_mark.line + 1
                if key.value in first:
                    problems.append(
                        f"{source} line {line}: {key.value!r} is given twice in one mapping "
                        f"(first on line {first[key.value]}); YAML would keep only the last"
                    )
                first.setdefault(key.value, line)
        stack.extend(_kids(current))
    if problems:
        raise TaxonomyError(problems)


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
    error: dict[str, Any],
    source: str,
    lines: dict[tuple[Any, ...], int],
    data: dict[str, Any],
    top: type[BaseModel] = _File,
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
    elif len(loc) >= 2 and loc[0] == "edit":
        rest = ".".join(str(part) for part in loc[2:])
        subject = f"edit of area {loc[1]!r}" + (f", field '{rest}'" if rest else "")
    else:
        subject = "field '" + ".".join(str(part) for part in loc) + "'" if loc else "the file"
    kind, message = error["type"], error["msg"]
    if kind == "extra_forbidden":
        allowed = _fields_at(loc[:-1], top)
        guess = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f" (did you mean '{guess[0]}'?)" if guess else f"; allowed: {', '.join(allowed)}"
        return f"{where}: {subject}: unknown field{hint}"
    if kind == "missing":
        return f"{where}: {subject}: required field is missing"
    if kind in ("model_type", "model_attributes_type"):
        allowed = ", ".join(_fields_at(loc, top))
        return f"{where}: {subject}: expected a mapping" + (f" of {allowed}" if allowed else "")
    message = message.removeprefix("Value error, ")
    return f"{where}: {subject}: {message}"


def _fields_at(loc: tuple[Any, ...], top: type[BaseModel]) -> list[str]:
    """The fields the model at ``loc`` inside ``top`` allows (``('areas', 3)``: an Area's)."""
    kind: Any = top
    for part in loc:
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            field = kind.model_fields.get(str(part))
            kind = field.annotation if field is not None else None
        else:  # list[X] (part: an index) or dict[str, X] (part: a key)
            args = typing.get_args(kind)
            kind = args[-1] if args else None
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return sorted(kind.model_fields)
    return []


def _cross_check(
    areas: list[Area],
    origins: dict[tuple[Any, ...], Origin],
    source: str,
    dropped: dict[str, Origin] | None = None,
) -> list[str]:
    """What the areas' fields cannot say alone: unique ids, parents that exist and form a tree,
    facets at roots, crosswalk labels of known schemes. Each problem names the file and line
    of the node it is about (in an overlay or in what it extends)."""

    def at(*path: Any) -> str:
        for end in range(len(path), 0, -1):
            if path[:end] in origins:
                return str(origins[path[:end]])
        return source

    problems: list[str] = []
    seen: dict[str, Origin | None] = {}
    for index, area in enumerate(areas):
        here = origins.get(("areas", index, "id"))
        if area.id in seen:
            first = seen[area.id]
            same = first is not None and here is not None and first.source == here.source
            problems.append(
                f"{at('areas', index, 'id')}: area id {area.id!r} is used twice (first "
                f"{f'on line {first.line}' if same else f'at {first}'}); ids must be unique"
            )
        else:
            seen[area.id] = here
    ids = list(seen)
    for index, area in enumerate(areas):
        if area.parent is not None and area.parent not in seen:
            if dropped and area.parent in dropped:
                problems.append(
                    f"{at('areas', index, 'parent')}: area {area.id!r} names parent "
                    f"{area.parent!r}, which is dropped ({dropped[area.parent]})"
                )
                continue
            others = [other for other in ids if other != area.id]
            guess = difflib.get_close_matches(area.parent, others, n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            problems.append(
                f"{at('areas', index, 'parent')}: area {area.id!r} names parent {area.parent!r}, "
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
        where = at("areas", index, "parent")
        if current == area.id:
            problems.append(
                f"{where}: area {area.id!r} is its own ancestor "
                f"({' -> '.join(chain + [area.id])}); parents must form a tree"
            )
        elif current is None and len(chain) == MAX_AREA_DEPTH + 1:  # the first one too deep
            problems.append(
                f"{where}: area {area.id!r} lies more than {MAX_AREA_DEPTH} levels "
                "deep; a taxonomy may have at most that many"
            )
    for index, area in enumerate(areas):
        if area.facet and area.parent is not None:
            parent = at("areas", index, "parent")
            problems.append(
                f"{at('areas', index, 'facet')}: area {area.id!r} is marked 'facet' but has a "
                "parent; only a root can be a facet (its sub-areas are the facet's values)"
                + (f" (the parent is set at {parent})" if parent != at("areas", index) else "")
            )
    known = schemes()
    for index, area in enumerate(areas):
        for scheme, labels in area.crosswalk.items():
            if scheme not in known:
                guess = difflib.get_close_matches(scheme, list(known), n=1)
                hint = f" (did you mean {guess[0]!r}?)" if guess else ""
                problems.append(
                    f"{at('areas', index, 'crosswalk', scheme)}: area {area.id!r}: crosswalk "
                    f"scheme {scheme!r} is not one of {', '.join(known)}{hint}"
                )
                continue
            for k, label in enumerate(labels):
                if label not in known[scheme].labels:
                    guess = difflib.get_close_matches(label, known[scheme].labels, n=1, cutoff=0.5)
                    hint = f" (did you mean {guess[0]!r}?)" if guess else ""
                    problems.append(
                        f"{at('areas', index, 'crosswalk', scheme, k)}: area {area.id!r}: "
                        f"{label!r} is not one of the {scheme} labels{hint}"
                    )
    return problems
