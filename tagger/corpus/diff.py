"""What changed between two taggings of the same papers (`tagger diff OLD NEW`), typically one
corpus tagged with two versions of a taxonomy: per paper, the tags and facets gained, lost and
rescored, with the evidence that made the difference; per area, how many papers moved.

Both files stream side by side. Tagged output keeps its input's order, so a paper's two records
usually arrive together and are compared at once; only records still waiting for their partner
are held, reduced to the tuples the comparison reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..config import DIFF_LIMIT
from ..errors import STDIN_NAME, TaggerError
from ..io.display import printable
from ..io.files import is_stdio
from ..io.tagged import Skip, read_tagged
from ..records import AreaTag, TaggedPaper


class _Hit(NamedTuple):
    """One item of a tag's evidence, as :class:`~tagger.records.Evidence` has it."""

    area: str
    kind: str
    rule: str
    text: str
    field: str
    start: int
    end: int
    weight: float
    keyphrase: str | None

    @property
    def key(self) -> tuple:
        """The same hit in two records: the same rule of the same area on the same span."""
        return (self.area, self.kind, self.rule, self.field, self.start, self.end)


class _Tag(NamedTuple):
    id: str
    path: tuple[str, ...]
    score: float
    hits: tuple[_Hit, ...]


class _Side(NamedTuple):
    """One record, reduced to what the diff reads: a waiting record costs no pydantic object."""

    title: str | None
    tags: tuple[_Tag, ...]
    facets: tuple[_Tag, ...]


@dataclass(frozen=True)
class EvidenceChange:
    """An item of a changed tag's evidence. ``change`` is "added" (OLD did not have the hit),
    "removed" (NEW does not) or "kept" (both do: the tag changed for another reason)."""

    area: str
    kind: str
    rule: str
    text: str
    field: str
    start: int
    end: int
    weight: float
    keyphrase: str | None
    change: Literal["added", "removed", "kept"]


@dataclass(frozen=True)
class TagChange:
    """A tag (or facet) ``gained``, ``lost``, or whose ``score`` changed. A gained tag carries its
    NEW evidence, a lost one its OLD evidence, each item marked against the other record: its
    evidence for the same tag, or, where it lacks the tag, all its evidence, so that a hit that
    fired before but counted for another area (a parent now propagated to) reads as "kept". A
    score change carries only the evidence added and removed."""

    id: str
    change: Literal["gained", "lost", "score"]
    old_score: float | None
    new_score: float | None
    evidence: tuple[EvidenceChange, ...]


@dataclass
class PaperDiff:
    """One paper that differs; ``present`` is "both", or "old"/"new" for a paper in one file."""

    id: str
    occurrence: int  # k for the k-th record with this id in its file, from 1
    title: str | None
    present: Literal["both", "old", "new"]
    main: tuple[str | None, str | None] | None = None  # (OLD's first tag, NEW's) if they differ
    tags: list[TagChange] = field(default_factory=list)
    facets: list[TagChange] = field(default_factory=list)


@dataclass(frozen=True)
class AreaDiff:
    """``gained``/``lost``: papers in both files that gained or lost the area; ``before`` and
    ``after``: papers of OLD and of NEW (all of each file) that have it."""

    id: str
    gained: int
    lost: int
    before: int
    after: int


@dataclass
class TagDiff:
    """Two taggings compared: :func:`diff_tagged` makes it, :func:`render` and :meth:`as_dict`
    show it; ``papers`` lists the papers that differ in NEW's order, then those only in OLD."""

    old: str  # the files' names, as messages name them
    new: str
    shared: int = 0  # papers in both files, compared
    differ: int = 0  # of those, the papers that differ
    only_old: int = 0
    only_new: int = 0
    areas: list[AreaDiff] = field(default_factory=list)
    papers: list[PaperDiff] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        """Whether anything differs, a paper in one file only included (diff(1)'s exit code)."""
        return bool(self.differ or self.only_old or self.only_new)

    def as_dict(self) -> dict[str, Any]:
        """JSON for scripts, scores exactly as the files hold them. Keys: ``old``, ``new`` (the
        files); ``compared``, ``differ``, ``only_in_old``, ``only_in_new`` (papers); ``differs``;
        ``areas``: [{id, gained, lost, before, after}]; ``papers``: [{id, occurrence, title, in
        ("both", "old", "new"), main ({old, new}, or null when unchanged), tags, facets}], where
        tags and facets are [{id, change ("gained", "lost", "score"), old_score, new_score,
        evidence: [{area, kind, rule, text, field, start, end, weight, keyphrase, change
        ("added", "removed", "kept")}]}]."""
        return {
            "old": self.old,
            "new": self.new,
            "compared": self.shared,
            "differ": self.differ,
            "only_in_old": self.only_old,
            "only_in_new": self.only_new,
            "differs": self.differs,
            "areas": [vars(area).copy() for area in self.areas],
            "papers": [
                {
                    "id": paper.id,
                    "occurrence": paper.occurrence,
                    "title": paper.title,
                    "in": paper.present,
                    "main": dict(zip(("old", "new"), paper.main, strict=True))
                    if paper.main
                    else None,
                    "tags": [_change_dict(change) for change in paper.tags],
                    "facets": [_change_dict(change) for change in paper.facets],
                }
                for paper in self.papers
            ],
        }


