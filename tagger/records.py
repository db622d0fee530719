"""The records tagger reads and writes: pydantic v2 models.

``Paper`` is one input record; ``TaggedPaper`` is one output line.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Field names users' files commonly have, mapped to ours. The first name present wins.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "paper_id", "forum", "paperId", "uid"),
    "abstract": ("abstract", "summary", "Abstract", "abstractText"),
    "title": ("title", "Title", "paper_title"),
    "venue": ("venue", "conference", "Venue"),
    "year": ("year", "Year"),
    "keywords": ("keywords", "author_keywords", "Keywords"),
}


MAX_ABSTRACT_CHARS = 200_000  # real abstracts are a few thousand characters; spaCy stops at 1M
MAX_TITLE_CHARS = 2_000  # real titles are under 300
MAX_ID_CHARS = 1_000
FIRST_YEAR, LAST_YEAR = 1900, 2100  # a year given for the papers that lack one (tag --year)
MAX_DEPTH = 64  # of a field's nested lists and objects: what the JSON readers and writers all take
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def stable_id(venue: str | None, abstract: str) -> str:
    """A short id that depends only on the venue and the abstract text, so re-runs agree."""
    digest = hashlib.sha256(f"{venue or ''}\x1f{abstract}".encode()).hexdigest()
    return f"p-{digest[:16]}"


class Paper(BaseModel):
    """One input paper. Fields we do not know are kept and written back out unchanged."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=False)

    id: str = ""
    title: str | None = None
    abstract: str
    venue: str | None = None
    year: int | None = None
    keywords: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_common_field_names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for ours, theirs in FIELD_ALIASES.items():
            if data.get(ours) not in (None, ""):
                continue
            for name in theirs[1:]:
                if data.get(name) not in (None, ""):
                    data[ours] = data.pop(name)
                    break
        if data.get("id") is None:
            data.pop("id", None)  # no id (or "id": null): a stable one is made below
        elif not isinstance(data["id"], str):
            data["id"] = str(data["id"])
        if isinstance(data.get("keywords"), str):
            data["keywords"] = [
                k.strip() for k in data["keywords"].replace(";", ",").split(",") if k.strip()
            ]
        if data.get("year") in ("", None):
            data["year"] = None
        return data

    @field_validator("abstract")
    @classmethod
    def _abstract_has_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the abstract is empty")
        if len(value) > MAX_ABSTRACT_CHARS:
            raise ValueError(
                f"the abstract is {len(value):,} characters long; tagger reads "
                f"abstracts of up to {MAX_ABSTRACT_CHARS:,} (is this a whole paper?)"
            )
        return value

    @field_validator("title")
    @classmethod
    def _title_fits(cls, value: str | None) -> str | None:
        if value is not None and len(value) > MAX_TITLE_CHARS:
            raise ValueError(
                f"the title is {len(value):,} characters long; tagger reads titles of up to "
                f"{MAX_TITLE_CHARS:,}"
            )
        return value

    @field_validator("id")
    @classmethod
    def _id_is_one_line(cls, value: str) -> str:
        if len(value) > MAX_ID_CHARS:
            raise ValueError(
                f"the id is {len(value):,} characters long; ids may have up to {MAX_ID_CHARS:,}"
            )
        if CONTROL.search(value):
            raise ValueError(f"the id {value!r} holds a line break or another control character")
        return value

    @model_validator(mode="after")
    def _fill_id(self) -> Paper:
        for name, value in (self.model_extra or {}).items():
            if _depth(value) > MAX_DEPTH:
                raise ValueError(
                    f"field {name!r} is nested more than {MAX_DEPTH} levels deep; tagger keeps "
                    "fields it does not know, and cannot keep this one"
                )
            if _not_finite(value):
                raise ValueError(
                    f"field {name!r} holds NaN or an infinity, which JSON has no number for; "
                    "tagger keeps fields it does not know, and cannot keep this one"
                )
        if not self.id:
            self.id = stable_id(self.venue, self.abstract)
        return self


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in a JSON value (a scalar is 0), without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        current, depth = todo.pop()
        if isinstance(current, dict):
            current = list(current.values())
        if isinstance(current, list):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_DEPTH:
                break
            todo.extend((item, depth + 1) for item in current)
    return deepest


def _not_finite(value: Any) -> bool:
    """Whether a JSON value holds a float that is NaN or infinite, without recursion."""
    todo = [value]
    while todo:
        current = todo.pop()
        if isinstance(current, float) and not math.isfinite(current):
            return True
        if isinstance(current, dict):
            todo.extend(current.values())
        elif isinstance(current, list):
            todo.extend(current)
    return False


TextField = Literal["title", "abstract"]


class Span(BaseModel):
    """Characters ``[start, end)`` of the paper's ``field`` (its original, unmodified text)."""

    field: TextField
    start: int
    end: int


