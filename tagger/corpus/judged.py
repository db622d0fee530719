"""Tags and keyphrases measured against a judged set: papers whose right areas a person wrote
down (see judged/README.md), so that every tag the tagger lists can be called right, neutral or
wrong; and papers whose candidate phrases a person marked acceptable as keyphrases or not (see
judged/keyphrases.md), so that every keyphrase can be called accepted or not, and why.

A listed tag is right when its area is one of the paper's judged ``areas`` or an ancestor of one
(a parent is implied by its sub-area), neutral when it is one of ``acceptable`` or an ancestor of
one, and wrong otherwise. A listed contribution type (a facet tag, ``type.theory``) is right when
the judged ``type`` names it (``theory``), and wrong otherwise.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..config import tagger_version
from ..errors import InputError
from ..records import AreaTag, Paper, TaggedPaper, source_of
from ..taxonomy.model import Taxonomy
from .judged_phrases import (
    CALIBRATION_BINS,
    PhraseLabel,
    PhraseReport,
    add_to_bin,
    largest_gap,
    render_phrases,
)

if TYPE_CHECKING:
    from ..tagging.pipeline import Tagger

TYPE_FACET = "type"  # the facet root the judged types are values of


@dataclass(frozen=True)
class Judgment:
    """What a judge wrote down for one paper."""

    areas: tuple[str, ...]  # the areas the paper is about, each as specific as fits
    main: tuple[str, ...]  # the one (or two) it is mainly about
    acceptable: tuple[str, ...] = ()  # defensible, not necessary: neither right nor wrong
    types: tuple[str, ...] = ()  # method, theory, dataset, analysis, survey, system
    # a PHRASE_LABELS label per phrase, by its Porter-stemmed words (corpus.evaluate.stem_phrase)
    phrases: Mapping[str, str] = field(default_factory=dict)
    # groups of accepted phrases that name one thing (an acronym and its expansion, a title's
    # and an abstract's name of one method), each as the stems of its phrases
    same: tuple[frozenset[str], ...] = ()

    @classmethod
    def of(cls, record: TaggedPaper, *, source: str = "") -> Judgment | None:
        """The judgment a tagged judged paper carries in its ``judged`` field, if any."""
        return cls.of_paper(record.paper, source=source)

    @classmethod
    def of_paper(cls, paper: Paper, *, source: str = "") -> Judgment | None:
        """The judgment a judged paper carries in its ``judged`` field, if any; InputError if
        the field is not one (``source`` names the file in the message)."""
        value = (paper.model_extra or {}).get("judged")
        if value is None:
            return None
        try:
            given = _Judged.model_validate(value)
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in ("judged", *error["loc"]))
            what = _SHOULD_BE.get(error["type"]) or error["msg"][:1].lower() + error["msg"][1:]
            raise InputError(
                f"paper {paper.id!r}: {where!r}: {what} (judged/README.md gives the format)",
                source=source or None,
            ) from None
        from .evaluate import stem_phrase

        return cls(
            areas=tuple(given.areas or ()),
            main=tuple(given.main or ()),
            acceptable=tuple(given.acceptable or ()),
            types=tuple(given.type or ()),
            phrases={stem_phrase(k): label for k, label in (given.keyphrases or {}).items()},
            same=tuple(frozenset(map(stem_phrase, group)) for group in given.same or ()),
        )

    def phrase_label(self, phrase: str) -> str | None:
        """The judged label of a phrase, matched by its Porter-stemmed words; None if unjudged."""
        from .evaluate import stem_phrase

        return self.phrases.get(stem_phrase(phrase))

    def same_thing(self, one: str, other: str) -> bool:
        """Whether two phrases were judged names of one thing (a ``same`` group holds both)."""
        from .evaluate import stem_phrase

        pair = {stem_phrase(one), stem_phrase(other)}
        return len(pair) == 2 and any(pair <= group for group in self.same)

    @property
    def facet_areas(self) -> tuple[str, ...]:
        """The judged contribution types as the taxonomy's facet areas: theory -> type.theory."""
        return tuple(f"{TYPE_FACET}.{name}" for name in self.types)