def _change_dict(change: TagChange) -> dict[str, Any]:
    data = vars(change).copy()
    data["evidence"] = [vars(item).copy() for item in change.evidence]
    return data


def diff_tagged(old: str | Path, new: str | Path, *, skip: Skip | None = None) -> TagDiff:
    """Compare two tagged files (JSONL, Parquet, part directories, or "-" for one of them).

    Papers pair by id, the k-th record of an id in OLD with its k-th in NEW. A paper differs
    when a tag or facet was gained or lost, its main tag (the first) changed, or a score
    changed; evidence alone does not make a difference. The per-area counts go by each tag's
    path, so a paper tagged rl.offline counts for rl too: that is what `tagger filter --area`
    and `tagger stats` count, so the numbers match what users select on.
    """
    if is_stdio(old) and is_stdio(new):
        raise TaggerError("OLD and NEW cannot both be standard input (-): name a file for one")
    diff = TagDiff(old=_name(old), new=_name(new))
    have = (Counter(), Counter())  # area -> papers with it, in OLD and in NEW
    gained: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    seen: dict[str, list[int]] = {}  # id -> records with it so far, in OLD and in NEW
    waiting: tuple[dict, dict] = ({}, {})  # (id, k) -> (position in its file, _Side)
    found: list[tuple[int, PaperDiff]] = []  # with their positions in NEW
    records = zip_longest(read_tagged(old, skip=skip), read_tagged(new, skip=skip))
    for position, pair in enumerate(records):
        for side, record in enumerate(pair):
            if record is None:
                continue
            counts = seen.setdefault(record.paper.id, [0, 0])
            counts[side] += 1
            key = (record.paper.id, counts[side])
            reduced = _reduce(record)
            have[side].update(_areas(reduced))
            partner = waiting[1 - side].pop(key, None)
            if partner is None:
                waiting[side][key] = (position, reduced)
                continue
            if side:
                (at, before), after = partner, reduced
            else:
                before, (at, after) = reduced, partner
            diff.shared += 1
            gained.update(_areas(after) - _areas(before))
            lost.update(_areas(before) - _areas(after))
            paper = _compare(key, before, after)
            if paper.main or paper.tags or paper.facets:
                diff.differ += 1
                found.append((at, paper))
    for (paper_id, k), (at, side) in waiting[1].items():
        found.append((at, PaperDiff(paper_id, k, side.title, "new")))
    diff.papers = [paper for _, paper in sorted(found, key=lambda item: item[0])]
    diff.papers += [PaperDiff(i, k, side.title, "old") for (i, k), (_, side) in waiting[0].items()]
    diff.only_old, diff.only_new = len(waiting[0]), len(waiting[1])
    rows = [AreaDiff(a, gained[a], lost[a], have[0][a], have[1][a]) for a in have[0] | have[1]]
    diff.areas = sorted(rows, key=lambda row: (-(row.gained + row.lost), row.id))
    return diff


def _name(source: str | Path) -> str:
    return STDIN_NAME if is_stdio(source) else str(source)


def _reduce(record: TaggedPaper) -> _Side:
    def tags(items: list[AreaTag]) -> tuple[_Tag, ...]:
        return tuple(
            _Tag(
                tag.id,
                tuple(tag.path),
                tag.score,
                tuple(_Hit._make(getattr(e, name) for name in _Hit._fields) for e in tag.evidence),
            )
            for tag in items
        )

    return _Side(record.paper.title, tags(record.tags), tags(record.facets))


def _areas(side: _Side) -> set[str]:
    return {area for tag in side.tags + side.facets for area in (*tag.path, tag.id)}


def _compare(key: tuple[str, int], old: _Side, new: _Side) -> PaperDiff:
    mains = (old.tags[0].id if old.tags else None, new.tags[0].id if new.tags else None)
    everything = [{hit.key for tag in s.tags + s.facets for hit in tag.hits} for s in (old, new)]
    return PaperDiff(
        id=key[0],
        occurrence=key[1],
        title=new.title if new.title is not None else old.title,
        present="both",
        main=mains if mains[0] != mains[1] else None,
        tags=_changes(old.tags, new.tags, *everything),
        facets=_changes(old.facets, new.facets, *everything),
    )


