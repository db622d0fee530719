"""Overlays: a taxonomy written as changes to another (``extends:``), applied to what it extends.

An overlay adds areas, edits areas of its base (rules added or removed, fields set anew) and
drops areas with everything below them; every node of the result keeps the file and line it was
written on, in the overlay or in its base.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .model import (
    Area,
    Origin,
    Taxonomy,
    _acronyms_are_tokens,
    _patterns_compile,
    _phrases_are_short,
)
from .yamlfile import line_of


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


class Overlay(BaseModel):
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


def apply_overlay(
    parsed: Overlay, base: Taxonomy, source: str, lines: dict[tuple[Any, ...], int]
) -> tuple[list[Area], dict[tuple[Any, ...], Origin], dict[str, Origin], list[str]]:
    """The areas an overlay makes of its base, with their origins, the areas it drops (each with
    where it is dropped) and the problems found: the base's areas in their order, dropped ones
    (with every area below them) left out, edits applied in place (removals before additions, so
    an alias can be replaced), then the overlay's new areas. Every node keeps the file and line
    it was written on."""

    def here(*path: Any) -> Origin:
        return Origin(source, line_of(lines, path) or 1)

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
    return areas, origins, dropped, problems


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
