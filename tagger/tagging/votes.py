"""What a paper's neighbours and the area model say of its candidate areas, assembled in one place.

A paper's votes are those of its nearest papers of each kind in a model's indexes
(tagging.neighbours: the corpus a model was fitted with, and the judged papers) and the area
model's probabilities (tagging.areas). Tagging gets the probabilities from the fitted area model;
a fit (tagger.fitting), for a judged paper, from a model that never saw the paper. Both assemble
them here, with :func:`votes_of`, so a fit measures the votes tagging reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..records import Neighbour
from ..taxonomy.model import Taxonomy
from .areas import AREA_MODEL_FEATURES, AreaVotes
from .neighbours import NEIGHBOUR_FEATURES, NeighbourIndex, NeighbourVotes, neighbour_votes

# Every feature of a candidate its votes make (weigher.WEIGHER_FEATURES has them too)
VOTE_FEATURES = NEIGHBOUR_FEATURES + AREA_MODEL_FEATURES
SHOWN = 3  # neighbours named by a tag


@dataclass(frozen=True)
class Votes:
    """A paper's votes: its neighbours of every kind, and the area model's when there is one.
    Each proposes areas, describes each candidate and names what supports it."""

    kinds: tuple[NeighbourVotes | AreaVotes, ...] = ()

    def proposed(self) -> set[str]:
        return set().union(*(kind.proposed() for kind in self.kinds))

    def learned(self) -> Votes:
        """The area model's votes alone: what a facet's values (the contribution types) read."""
        return Votes(tuple(kind for kind in self.kinds if isinstance(kind, AreaVotes)))

    def features(self, area: str) -> dict[str, float]:
        """Every feature of one area its votes make (VOTE_FEATURES), zero for a kind not
        read."""
        found = dict.fromkeys(VOTE_FEATURES, 0.0)
        for kind in self.kinds:
            found.update(kind.features(area))
        return found

    def supporting(self, area: str) -> list[Neighbour]:
        """The nearest neighbours, of any kind, that agree with ``area``, at most SHOWN, each
        paper once."""
        found: dict[str, Neighbour] = {}
        for neighbour in sorted(
            (n for kind in self.kinds for n in kind.supporting(area)),
            key=lambda n: (-n.similarity, n.id),
        ):
            found.setdefault(neighbour.id, neighbour)
        return list(found.values())[:SHOWN]


NO_VOTES = Votes()


def votes_of(
    codes: Sequence[np.ndarray],
    keys: Sequence[int],
    indexes: Mapping[str, tuple[NeighbourIndex, int]],
    chances: Sequence[Mapping[str, float]] | None,
    taxonomy: Taxonomy,
) -> list[Votes]:
    """Each paper's votes, from its int8 vector as stored and its abstract_key: its neighbours
    in ``indexes`` (kind -> index and how many neighbours are read), and the area model's
    probabilities (``chances``, one mapping a paper; None without an area model). A tag the area
    model supports names the judged papers nearest the paper in its area (the "judged" index)."""
    codes, keys = list(codes), list(keys)
    found: list[list[NeighbourVotes | AreaVotes]] = [[] for _ in codes]
    for kind, (index, k) in indexes.items():
        for kinds, nearest in zip(found, index.nearest(codes, keys, k), strict=True):
            kinds.append(neighbour_votes(kind, index, nearest, taxonomy))
    if chances is not None:
        judged = indexes["judged"][0] if "judged" in indexes else None
        for kinds, probability, code, key in zip(found, chances, codes, keys, strict=True):
            kinds.append(AreaVotes(dict(probability), taxonomy, code, judged, key))
    return [Votes(tuple(kinds)) for kinds in found]