_SHOULD_BE = {  # pydantic's errors in JSON's words
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "string_type": "must be a string",
}


class _Judged(BaseModel):
    """A paper's ``judged`` field, as judged/README.md writes it (other keys, notes, are kept)."""

    model_config = ConfigDict(extra="allow")

    areas: list[str] | None = None
    main: list[str] | None = None
    acceptable: list[str] | None = None
    type: list[str] | None = None
    keyphrases: dict[str, PhraseLabel] | None = None
    same: list[list[str]] | None = None  # phrases judged names of one thing (judged/keyphrases3)


def judgments_of(papers: Iterable[Paper], source: str) -> dict[str, Judgment]:
    """The judgments of a judged file's papers, by paper id; InputError if it holds none (a
    file to measure against that judges nothing is a mistake, not an empty report)."""
    found = {}
    for paper in papers:
        judgment = Judgment.of_paper(paper, source=source)
        if judgment is not None:
            found[paper.id] = judgment
    if not found:
        raise InputError(
            "holds no judgments: no paper has a 'judged' field (judged/README.md says how one "
            "is written)",
            source=source,
        )
    return found


def verdicts(tags: Iterable[AreaTag], judgment: Judgment, taxonomy: Taxonomy) -> list[str]:
    """Right, neutral or wrong, for each tag in order."""
    right = _with_ancestors(judgment.areas, taxonomy)
    neutral = _with_ancestors(judgment.acceptable, taxonomy) - right
    return ["right" if t.id in right else "neutral" if t.id in neutral else "wrong" for t in tags]


def facet_verdicts(facets: Iterable[AreaTag], judgment: Judgment) -> list[str]:
    """Right or wrong, for each facet tag in order."""
    return ["right" if t.id in judgment.facet_areas else "wrong" for t in facets]


def _with_ancestors(areas: Iterable[str], taxonomy: Taxonomy) -> set[str]:
    return {
        ancestor for area in areas if area in taxonomy.by_id for ancestor in taxonomy.path(area)
    }


@dataclass
class JudgedReport:
    source: str
    papers: int = 0
    tags: int = 0
    counts: Counter = field(default_factory=Counter)  # right, neutral, wrong
    papers_with_wrong: int = 0
    areas: int = 0  # judged areas
    found: int = 0  # of them, listed (the area or a sub-area)
    found_lenient: int = 0  # listed, an ancestor accepted
    first_is_main: int = 0
    first_is_specific: int = 0  # the first tag is a judged area: right, and as specific as fits
    root_first: int = 0  # the first tag is a root, and a judged area lies below it
    untagged: int = 0
    bins: list[list[float]] = field(default_factory=list)  # per bin: [n, score sum, right]
    by_source: dict[str, Counter] = field(default_factory=dict)
    types: TypeReport = field(default_factory=lambda: TypeReport())
    keyphrases: PhraseReport = field(default_factory=lambda: PhraseReport())
    in_sample: bool = False  # the weigher that scored the tags was fitted on these judgments
    records: int = 0  # tagged papers read
    matched: int = 0  # of them, with a judgment
    known: dict[str, int] = field(default_factory=dict)  # papers the model saw, by how
    unseen: JudgedReport | None = None  # the same measures on the papers it did not see

    @property
    def precision(self) -> float:
        judged = self.counts["right"] + self.counts["wrong"]
        return self.counts["right"] / judged if judged else 0.0

    def share(self, count: int, of: int | None = None) -> float:
        of = self.papers if of is None else of
        return count / of if of else 0.0

    def calibration(self, min_tags: int = 1) -> list[dict[str, float]]:
        """Per score bin: its tags (right or wrong), their mean score and their precision."""
        rows = []
        for k, (n, total, right) in enumerate(self.bins):
            if n >= min_tags:
                rows.append(
                    {
                        "from": k / CALIBRATION_BINS,
                        "to": (k + 1) / CALIBRATION_BINS,
                        "tags": int(n),
                        "mean_score": total / n,
                        "precision": right / n,
                    }
                )
        return rows

    def largest_gap(self, min_tags: int = 10) -> float:
        """The largest |precision - mean score| of a bin with at least ``min_tags`` tags."""
        return largest_gap(self.bins, min_tags)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "papers": self.papers,
            "tags": self.tags,
            "right": self.counts["right"],
            "neutral": self.counts["neutral"],
            "wrong": self.counts["wrong"],
            "tag_precision": round(self.precision, 4),
            "papers_with_a_wrong_tag": round(self.share(self.papers_with_wrong), 4),
            "area_recall": round(self.share(self.found, self.areas), 4),
            "area_recall_lenient": round(self.share(self.found_lenient, self.areas), 4),
            "tags_per_paper": round(self.share(self.tags), 3),
            "first_tag_is_specific": round(self.share(self.first_is_specific), 4),
            "first_tag_is_main": round(self.share(self.first_is_main), 4),
            "root_first_child_judged": round(self.share(self.root_first), 4),
            "untagged": self.untagged,
            "calibration": [{k: round(v, 4) for k, v in row.items()} for row in self.calibration()],
            "largest_calibration_gap": round(self.largest_gap(), 4),
            "by_source": {name: dict(counts) for name, counts in sorted(self.by_source.items())},
            "types": self.types.as_dict(),
            "keyphrases": self.keyphrases.as_dict(),
            "in_sample": self.in_sample,
            "known_to_the_model": self.known,
            "unseen": self.unseen.as_dict() if self.unseen else None,
        }


