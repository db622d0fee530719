"""Conference label schemes: the official area names a taxonomy's crosswalks map onto.

They are read from ``data/schemes.json`` and nowhere else: the taxonomy checks crosswalk labels
against them, ``tagger eval`` takes its ``--scheme`` choices and levels from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..io.packaged import read_json

SUBTOPIC = "->"  # 'Deep Learning->Graph Neural Networks': an area and one of its subtopics


@dataclass(frozen=True)
class Scheme:
    """One conference's label set."""

    id: str
    name: str
    levels: tuple[str, ...]  # ("label",), or ("area", "subtopic") for 'Area->Subtopic' labels
    labels: tuple[str, ...]


@cache
def schemes() -> dict[str, Scheme]:
    """Every scheme, by id, in file order."""
    data = read_json(None, "schemes.json")
    return {
        key: Scheme(
            id=key, name=value["name"], levels=tuple(value["levels"]), labels=tuple(value["labels"])
        )
        for key, value in data["schemes"].items()
    }
