"""What is wrong with a taxonomy, one line per problem, each naming its file and line: schema
errors rendered from pydantic's, and the checks that need the whole taxonomy (unique ids, a
tree of parents, facets at roots, known crosswalk labels)."""

from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel

from .model import MAX_AREA_DEPTH, Area, Origin
from .schemes import schemes
from .yamlfile import line_of


def render_error(
    error: dict[str, Any],
    source: str,
    lines: dict[tuple[Any, ...], int],
    data: dict[str, Any],
    top: type[BaseModel],
) -> str:
    loc = tuple(error["loc"])
    line = line_of(lines, loc)
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


def cross_check(
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