@dataclass
class TypeReport:
    """The contribution types (facet tags) against the judged types."""

    papers: int = 0
    listed: int = 0
    right: int = 0
    papers_with_wrong: int = 0
    judged: int = 0  # judged types, over all papers
    found: int = 0  # of them, listed
    by_type: dict[str, Counter] = field(default_factory=dict)  # judged, listed, right
    bins: list[list[float]] = field(
        default_factory=lambda: [[0, 0.0, 0] for _ in range(CALIBRATION_BINS)]
    )

    def count(self, facets: list[AreaTag], judgment: Judgment) -> None:
        said = facet_verdicts(facets, judgment)
        listed = {tag.id for tag in facets}
        self.papers += 1
        self.listed += len(said)
        self.right += said.count("right")
        self.papers_with_wrong += "wrong" in said
        self.judged += len(judgment.facet_areas)
        self.found += len(listed & set(judgment.facet_areas))
        for area in judgment.facet_areas:
            self.by_type.setdefault(area, Counter())["judged"] += 1
        for tag, verdict in zip(facets, said, strict=True):
            counts = self.by_type.setdefault(tag.id, Counter())
            counts["listed"] += 1
            counts["right"] += verdict == "right"
            add_to_bin(self.bins, tag.score, verdict == "right")

    def largest_gap(self, min_tags: int = 10) -> float:
        return largest_gap(self.bins, min_tags)

    def as_dict(self) -> dict[str, Any]:
        return {
            "papers": self.papers,
            "listed": self.listed,
            "precision": round(self.right / self.listed, 4) if self.listed else 0.0,
            "papers_with_a_wrong_type": round(self.papers_with_wrong / self.papers, 4)
            if self.papers
            else 0.0,
            "recall": round(self.found / self.judged, 4) if self.judged else 0.0,
            "types_per_paper": round(self.listed / self.papers, 3) if self.papers else 0.0,
            "largest_calibration_gap": round(self.largest_gap(), 4),
            "by_type": {area: dict(counts) for area, counts in sorted(self.by_type.items())},
        }


