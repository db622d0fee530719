"""A fitted model: everything tagging learned from judged papers for one taxonomy, in one
directory, and the taxonomies it serves.

A model directory (``tagger fit`` writes one; the packaged taxonomy's ships as
``tagger/data/model``) holds the weigher (tagging.weigher: ``weigher.json``, and the first
stage's, ``weigher-rules.json``), the neighbour indexes (tagging.neighbours: the papers it was
fitted on and the papers they tag, ``neighbours-judged.npz`` and ``neighbours.npz``), the area
model learned from the judged papers (tagging.areas: ``areas.npz``), and ``model.json``: which
taxonomy it was fitted for (its sha256), on which judged papers, and the held-out figures of the
fit. Each file's sha256 is in the record and is checked when the model is loaded.

A model serves the taxonomy it was fitted for, and overlays of it (an overlay's areas keep the
ids the model knows; areas the overlay adds or drops are simply not voted for). With any other
taxonomy, the packaged model's neighbours and area model would vote for areas whose ids merely
collide, so a Tagger uses none of it but the first stage's weigher, which reads rule evidence and
similarities alone, and says so (Tagger.model_note).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..config import EMBEDDING_BACKENDS, TaggerConfig, packaged_fit
from ..errors import TaggerError
from ..io import packaged
from ..taxonomy.model import Taxonomy
from .areas import AreaModel, AreaVotes
from .neighbours import NeighbourIndex, Neighbours, abstract_key, in_space, votes
from .weigher import Weigher

RECORD = "model.json"
FILES = {
    "weigher": "weigher.json",
    "rules": "weigher-rules.json",
    "nb": "neighbours.npz",
    "jn": "neighbours-judged.npz",
    "areas": "areas.npz",
}
SHIPPED = "model"  # tagger/data/model


KNOWN_AS = {
    "fitted": "were judged papers the model was fitted on",
    "indexed": "are in its neighbour index",
}


def said_known(counts: Mapping[str, int]) -> str:
    """'165 were judged papers the model was fitted on and 12 are in its neighbour index': how
    many of the papers measured the model knew, by FittedModel.known's kinds."""
    return " and ".join(f"{n} {KNOWN_AS[kind]}" for kind, n in counts.items())


@dataclass(frozen=True, eq=False)
class FittedModel:
    """A model directory, read lazily: its record now, each part when first asked for."""

    where: Path
    record: dict[str, Any]
    shipped: bool = False
    _parts: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, backend: str = EMBEDDING_BACKENDS[0]
    ) -> FittedModel:
        """The model in the directory ``path``, or the one shipped with tagger for
        ``backend``'s space (config.packaged_fit)."""
        return _load(str(path) if path else "", packaged_fit(SHIPPED, backend))

    @property
    def taxonomy_sha256(self) -> str:
        return str(self.record.get("taxonomy", {}).get("sha256", ""))

    def serves(self, taxonomy: Taxonomy) -> bool:
        """Whether this model was fitted for ``taxonomy``, or for a taxonomy it extends."""
        return self.taxonomy_sha256 in (taxonomy.sha256, *taxonomy.based_on)

    def fitted_on(self, path: str | Path) -> bool:
        """Whether this model was fitted on the judged papers in the file at ``path``."""
        digest = _sha256(Path(path).resolve())
        return digest is not None and digest in self.record.get("fitted_on", {}).get("sha256", [])

    def known(self, abstracts: Iterable[str]) -> list[str]:
        """What this model knows of each abstract (by abstract_key): "fitted" if it is a judged
        paper the model was fitted on, "indexed" if it is a paper of its neighbour index
        (never its own neighbour, but its areas shaped the fit), else "" (a paper no part of
        the model saw). :func:`said_known` says the counts of them."""
        sets = {}
        for kind in ("jn", "nb"):
            path = self.path(kind)
            sets[kind] = set(NeighbourIndex.load(path).keys.tolist()) if path else set()
        return [
            "fitted" if key in sets["jn"] else "indexed" if key in sets["nb"] else ""
            for key in map(abstract_key, abstracts)
        ]

    @property
    def label(self) -> str:
        """The model in a few words, as messages and provenance name it."""
        fitted = self.record.get("fitted_on", {})
        papers = f"{fitted.get('papers', 0):,} judged papers"
        name = "the packaged model" if self.shipped else str(self.where)
        return f"{name} (fitted on {papers}, {self.digest[:12]})"

    @property
    def identity(self) -> str:
        """What a tagged line's provenance names the model by: 'packaged' or 'fitted', and
        16 hex digits of its record's sha256 (the same wherever the directory is)."""
        return f"{'packaged' if self.shipped else 'fitted'} {self.digest[:16]}"

    @cached_property
    def digest(self) -> str:
        """The sha256 of the record, which holds every file's: what names this model."""
        return hashlib.sha256((self.where / RECORD).read_bytes()).hexdigest()

    def path(self, part: str) -> Path | None:
        """The file of ``part`` (a key of FILES), checked against the record; None if this
        model has none."""
        name = FILES[part]
        digest = self.record.get("files", {}).get(name)
        if digest is None:
            return None
        file = self.where / name
        if _sha256(file) != digest:
            raise TaggerError(
                f"{file} is not the file the model's record ({self.where / RECORD}) names: it is "
                f"damaged or was replaced; {self._remedy}"
            )
        return file

    @property
    def _remedy(self) -> str:
        if self.shipped:
            return "reinstall tagger (pip install --force-reinstall tagger)"
        return f"fit it again with tagger fit -o {self.where}"


