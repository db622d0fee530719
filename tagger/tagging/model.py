"""A fitted model: everything tagging learned from judged papers for one taxonomy, in one
directory, the taxonomies it serves and the settings it serves them with.

A model directory (``tagger fit`` writes one; the packaged taxonomy's ships as
``tagger/data/model``) holds the weigher (tagging.weigher: ``weigher.json``, and the first
stage's, ``weigher-rules.json``), the neighbour indexes (tagging.neighbours: the papers it was
fitted with and the papers they tag, ``neighbours.npz``, and the judged ones,
``neighbours-judged.npz``), the area model learned from the judged papers (tagging.areas:
``areas.npz``), and ``model.json``: which taxonomy it was fitted for (its sha256), on which judged
papers, the held-out figures of the fit, the settings and constants the features it was fitted
on were made with, the embedding space it was fitted in, and each file's sha256. The record is
checked when the model is loaded (:class:`ModelRecord`: its fields' types, its files present, the
version of tagger that wrote it), and the whole directory once, when a tagger first uses it
(:meth:`FittedModel.check_whole`, from :meth:`Learned.check`): every part against its sha256 and
its shapes, and, for a model given by name, its space against the embedder's. What is not as it
must be is refused in one line, "cannot use the model DIR: ...", with the fix.

A model serves the taxonomy it was fitted for, and overlays of it (an overlay's areas keep the
ids the model knows; areas the overlay adds or drops are simply not voted for). With any other
taxonomy, the packaged model's neighbours and area model would vote for areas whose ids merely
collide, so a Tagger uses none of it but the first stage's weigher, which reads rule evidence and
similarities alone, and says so (:meth:`Learned.note`). Either way its scores are probabilities
only for features made as they were when it was fitted: a Tagger whose settings would make them
otherwise is refused (:meth:`Learned.check`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from ..config import (
    EMBEDDING_BACKENDS,
    EMBEDDING_MODEL_ID,
    FAST_BACKEND,
    TaggerConfig,
    packaged_fit,
    tagger_version,
)
from ..errors import TaggerError
from ..io import packaged
from ..io.files import left_aside, regular_sha256
from ..taxonomy.model import Taxonomy
from . import areas, neighbours
from .areas import AreaModel
from .neighbours import NeighbourIndex, abstract_key, in_space, space_of
from .reading import Reading
from .votes import Votes, votes_of
from .weigher import Weigher, Weighing

RECORD = "model.json"
FORMAT = 2  # the layout of the model directories this version writes and reads (see FORMER)
FILES = {
    "weigher": "weigher.json",
    "rules": "weigher-rules.json",
    "corpus": "neighbours.npz",
    "judged": "neighbours-judged.npz",
    "areas": "areas.npz",
}
PARTS = {
    "weigher": Weigher,
    "rules": Weigher,
    "corpus": NeighbourIndex,
    "judged": NeighbourIndex,
    "areas": AreaModel,
}
SHIPPED = "model"  # tagger/data/model


def feature_constants() -> dict[str, float]:
    """The constants of this version that shape the votes a weigher reads: when a neighbour
    proposes an area and agrees with one, when an index paper is a copy of the paper, when the
    area model proposes an area. A model records them, and is refused by a version that makes
    its features with others."""
    return {
        "neighbour_propose": neighbours.PROPOSE,
        "neighbour_agree": neighbours.AGREE,
        "neighbour_same": neighbours.SAME,
        "area_propose": areas.PROPOSE,
    }


# What a model directory of format 1 (tagger 0.7, which recorded no feature settings) was fitted
# with: tagger fit read papers with the default settings, and its neighbour features were named
# nb_* and jn_* (tagging.weigher reads them by their present names).
FORMER = {
    1: {
        "settings": {
            "top_n": 10,
            "diversity": 0.2,
            "max_words": 3,
            "keyphrase_model": "",
            "max_candidates": 20,
            "doc_words": 96,
            "alias_weight": 1.0,
            "acronym_weight": 1.0,
            "pattern_weight": 1.0,
            "keyphrase_weight": 0.8,
            "cue_weight": 0.35,
            "title_factor": 2.0,
            "first_sentence_factor": 1.5,
            "related_work_factor": 0.6,
            "keyphrase_bonus": 0.5,
            "child_decay": 0.7,
            "neighbours": 20,
            "judged_neighbours": 10,
        },
        "constants": {
            "neighbour_propose": 0.7,
            "neighbour_agree": 0.7,
            "neighbour_same": 0.985,
            "area_propose": 0.35,
        },
    }
}


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
    """A model directory, read lazily: its record now, each part when asked for (kept by its
    bytes' sha256: a model refitted into the same directory is read anew)."""

    where: Path
    record: dict[str, Any]
    digest: str  # the sha256 of the record, which holds every file's: what names this model
    shipped: bool = False

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, backend: str = EMBEDDING_BACKENDS[0]
    ) -> FittedModel:
        """The model in the directory ``path``, or the one shipped with tagger for
        ``backend``'s space (config.packaged_fit), its record checked: its fields of the types
        they must have, every file it lists present and a part of a model, written by this
        version of tagger or an older one. A TaggerError says which and what to do; the parts
        themselves are checked by :meth:`check_whole`."""
        where = Path(path) if path else packaged.data_dir(packaged_fit(SHIPPED, backend))
        refused = f"cannot use the model {path}" if path else "cannot use the packaged model"
        remedy = _remedy(where, shipped=not path)
        try:
            data = (where / RECORD).read_bytes()
        except OSError as exc:
            aside = left_aside(where)
            if aside is not None and (aside / RECORD).is_file():
                raise TaggerError(
                    f"{refused}: it is missing, and {aside} beside it holds the model a killed "
                    f"tagger fit was replacing: put it back (mv {aside} {where}), or fit again"
                ) from None
            why = (
                "it is not a directory tagger fit made (it has no model.json)"
                if not (where / RECORD).exists()
                else str(exc)
            )
            raise TaggerError(f"{refused}: {why}") from None
        try:
            record = _parse_record(data)
        except ValidationError as exc:  # a ValueError: first
            raise TaggerError(f"{refused}: {RECORD}: {_said(exc)}: {remedy}") from None
        except ValueError as exc:
            raise TaggerError(f"{refused}: {exc}") from None
        problem = _unlisted(where, record)
        if problem:
            raise TaggerError(f"{refused}: {problem}: {remedy}")
        problem = _newer(record)
        if problem:
            raise TaggerError(f"{refused}: {problem}")
        return cls(where, record, hashlib.sha256(data).hexdigest(), shipped=not path)

    def check_whole(self) -> dict[str, Any]:
        """Every part read and checked: its bytes against the record's sha256, its arrays'
        shapes (each part's reader), and the dimensions of the vectors the neighbour indexes
        hold and the area model reads, which must agree. A TaggerError names the first that is
        not as it must be. The parts, by key of FILES. What a tagger calls once, when it first
        uses the model (Learned.check), where :meth:`load` checks the record alone."""
        parts = {
            part: self.part(part) for part, name in FILES.items() if name in self.record["files"]
        }
        widths = [(FILES[part], parts[part].width) for part in VECTOR_PARTS[::-1] if part in parts]
        for name, width in widths[1:]:
            first, wanted = widths[0]
            if width != wanted:
                verb = "reads" if first == FILES["areas"] else "holds"
                raise TaggerError(
                    f"{self._refused}: its {first} {verb} vectors of {wanted} dimensions, and "
                    f"its {name} holds vectors of {width}: {self._remedy}"
                )
        return parts

    def spaces(self, parts: Mapping[str, Any]) -> dict[str, str]:
        """The embedding spaces the model says it was fitted in, by where it says so: its
        record's ``space``, and the ``about`` of each of ``parts`` (from :meth:`check_whole`)
        made of paper vectors."""
        said = {RECORD: self.record["space"]} if self.record.get("space") else {}
        for part in VECTOR_PARTS:
            about = parts[part].about if part in parts else {}
            if about.get("space") or about.get("model"):
                said[FILES[part]] = str(about.get("space") or about.get("model"))
        return said

    @property
    def taxonomy_sha256(self) -> str:
        return str(self.record.get("taxonomy", {}).get("sha256", ""))

    @property
    def features(self) -> dict[str, dict[str, Any]]:
        """The settings (config.TaggerConfig.shaping) and constants (:func:`feature_constants`)
        the features this model was fitted on were made with."""
        if "features" in self.record:
            return self.record["features"]
        if self.record.get("format", 1) not in FORMER:
            raise TaggerError(
                f"{self.where / RECORD} records no settings its features were made with: "
                f"{self._remedy}"
            )
        former = FORMER[self.record.get("format", 1)]
        fit = self.record.get("settings", {})  # a fit of format 1 recorded its neighbours here
        kept = {name: fit[name] for name in ("neighbours", "judged_neighbours") if name in fit}
        return former | {"settings": former["settings"] | kept}

    @cached_property
    def area_ids(self) -> frozenset[str] | None:
        """The ids of the areas of the taxonomy this model was fitted for: as its record lists
        them, or (a model fitted before 0.11.0, which counted them) as that taxonomy has them if
        it is the packaged one or one kept in the cache; None if neither."""
        ids = self.record.get("taxonomy", {}).get("ids")
        if ids is not None:
            return frozenset(ids)
        from ..taxonomy.store import tagged_with

        fitted_for = tagged_with(self.taxonomy_sha256)
        return None if fitted_for is None else frozenset(a.id for a in fitted_for.areas)

    def serves(self, taxonomy: Taxonomy) -> bool:
        """Whether this model was fitted for ``taxonomy``, or for a taxonomy it extends."""
        return self.taxonomy_sha256 in (taxonomy.sha256, *taxonomy.based_on)

    def fitted_on(self, path: str | Path) -> bool:
        """Whether this model was fitted on the judged papers in the file at ``path``."""
        try:
            data = Path(path).resolve().read_bytes()
        except OSError:
            return False
        digest = hashlib.sha256(data).hexdigest()
        return digest in self.record.get("fitted_on", {}).get("sha256", [])

    def known(self, abstracts: Iterable[str]) -> list[str]:
        """What this model knows of each abstract (by abstract_key): "fitted" if it is a judged
        paper the model was fitted on, "indexed" if it is a paper of its neighbour index
        (never its own neighbour, but its areas shaped the fit), else "" (a paper no part of
        the model saw). :func:`said_known` says the counts of them."""
        sets = {}
        for kind in ("judged", "corpus"):
            index = self.part(kind)
            sets[kind] = set(index.keys.tolist()) if index is not None else set()
        return [
            "fitted" if key in sets["judged"] else "indexed" if key in sets["corpus"] else ""
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

    def part(self, part: str) -> Any:
        """The part ``part`` (a key of FILES) read, its file checked against the record; None if
        this model has none."""
        name = FILES[part]
        digest = self.record.get("files", {}).get(name)
        if digest is None:
            return None
        file = self.where / name
        try:  # its digest read in blocks first: a file that is not the part (2 GB of it, a
            found = regular_sha256(file)  # FIFO) is refused without being held in memory
            data = file.read_bytes() if found == digest else b""
        except OSError:
            found, data = None, b""
        if found != digest or hashlib.sha256(data).hexdigest() != digest:
            raise TaggerError(
                f"{self._refused}: its {name} is not the file its record ({RECORD}) names (its "
                f"sha256 differs): it is damaged or was replaced; {self._remedy}"
            )
        try:
            return PARTS[part].from_bytes(data, digest, file)
        except TaggerError as exc:  # "cannot read the area model DIR/areas.npz: ..."
            raise TaggerError(f"{self._refused}: {exc}; {self._remedy}") from None

    @property
    def _remedy(self) -> str:
        return _remedy(self.where, shipped=self.shipped)

    @property
    def _refused(self) -> str:
        return (
            "cannot use the packaged model"
            if self.shipped
            else f"cannot use the model {self.where}"
        )


def _fitted_with(space: str) -> tuple[str, str]:
    """How a model of ``space`` was fitted, in words, and what to tag it with."""
    if space == space_of(f"{EMBEDDING_MODEL_ID} ({FAST_BACKEND})"):
        return f"with the {FAST_BACKEND} backend", f"tag with --embedding-backend {FAST_BACKEND}"
    if space == EMBEDDING_MODEL_ID:
        others = ", ".join(b for b in EMBEDDING_BACKENDS if b != FAST_BACKEND)
        return (
            f"with the default backend ({others})",
            f"tag with --embedding-backend {EMBEDDING_BACKENDS[0]}",
        )
    return "with another embedder", "tag with that embedder"


def _remedy(where: Path, *, shipped: bool) -> str:
    if shipped:
        return "reinstall tagger (pip install --force-reinstall tagger)"
    return f"fit it again with tagger fit -o {where}"


VECTOR_PARTS = ("corpus", "judged", "areas")  # the parts made of, or reading, paper vectors
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class _Record(BaseModel):
    """A part of a model's record: the fields tagger reads, of the types it reads them as;
    any others are kept (a later version may add some)."""

    model_config = ConfigDict(extra="allow", strict=True)


class TaxonomyRecord(_Record):
    sha256: str
    version: str | None = None
    source: str | None = None
    areas: int | None = None
    ids: list[str] | None = None


class FittedOnRecord(_Record):
    papers: int = 0
    sha256: list[str] = Field(default_factory=list)


class FeaturesRecord(_Record):
    settings: dict[str, Any]
    constants: dict[str, float]


class ModelRecord(_Record):
    """A model directory's ``model.json`` (what fitting.modeldir writes), as tagger reads it. A
    field a record may lack has a default, but none may be null."""

    format: int | None = None  # absent: format 1 (FORMER), as _parse_record reads it
    taxonomy: TaxonomyRecord
    files: dict[str, Sha256]
    fitted_on: FittedOnRecord = Field(default_factory=FittedOnRecord)
    tagger_version: str = ""
    space: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    held_out: dict[str, Any] = Field(default_factory=dict)
    features: FeaturesRecord = Field(default=None)  # type: ignore[assignment]  # absent, not null


def _parse_record(data: bytes) -> dict[str, Any]:
    """A model directory's record, checked (:class:`ModelRecord`); ValueError if it is none
    this version reads, pydantic's ValidationError if a field is not as it must be."""
    try:
        record = json.loads(data.decode("utf-8"))
    except ValueError as exc:
        raise ValueError(f"{RECORD} is not JSON ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(record, dict) or not isinstance(record.get("files"), dict):
        raise ValueError(f"{RECORD} does not list the model's files")
    written = record.get("format", 1)
    if written not in (FORMAT, *FORMER):
        raise ValueError(
            f"it is a model directory of format {written!r}, and this version of tagger reads "
            f"formats {', '.join(map(str, [*FORMER, FORMAT]))}: fit it again, or use the tagger "
            "that wrote it"
        )
    ModelRecord.model_validate(record)
    return record


def _said(error: ValidationError) -> str:
    """The first fault of a record, in one line: "'taxonomy.sha256' must be a string, not a
    number"."""
    first = error.errors()[0]
    where = ".".join(str(step) for step in first["loc"])
    if first["type"] == "missing":
        return f"'{where}' is missing"
    wanted = _WANTED.get(first["type"])
    if wanted is None:
        return f"'{where}': {first['msg']} (it is {_json_type(first['input'])})"
    return f"'{where}' must be {wanted}, not {_json_type(first['input'])}"


_WANTED = {  # pydantic's error types, as the JSON a record holds must be
    "model_type": "an object",
    "dict_type": "an object",
    "list_type": "a list",
    "string_type": "a string",
    "int_type": "a whole number",
    "float_type": "a number",
    "string_pattern_mismatch": "a sha256 (64 hex digits)",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    names = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _unlisted(where: Path, record: Mapping[str, Any]) -> str | None:
    """What of the files a record lists is missing or no part of a model, or None."""
    for name in record["files"]:
        if name not in FILES.values():
            return f"its record lists {name!r}, which is no part of a model"
        if not (where / name).is_file():
            return f"{name}, which it lists, is missing"
    return None


def _newer(record: Mapping[str, Any]) -> str | None:
    """Why a model written by a newer version of tagger than this one (by major and minor
    version: a patch release writes the models its minor version reads) is refused, or None.
    Versions are compared as numbers; tagger depends on no version parser, and its versions
    are plain (0.11.0)."""
    written, this = record.get("tagger_version") or "", tagger_version()
    if _minor(written) is None or _minor(this) is None or _minor(written) <= _minor(this):
        return None
    return (
        f"it was written by tagger {written}, newer than this one ({this}): upgrade tagger "
        "(pip install -U tagger) or fit it again"
    )


def _minor(version: str) -> tuple[int, int] | None:
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) if found else None


class Learned:
    """What a Tagger uses of a fitted model for its taxonomy: the weigher, the neighbour indexes
    and the area model when the model serves the taxonomy; else the first stage's weigher alone
    (:meth:`note` says so)."""

    def __init__(
        self, model: FittedModel, taxonomy: Taxonomy, config: TaggerConfig, embedder: str
    ) -> None:
        self.model = model
        self.taxonomy = taxonomy
        self.config = config
        self.embedder = embedder  # its name: an index or area model of another space is not read

    @cached_property
    def serving(self) -> bool:
        """Whether the model was fitted for this taxonomy (or one it extends)."""
        return self.model.serves(self.taxonomy)

    @property
    def identity(self) -> str:
        """The model as a tagged line's provenance names it (FittedModel.identity)."""
        return self.model.identity + ("" if self.serving else " (first stage)")

    @cached_property
    def new_areas(self) -> frozenset[str]:
        """The areas of the taxonomy the model serves that it was not fitted for (an overlay's
        new areas): the first stage weighs them (weigher.Weighing). Empty if the model does not
        serve the taxonomy (the first stage weighs every area) or does not say which areas it
        was fitted for."""
        fitted = self.model.area_ids if self.serving else None
        if fitted is None:
            return frozenset()
        return frozenset(area.id for area in self.taxonomy.areas) - fitted

    def note(self) -> str | None:
        """What a user of another taxonomy than the model's, or of an overlay that adds areas,
        should know, or None."""
        if self.serving and self.new_areas:
            new = sorted(self.new_areas)
            named = ", ".join(new[:5]) + (f" and {len(new) - 5} more" if len(new) > 5 else "")
            model = "the packaged model" if self.model.shipped else f"the model {self.model.where}"
            return (
                f"{named}: {len(new)} area{'s' * (len(new) != 1)} {model} was not fitted for, "
                "weighed by rule evidence and similarity alone; tagger fit --taxonomy "
                f"{self.taxonomy.source or 'TAXONOMY'} fits a model that knows them"
            )
        if self.serving:
            return None
        return (
            f"{self.taxonomy.label} has no fitted model: its tags are weighed by rule evidence "
            "and similarity alone (no neighbours, no learned areas); tagger fit fits one to "
            "judged papers"
        )

    def check(self) -> None:
        """Refuse settings that would make features other than the model's weigher was fitted
        on (its scores would no longer be probabilities): a TaggerError naming the first."""
        recorded = self.model.features
        shaping = ("evidence", "votes") if self.serving else ("evidence",)
        for name, value in self.config.shaping(*shaping).items():
            fitted = recorded["settings"].get(name)
            if value != fitted:
                option = name.replace("_", "-")
                raise TaggerError(
                    f"{self.model.label} was fitted with {name}={fitted!r}, and its scores are "
                    f"probabilities only for features made so; tag with {name}={fitted!r}, or "
                    f"fit a model with {name}={value!r} (tagger fit --{option} {value})"
                )
        parts = self.parts
        if not self.serving:
            return
        for name, value in feature_constants().items():
            fitted = recorded["constants"].get(name)
            if value != fitted:
                raise TaggerError(
                    f"{self.model.label} was fitted with {name} {fitted!r}, and this version of "
                    f"tagger makes its features with {value!r}: {self.model._remedy}"
                )
        self._check_space(parts)

    def _check_space(self, parts: Mapping[str, Any]) -> None:
        """Refuse a model given by name that was fitted in another embedding space than the
        embedder's: its neighbours and area model would not vote (their vectors do not compare
        with the papers'), and its weigher's scores, fitted on their votes, would be no
        probabilities. The packaged model is the one of the backend's space; with an embedder
        of one's own, its first stage and weigher are used without those votes, as ever."""
        if self.model.shipped:
            return
        mine = space_of(self.embedder)
        for space in self.model.spaces(parts).values():
            if space == mine:
                continue
            how, fix = _fitted_with(space)
            raise TaggerError(
                f"{self.model._refused}: it was fitted {how} (space '{space}'), and this tagger "
                f"embeds in the space '{mine}': {fix}, or fit a model with this one (tagger "
                "fit -o DIR)"
            )

    def _check_width(self, width: int) -> None:
        """Refuse parts that read vectors of another width than the papers' (``width``): what
        numpy would fail on, or worse, in the middle of tagging."""
        used = [(FILES[kind], index) for kind, (index, _) in self.neighbour_indexes.items()]
        if self.area_model is not None:
            used.append((FILES["areas"], self.area_model))
        for name, part in used:
            if part.width != width:
                raise TaggerError(
                    f"{self.model._refused}: its {name} reads vectors of {part.width} "
                    f"dimensions, and the embedder in use ({self.embedder}) makes {width}: "
                    f"{self.model._remedy}"
                )

    @cached_property
    def parts(self) -> dict[str, Any]:
        """Every part of the model, read and checked whole once (FittedModel.check_whole), by
        key of FILES: what :meth:`check` checks and the tagger then uses, read no second time."""
        return self.model.check_whole()

    @cached_property
    def weigher(self) -> Weigher | Weighing:
        """The fitted weigher; the first stage's for areas the model was not fitted for
        (:attr:`new_areas`), and for every area of a taxonomy it does not serve."""
        parts = (
            ("weigher", "rules") if self.new_areas else ("weigher" if self.serving else "rules",)
        )
        weighers = [self.parts.get(part) for part in parts]
        if any(weigher is None for weigher in weighers):
            raise TaggerError(f"{self.model.label} has no weigher")
        return Weighing(*weighers, self.new_areas) if self.new_areas else weighers[0]

    @cached_property
    def neighbour_indexes(self) -> dict[str, tuple[NeighbourIndex, int]]:
        """The papers a paper's neighbours are found among, by kind (tagging.neighbours.KINDS),
        each with how many are read: the papers the model was fitted with (``neighbours``) and
        the judged ones (``judged_neighbours``). A kind read 0 times is left out, and so is
        every kind when the model does not serve this taxonomy (their areas are another
        taxonomy's), or when the index was made in another embedding space."""
        wanted = {"corpus": self.config.neighbours, "judged": self.config.judged_neighbours}
        found = {}
        for kind, k in wanted.items():
            index = self.parts.get(kind) if k and self.serving else None
            if index is not None and index.serves(self.embedder):
                found[kind] = (index, k)
        return found

    @cached_property
    def area_model(self) -> AreaModel | None:
        """The model's area model (tagging.areas), if it has one, it serves this taxonomy, and
        it was fitted in this embedder's space."""
        model = self.parts.get("areas") if self.serving else None
        if model is None:
            return None
        return model if in_space(model.about, self.embedder) else None

    def votes(self, readings: Sequence[Reading]) -> list[Votes]:
        """Each read paper's votes: its neighbours of every kind, and the area model's
        (tagging.votes.votes_of)."""
        codes = [reading.code for reading in readings]
        if codes:
            self._check_width(len(codes[0]))
        chances = None
        if self.area_model is not None:
            chances = self.area_model.probabilities(codes, [r.text for r in readings])
        keys = [reading.key for reading in readings]
        return votes_of(codes, keys, self.neighbour_indexes, chances, self.taxonomy)