def evaluate_judged(
    records: Iterable[TaggedPaper],
    taxonomy: Taxonomy,
    *,
    source: str = "",
    judgments: Mapping[str, Judgment] | None = None,
    judged_source: str = "",
    tagger: Tagger | None = None,
) -> JudgedReport:
    """Measure tagged papers against their judgments: those the papers carry in a ``judged``
    field, or, given ``judgments`` (by paper id, from the file ``judged_source``), those only.
    Papers without one are not counted; ``matched`` and ``records`` of the report say how many
    were, of how many. No paper matched is an InputError: there is nothing to measure. Given the
    ``tagger`` whose models scored the papers, the report says which figures are in sample (so
    optimistic): all papers scored by this version, by a weigher (``in_sample``) or keyphrase
    model (``keyphrases.in_sample``) fitted on the judged file (``judged_source`` or ``source``)."""
    report = JudgedReport(source=source, bins=[[0, 0.0, 0] for _ in range(CALIBRATION_BINS)])
    ours, records = True, list(records)  # every paper was scored by this version
    for record in records:
        report.records += 1
        ours = ours and record.provenance.tagger_version == tagger_version()
        if judgments is not None:
            judgment = judgments.get(record.paper.id)
        else:
            judgment = Judgment.of(record, source=source)
        if judgment is None:
            continue
        report.matched += 1
        if judgment.phrases:
            report.keyphrases.count(record, judgment)
        if not judgment.areas:
            continue
        unknown = [a for a in (*judgment.areas, *judgment.acceptable) if a not in taxonomy.by_id]
        if unknown:
            raise InputError(
                f"paper {record.paper.id!r} is judged with areas the taxonomy does "
                f"not have: {', '.join(unknown)}",
                source=source,
            )
        _count(report, record, judgment, taxonomy)
    if not report.matched:
        papers = f"{report.records:,} paper{'s' * (report.records != 1)}"
        if judgments is not None:
            why = (
                f"none of its {papers} has a judgment in {judged_source or 'the judgments'} "
                f"({len(judgments):,} papers judged, matched by id): are they the same papers?"
            )
        else:
            why = f"none of its {papers} is judged (has a 'judged' field)"
        raise InputError(f"nothing to measure: {why}", source=source or None)
    if tagger is not None:
        judged = judged_source or source
        report.in_sample = ours and tagger.learned.model.fitted_on(judged)
        report.keyphrases.in_sample = ours and tagger.reader.keyphrases.model.fitted_on(judged)
        how = tagger.learned.model.known(r.paper.abstract for r in records)
        report.known = dict(sorted(Counter(h for h in how if h).items()))
        others = [r for r, h in zip(records, how, strict=True) if not h]
        if report.known and others:
            with contextlib.suppress(InputError):  # none of the others is judged
                report.unseen = evaluate_judged(others, taxonomy, judgments=judgments)
    return report


def _count(report: JudgedReport, record: TaggedPaper, judgment: Judgment, taxonomy: Taxonomy):
    said = verdicts(record.tags, judgment, taxonomy)
    report.papers += 1
    report.tags += len(said)
    report.counts.update(said)
    report.papers_with_wrong += "wrong" in said
    report.untagged += not record.tags
    listed = {area for tag in record.tags for area in tag.path}
    tagged = {tag.id for tag in record.tags}
    for area in judgment.areas:
        report.areas += 1
        below = {a for a in taxonomy.descendants(area)} if area in taxonomy.by_id else {area}
        report.found += bool(below & tagged)
        report.found_lenient += (
            bool(below & tagged)
            or area in listed
            or any(ancestor in tagged for ancestor in taxonomy.path(area))
        )
    first_main = bool(record.tags) and record.tags[0].id in judgment.main
    report.first_is_main += first_main
    report.first_is_specific += bool(record.tags) and record.tags[0].id in judgment.areas
    report.root_first += bool(record.tags) and _root_over_judged(
        record.tags[0].id, judgment, taxonomy
    )
    for tag, verdict in zip(record.tags, said, strict=True):
        if verdict != "neutral":
            add_to_bin(report.bins, tag.score, verdict == "right")
    report.types.count(record.facets, judgment)
    by = report.by_source.setdefault(source_of(record.paper), Counter())
    by.update(
        {
            "papers": 1,
            "tags": len(said),
            "first_is_main": int(first_main),
            "with_wrong": int("wrong" in said),
            **Counter(said),
        }
    )


def _root_over_judged(area: str, judgment: Judgment, taxonomy: Taxonomy) -> bool:
    """Whether ``area`` is a root (``llm``, ``cv``) and an area the judge named lies below it:
    the broad area listed where a reader named the specific one."""
    if taxonomy.by_id[area].parent is not None:
        return False
    below = taxonomy.descendants(area) - {area}
    return any(judged in below for judged in judgment.areas)