class Keyphrase(BaseModel):
    """A keyphrase of the paper: how it is written, its normalised form, the probability that a
    reader accepts it (``score``), and every span where it or a variant occurs."""

    text: str = Field(
        description="The phrase as the abstract first writes it, markup stripped; one found "
        "only in a Title Case title loses the title's capitals."
    )
    normalized: str = Field(
        description="Lower-case, singular, hyphens as spaces, acronyms expanded "
        "where the paper defines them; variants share it."
    )
    score: float = Field(
        description="In [0, 1] (tagger 0.4.0 on; earlier versions wrote a cosine plus bonuses): "
        "the probability that a reader accepts the phrase as a keyphrase of the paper. From "
        "0.12.0 the readers' model's (fitted to judged/keyphrases3, coded as readers code: "
        "language.readers), where the paper's list is ranked by it weighed with what authors "
        "list, so a later phrase may score higher; before, and in the fast mode, gradient-"
        "boosted trees over KeyBERT's cosine similarity of phrase and paper, where and how "
        "often the phrase occurs, and how specific its words are, fitted to "
        "judged/keyphrases.jsonl, by which the list is ranked.",
    )
    spans: list[Span] = Field(
        description="Every place the phrase or one of its variants occurs, as offsets into the "
        "original (unstripped) field."
    )


EvidenceKind = Literal["alias", "cue", "acronym", "pattern", "keyphrase"]


class Evidence(BaseModel):
    """One hit of a taxonomy rule that counts for a tag: which area's rule, of what kind, the words
    exactly as in the paper with their offsets, and the weight the hit added."""

    area: str = Field(description="The area whose rule fired (a descendant, for a propagated tag).")
    kind: EvidenceKind = Field(
        description="alias, cue, acronym or pattern: a rule matched the "
        "text; keyphrase: an alias matched the normalised form "
        "of an extracted keyphrase."
    )
    rule: str = Field(description="The alias, acronym or regular expression that fired.")
    text: str = Field(description="The matched words, exactly as in the paper.")
    field: TextField
    start: int
    end: int
    weight: float = Field(description="What this hit added to its area's evidence.")
    keyphrase: str | None = Field(
        default=None, description="The normalised keyphrase the hit lies in, if any."
    )


class Neighbour(BaseModel):
    """A shipped, tagged paper close to this one that carries the area (tagging.neighbours)."""

    id: str = Field(description="The paper's id in the shipped data (data/ in the repository).")
    title: str | None = None
    similarity: float = Field(description="The cosine of the two papers' stored vectors.")


class AreaTag(BaseModel):
    """An area the paper is tagged with (in ``tags``) or a contribution type (in ``facets``): its
    path from the root, its score (the probability that a researcher accepts it), its evidence,
    its crosswalk to conference areas, and the neighbours that support it."""

    id: str
    name: str
    path: list[str] = Field(description="Area ids from the root down to this area.")
    score: float = Field(ge=0.0, le=1.0)
    evidence: list[Evidence]
    crosswalk: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Conference areas this area maps to (its own, or its nearest ancestor's).",
    )
    neighbours: list[Neighbour] = Field(
        default_factory=list,
        description="The nearest shipped papers tagged with this area (or one below it), which "
        "proposed the tag or support it (tagger 0.7.0 on); empty when none does.",
    )


def source_of(paper: Paper) -> str:
    """Where a paper came from, as its ``source`` field says (judged sets carry one), or '?'."""
    return str((paper.model_extra or {}).get("source", "?"))


class Provenance(BaseModel):
    """What wrote the line: enough to tell whether two lines were tagged alike."""

    tagger_version: str
    taxonomy_version: str
    taxonomy_sha256: str
    embedding_model: str
    spacy_model: str
    model: str | None = Field(
        default=None,
        description="The fitted model that weighed the tags (tagging.model): 'packaged' or "
        "'fitted', and 16 hex digits of its record's sha256; '(first stage)' when it was not "
        "fitted for the taxonomy and only its first stage was used.",
    )
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="The settings (TaggerConfig) that differed from their defaults, of those "
        "that change the output.",
    )


class TaggedPaper(BaseModel):
    """One line of tagger's output."""

    paper: Paper
    keyphrases: list[Keyphrase]
    tags: list[AreaTag] = Field(
        description="What the paper is about: its topic areas, the area it is mainly about first."
    )
    facets: list[AreaTag] = Field(
        default_factory=list,
        description="What kind of paper it is: tags of the taxonomy's facets (areas under a "
        "root marked 'facet', such as the contribution type type.theory or type.dataset), "
        "best score first.",
    )
    provenance: Provenance
    vector: str | None = Field(
        default=None,
        description="The paper's embedding (its title and opening, as tagger embeds them), "
        "384 int8 values scaled to a largest magnitude of 127, base64: what `tagger retag` "
        "reads to score the areas of another taxonomy without the embedding model "
        "(tagger 0.6.0 on).",
    )