def _changes(
    old: Iterable[_Tag], new: Iterable[_Tag], old_hits: set, new_hits: set
) -> list[TagChange]:
    """Gained in NEW's order, lost in OLD's, then score changes in NEW's (a repeated id: its
    first tag)."""
    before: dict[str, _Tag] = {}
    after: dict[str, _Tag] = {}
    for tags, by_id in ((old, before), (new, after)):
        for tag in tags:
            by_id.setdefault(tag.id, tag)
    changes = [
        TagChange(tag.id, "gained", None, tag.score, _marked(tag.hits, old_hits, "added"))
        for tag in after.values()
        if tag.id not in before
    ]
    changes += [
        TagChange(tag.id, "lost", tag.score, None, _marked(tag.hits, new_hits, "removed"))
        for tag in before.values()
        if tag.id not in after
    ]
    for tag in after.values():
        was = before.get(tag.id)
        if was is not None and was.score != tag.score:
            moved = _marked(tag.hits, {h.key for h in was.hits}, "added") + _marked(
                was.hits, {h.key for h in tag.hits}, "removed"
            )
            kept = tuple(item for item in moved if item.change != "kept")
            changes.append(TagChange(tag.id, "score", was.score, tag.score, kept))
    return changes


def _marked(hits: tuple[_Hit, ...], other: set, change: str) -> tuple[EvidenceChange, ...]:
    return tuple(
        EvidenceChange(*hit, change="kept" if hit.key in other else change) for hit in hits
    )


_SIGNS = {"gained": "+", "lost": "-", "added": "+", "removed": "-", "kept": " "}


def render(diff: TagDiff, *, limit: int = DIFF_LIMIT) -> str:
    """A summary, the areas whose counts moved, then up to ``limit`` papers with their changes
    and the evidence behind each: ``+``/``-`` a tag or hit gained or gone, ``~`` a new score."""
    if not isinstance(limit, int) or limit < 0:
        raise ValueError(f"The 'limit' parameter of render must be an int >= 0. Got {limit!r}.")
    if not diff.differs:
        return f"no differences in tags or facets among {_papers(diff.shared)}\n"
    verb = "differs" if diff.differ == 1 else "differ"
    lines = [
        f"{diff.differ:,} of {_papers(diff.shared)} {verb} in tags or facets; "
        f"{_papers(diff.only_old)} only in OLD, {_papers(diff.only_new)} only in NEW"
    ]
    rows = [row for row in diff.areas if row.gained or row.lost or row.before != row.after]
    if rows:
        cells = [("area", "gained", "lost", "before", "after")] + [
            (printable(r.id), *(f"{n:,}" for n in (r.gained, r.lost, r.before, r.after)))
            for r in rows
        ]
        w = [max(len(row[column]) for row in cells) for column in range(4)]
        lines.append("")
        lines += [
            f"{area:<{w[0]}}  {gain:>{w[1]}}  {loss:>{w[2]}}  {before:>{w[3]}} → {after}"
            for area, gain, loss, before, after in cells
        ]
    for paper in diff.papers[:limit]:
        lines += ["", _heading(paper)]
        if paper.present != "both":
            lines.append(f"  only in {paper.present.upper()}")
        lines += [line for change in paper.tags for line in _change_lines(change, "")]
        if paper.main:
            lines.append("  main: " + " → ".join(printable(m or "(none)") for m in paper.main))
        lines += [line for change in paper.facets for line in _change_lines(change, "facet ")]
    if len(diff.papers) > limit:
        more = len(diff.papers) - limit
        lines += ["", f"... and {more:,} more paper{'' if more == 1 else 's'}"]
    return "\n".join(lines) + "\n"


def _papers(count: int) -> str:
    return f"{count:,} paper{'' if count == 1 else 's'}"


def _heading(paper: PaperDiff) -> str:
    heading = printable(paper.id) + (f" #{paper.occurrence}" if paper.occurrence > 1 else "")
    if paper.title:
        title = printable(paper.title)
        heading += "  " + (title if len(title) <= 72 else title[:71].rstrip() + "…")
    return heading


def _change_lines(change: TagChange, kind: str) -> list[str]:
    name = kind + printable(change.id)
    if change.change == "score":
        head = f"  ~ {name} {_scores(change.old_score, change.new_score)}"
    else:
        score = change.new_score if change.change == "gained" else change.old_score
        head = f"  {_SIGNS[change.change]} {name} ({score:.2f})"
    # one line per rule and sign: a rule that fired six times is one line, "×6"
    seen: dict[tuple[str, str, str, str], list[EvidenceChange]] = {}
    for e in change.evidence:
        seen.setdefault((e.change, e.rule, e.kind, e.area), []).append(e)
    return [head] + [
        f"      {_SIGNS[sign]} `{printable(rule)}` [{kind}, {printable(area)}] "
        f'"{printable(hits[0].text)}"' + (f" ×{len(hits)}" if len(hits) > 1 else "")
        for (sign, rule, kind, area), hits in seen.items()
    ]


def _scores(old: float, new: float) -> str:
    """Two decimals, or as many more as it takes to tell the two apart."""
    digits = 2
    while digits < 17 and f"{old:.{digits}f}" == f"{new:.{digits}f}":
        digits += 1
    return f"{old:.{digits}f} → {new:.{digits}f}"