def render_judged(report: JudgedReport) -> str:
    """The judged report as Markdown tables: tags where the set judges areas, keyphrases where
    it judges phrases."""
    parts = [_render_tags(report)] if report.papers else []
    if report.keyphrases.papers:
        parts.append(render_phrases(report.keyphrases, report.source))
    return "\n".join(parts)


def _render_tags(report: JudgedReport) -> str:
    r = report
    lines = [
        f"## {r.source}: {r.papers} judged papers, {r.tags} tags listed",
        "",
        *(
            [
                "The weigher that scored these tags was fitted on these very judgments, so the "
                "figures are optimistic; `tagger fit` measures them held out "
                "(docs/calibration.md).",
                "",
            ]
            if r.in_sample
            else []
        ),
        *([_unseen(r), ""] if r.known else []),
        "| tag precision | papers with a wrong tag | area recall (lenient) | tags/paper | "
        "first tag most specific right (main) | largest calibration gap |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| {r.precision:.3f} | {r.share(r.papers_with_wrong):.3f} | "
        f"{r.share(r.found, r.areas):.3f} ({r.share(r.found_lenient, r.areas):.3f}) | "
        f"{r.share(r.tags):.2f} | {r.share(r.first_is_specific):.3f} "
        f"({r.share(r.first_is_main):.3f}) | {r.largest_gap():.3f} |",
        "",
        f"Tags: {r.counts['right']} right, {r.counts['neutral']} neutral, {r.counts['wrong']} "
        f"wrong; {r.untagged} papers untagged. The first tag is a root where the judge named "
        f"an area below it: {r.root_first} of {r.papers} papers ({r.share(r.root_first):.3f}).",
        "",
        "Calibration (right and wrong tags by score):",
        "",
        "| score | tags | mean score | precision |",
        "| --- | --- | --- | --- |",
    ]
    for row in r.calibration():
        lines.append(
            f"| {row['from']:.1f}-{row['to']:.1f} | {row['tags']} | "
            f"{row['mean_score']:.2f} | {row['precision']:.2f} |"
        )
    lines += [
        "",
        "By source:",
        "",
        "| source | papers | tag precision | papers with a wrong tag | tags/paper | "
        "first tag is the main area |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in sorted(r.by_source.items()):
        judged = c["right"] + c["wrong"]
        lines.append(
            f"| {name} | {c['papers']} | {c['right'] / judged if judged else 0:.3f} | "
            f"{c['with_wrong'] / c['papers']:.3f} | {c['tags'] / c['papers']:.2f} | "
            f"{c['first_is_main'] / c['papers']:.3f} |"
        )
    t = r.types.as_dict()
    lines += [
        "",
        "Contribution types (`facets`):",
        "",
        "| type precision | papers with a wrong type | type recall | types/paper | "
        "largest calibration gap |",
        "| --- | --- | --- | --- | --- |",
        f"| {t['precision']:.3f} | {t['papers_with_a_wrong_type']:.3f} | {t['recall']:.3f} | "
        f"{t['types_per_paper']:.2f} | {t['largest_calibration_gap']:.3f} |",
        "",
        "| type | judged | listed | right | precision | recall |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for area, c in sorted(r.types.by_type.items()):
        precision = f"{c['right'] / c['listed']:.2f}" if c["listed"] else "-"
        recall = f"{c['right'] / c['judged']:.2f}" if c["judged"] else "-"
        lines.append(
            f"| {area} | {c['judged']} | {c['listed']} | {c['right']} | {precision} | {recall} |"
        )
    return "\n".join(lines) + "\n"


def _unseen(r: JudgedReport) -> str:
    """What the model saw of the papers measured, and the headline figures on the others."""
    from ..tagging.model import said_known

    said = said_known(r.known)
    u = r.unseen
    if u is None or not u.papers:
        return f"Of these papers, {said}: every figure is in sample."
    return (
        f"Of these papers, {said} (in sample); on the other {u.papers}, which no part of the "
        f"model saw: tag precision {u.precision:.3f}, area recall {u.share(u.found, u.areas):.3f} "
        f"({u.share(u.found_lenient, u.areas):.3f}), first tag most specific right "
        f"{u.share(u.first_is_specific):.3f}."
    )