@cache
def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@cache
def _load(path: str, shipped: str) -> FittedModel:
    where = Path(path) if path else packaged.data_dir(shipped)
    try:
        record = json.loads((where / RECORD).read_text(encoding="utf-8"))
        if not isinstance(record, dict) or not isinstance(record.get("files"), dict):
            raise ValueError(f"{RECORD} does not list the model's files")
    except (OSError, ValueError) as exc:
        what = "the packaged model" if not path else f"the model {path}"
        why = (
            f"{where} is not a directory tagger fit made"
            if not (where / RECORD).exists()
            else str(exc)
        )
        raise TaggerError(f"cannot read {what}: {why}") from None
    return FittedModel(where=where, record=record, shipped=not path)


class Learned:
    """What a Tagger uses of a fitted model for its taxonomy: the weigher, the neighbour indexes
    and the area model when the model serves the taxonomy; else the first stage's weigher alone
    (:meth:`note` says so). With ``votes`` False (reading papers for a fit), neither neighbours
    nor the area model vote."""

    def __init__(
        self,
        model: FittedModel,
        taxonomy: Taxonomy,
        config: TaggerConfig,
        embedder: str,
        *,
        votes: bool = True,
    ) -> None:
        self.model = model
        self.taxonomy = taxonomy
        self.config = config
        self.embedder = (
            embedder  # its name: an index or area model made in another space is not read
        )
        self.voting = votes

    @cached_property
    def serving(self) -> bool:
        """Whether the model was fitted for this taxonomy (or one it extends)."""
        return self.model.serves(self.taxonomy)

    @property
    def identity(self) -> str:
        """The model as a tagged line's provenance names it (FittedModel.identity)."""
        return self.model.identity + ("" if self.serving else " (first stage)")

    def note(self) -> str | None:
        """What a user of another taxonomy than the model's should know, or None."""
        if self.serving:
            return None
        return (
            f"{self.taxonomy.label} has no fitted model: its tags are weighed by rule evidence "
            "and similarity alone (no neighbours, no learned areas); tagger fit fits one to "
            "judged papers"
        )

    @cached_property
    def weigher(self) -> Weigher:
        path = self.model.path("weigher" if self.serving else "rules")
        if path is None:
            raise TaggerError(f"{self.model.label} has no weigher")
        return Weigher.load(path)

    @cached_property
    def neighbour_indexes(self) -> dict[str, tuple[NeighbourIndex, int]]:
        """The papers a paper's neighbours are found among, by kind (tagging.neighbours.KINDS),
        each with how many are read: the papers the model was fitted with (``neighbours``) and
        the judged ones (``judged_neighbours``). A kind read 0 times is left out, and so is
        every kind when the model does not serve this taxonomy (their areas are another
        taxonomy's), or when the index was made in another embedding space."""
        wanted = {"nb": self.config.neighbours, "jn": self.config.judged_neighbours}
        found = {}
        for kind, k in wanted.items():
            path = self.model.path(kind) if k and self.serving and self.voting else None
            if path is not None:
                index = NeighbourIndex.load(path)
                if index.serves(self.embedder):
                    found[kind] = (index, k)
        return found

    @cached_property
    def area_model(self) -> AreaModel | None:
        """The model's area model (tagging.areas), if it has one, it serves this taxonomy, and
        it was fitted in this embedder's space."""
        path = self.model.path("areas") if self.serving and self.voting else None
        if path is None:
            return None
        model = AreaModel.load(path)
        return model if in_space(model.about, self.embedder) else None

    def votes_of(
        self, codes: list[np.ndarray], keys: list[int], texts: list[str]
    ) -> list[Neighbours]:
        """Each paper's neighbours of every kind, and the area model's votes, from its int8
        vector as stored, its abstract_key and its text (language.text.paper_text)."""
        found: list[list] = [[] for _ in codes]
        for kind, (index, k) in self.neighbour_indexes.items():
            for votes_of, nearest in zip(found, index.nearest(codes, keys, k), strict=True):
                votes_of.append(votes(kind, index, nearest, self.taxonomy))
        if self.area_model is not None:
            judged = self.neighbour_indexes.get("jn", (None, 0))[0]
            chances = self.area_model.probabilities(codes, texts)
            for votes_of, probability, code, key in zip(found, chances, codes, keys, strict=True):
                votes_of.append(AreaVotes(probability, self.taxonomy, code, judged, key))
        return [Neighbours(tuple(kinds)) for kinds in found]
