"""A fit, whole: judged papers and a taxonomy in, a model directory out (tagging.model), with the
figures held out by group and a precision-recall curve; what ``tagger fit`` runs, for the packaged
taxonomy and for a user's alike.

1. Read the judged papers (or papers with a field of labels) and the papers to find neighbours
   among (papers); papers to exclude (a sealed split) reach no index.
2. Before: the judged papers as the model in use for the taxonomy now tags them (the packaged
   model for the packaged taxonomy and overlays of it, its first stage alone for any other).
3. Measure: each fold of groups held out in turn from every step (folds), its papers tagged by
   what the others made, its scores calibrated by the other folds' verdicts (calibration);
   the figures at every ``--min-score`` (report).
4. Fit every part on every judged paper (folds.fit_stages), calibrate its scores by every
   fold's held-out verdicts, and write the model directory (modeldir), its record holding the
   held-out figures.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from ..config import FIT_WORKERS, FOLDS, TaggerConfig, usable_cores
from ..corpus.judged import JudgedReport, evaluate_judged, render_judged
from ..errors import TaggerError
from ..io.files import lock_beside, reads_once, sha256
from ..io.readers import read_papers
from ..records import Paper, TaggedPaper
from ..tagging.model import FittedModel
from ..tagging.neighbours import abstract_key, space_of
from ..tagging.pipeline import Tagger, learned_for, provenance_of, tagged_papers
from ..tagging.reading import Reader
from ..taxonomy.loading import load_taxonomy
from ..taxonomy.model import Taxonomy
from . import folds as cv
from . import report as figures
from .calibration import calibrate
from .modeldir import check_target, save_model
from .papers import IndexPaper, JudgedPaper, field_of, read_index_papers, read_judged

MIN_JUDGED = 30  # judged papers a fit needs: fewer leaves folds of a few papers


@dataclass
class Fit:
    """What a fit measured and wrote."""

    judged: list[JudgedPaper]
    index_papers: list[IndexPaper]
    folds: list[cv.Fold]
    curve: list[tuple[float, dict[str, float]]]
    held_out: JudgedReport
    records: list[TaggedPaper]  # every judged paper, tagged held out
    ranked: list[TaggedPaper]  # ... with every candidate listed (min_score 0), in order
    untitled: JudgedReport | None
    candidates: tuple[tuple[float, float], tuple[float, float]]  # rules alone; with votes
    before: JudgedReport | None = None
    before_ranked: list[TaggedPaper] = field(default_factory=list)
    before_label: str = ""
    record: dict[str, Any] | None = None

    def markdown(self, title: str) -> str:
        """The figures, as Markdown."""
        rules, votes = self.candidates
        lines = [
            f"# {title}",
            "",
            f"{len(self.judged):,} judged papers in {len(self.folds)} folds of whole groups "
            "(a venue and year, or a paper list), each held out in turn from every step of the "
            f"fit; {len(self.index_papers):,} papers to find neighbours among.",
            "",
            "Judged areas that are candidates at all, before the weigher (the area or one below "
            f"it; an ancestor too): rules alone {rules[0]:.3f} ({rules[1]:.3f}); with neighbours "
            f"and the area model, held out {votes[0]:.3f} ({votes[1]:.3f}).",
            "",
            *self.before_and_after(),
            "",
            "Held out, by `min_score`:",
            "",
            *figures.curve_table(self.curve),
            "",
            "Held out (each fold measured by what was fitted without it):",
            "",
            render_judged(self.held_out),
        ]
        if self.untitled is not None:
            lines.append(render_judged(self.untitled))
        return "\n".join(lines)

    def before_and_after(self) -> list[str]:
        """The headline figures before the fit and held out after it, as a Markdown table."""
        after = figures.summary(self.held_out) | main_in_first(self.ranked, self.judged)
        rows = [("after, held out", after)]
        if self.before is not None:
            before = figures.summary(self.before) | main_in_first(self.before_ranked, self.judged)
            rows.insert(0, (f"before: {self.before_label}", before))
        keys = [
            ("tag_precision", "precision"),
            ("papers_with_a_wrong_tag", "papers with a wrong tag"),
            ("area_recall", "recall"),
            ("area_recall_lenient", "recall, lenient"),
            ("acc@1", "main area ranked first (acc@1)"),
            ("acc@3", "main area in the first 3 ranked (acc@3)"),
        ]
        out = [
            "| | " + " | ".join(name for _, name in keys) + " |",
            "| --- " * (len(keys) + 1) + "|",
        ]
        for label, values in rows:
            out.append(f"| {label} | " + " | ".join(f"{values[k]:.3f}" for k, _ in keys) + " |")
        return out


def main_in_first(records: Sequence[TaggedPaper], judged: Sequence[JudgedPaper]) -> dict:
    """acc@1 and acc@3: the share of judged papers whose main area (or one below it) is the
    first of the ranked tags (``records`` listing every candidate: min_score 0), or among the
    first three."""
    main = {item.paper.id: set(item.judgment.main) for item in judged}
    hits = {1: 0, 3: 0}
    counted = 0
    for record in records:
        if record.paper.id not in main:
            continue
        counted += 1
        for k in hits:
            listed = {area for tag in record.tags[:k] for area in tag.path}
            hits[k] += bool(main[record.paper.id] & listed)
    return {f"acc@{k}": hits[k] / max(counted, 1) for k in hits}


def fit_model(
    judged_paths: Sequence[str | Path],
    *,
    taxonomy: str | Path | None = None,
    out: str | Path | None = None,
    labels: str | None = None,
    index_paths: Sequence[str | Path] = (),
    exclude: Sequence[str | Path] = (),
    settings: cv.Settings | None = None,
    config: TaggerConfig | None = None,
    folds: int = FOLDS,
    before: bool = True,
    workers: int | None = FIT_WORKERS,
    cache: str | Path | None = None,
    curve: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Fit:
    """Fit the model of ``taxonomy`` (the packaged one if None) to the judged papers of
    ``judged_paths`` (with ``labels``, to their field of that name: papers.read_judged),
    measured held out (and, with ``before``, as the model in use now tags them), and write it
    to ``out`` if given; see the module. The papers of ``exclude`` reach no step. The lock of
    ``out`` is held from the first step to the last: a second fit into the same directory is
    refused at once, where the two would have replaced each other's model."""
    log = log or _Progress()
    settings = settings or cv.Settings()
    config = config or TaggerConfig()
    for option, paths in (("--judged", judged_paths), ("--papers", index_paths),
                          ("--exclude", exclude)):  # fmt: skip
        for path in paths:
            if reads_once(path):
                raise TaggerError(
                    f"{option} {path} is not a file (a pipe, a FIFO or a device): a fit reads "
                    "its papers more than once (their sha256 goes into the model's record); "
                    "give a file"
                )
    loaded = load_taxonomy(taxonomy)
    _check_taxonomy(loaded)
    if curve is not None:
        figures.check_drawable()
    lock = None
    if out is not None:
        check_target(Path(out))  # before any work of the fit's is done
        where = Path(out).resolve() if Path(out).is_symlink() else Path(out)  # as it is written
        where.parent.mkdir(parents=True, exist_ok=True)
        lock = lock_beside(where, held_by="another `tagger fit`")  # until the last step
    try:
        reader = Reader(loaded, config)
        shown = ", ".join(Path(p).name for p in judged_paths)
        excluded = frozenset(
            abstract_key(p.abstract) for path in exclude for p in read_papers(path)
        )
        papers, sealed = _judged_papers(judged_paths, excluded, labels)
        if sealed:
            log(
                f"Note: {sealed:,} of the papers of {shown} are in --exclude "
                f"({', '.join(Path(p).name for p in exclude)}): left out of the fit"
            )
        log(f"reading the {len(papers):,} papers of {shown} ...")
        judged = read_judged(reader, papers, source=shown, labels=labels)
        if len(judged) < MIN_JUDGED:
            raise TaggerError(
                f"{shown}: {len(judged)} judged paper{'s' * (len(judged) != 1)}; a fit needs at "
                f"least {MIN_JUDGED} ({MIN_JUDGED - len(judged)} more) to hold some out and still "
                "learn from the rest"
            )
        _check_areas(judged, loaded, shown)
        _check_learnable(judged, shown)
        if unjudged := _unjudged(judged, loaded):
            named = ", ".join(unjudged[:10]) + (
                f" and {len(unjudged) - 10} more" if len(unjudged) > 10 else ""
            )
            log(
                f"Note: {len(unjudged)} area{'s' * (len(unjudged) != 1)} of {loaded.label} "
                f"{'are' if len(unjudged) != 1 else 'is'} in no judgment of {shown} ({named}): the "
                "fit learns that a paper is never there. Judge papers under this taxonomy first "
                "(tagger review), or tag without a fit: an area no model was fitted for is weighed "
                "by its rules and description"
            )
        skip = excluded | frozenset(abstract_key(item.paper.abstract) for item in judged)
        index_papers: list[IndexPaper] = []
        if index_paths:
            named = ", ".join(map(str, index_paths))
            log(f"reading the papers to find neighbours among ({named}) ...")
            index_papers = read_index_papers(
                index_paths,
                reader.config,
                taxonomy=taxonomy,
                skip=skip,
                workers=workers,
                cache=cache,
            )
        about = {"space": space_of(reader.embedder.name), "taxonomy_sha256": loaded.sha256}
        log(f"{len(judged):,} judged papers, {len(index_papers):,} to find neighbours among; "
            f"measuring {folds} folds held out, each fitted without its papers ...")  # fmt: skip
        with threadpool_limits(1):  # as in the workers: the same model for any --workers and cores
            done = cv.cross_validate(
                judged,
                index_papers,
                loaded,
                settings,
                config,
                about=about,
                folds=folds,
                log=log,
                workers=usable_cores() if workers is None else workers,
            )
        judgments = {item.paper.id: item.judgment for item in judged}
        curve_points = []
        for threshold in figures.CURVE:
            listed = cv.held_out(done, loaded, config, min_score=threshold)
            report = evaluate_judged(listed, loaded, judgments=judgments)
            curve_points.append((threshold, figures.summary(report)))
        records = cv.held_out(done, loaded, config)
        ranked = cv.held_out(done, loaded, config, min_score=0.0)
        held = evaluate_judged(
            records, loaded, source=f"{shown}, each fold held out", judgments=judgments
        )
        untitled_records = [r for r in records if not r.paper.title]
        untitled = (
            evaluate_judged(
                untitled_records,
                loaded,
                source=f"{figures.UNTITLED}, held out",
                judgments=judgments,
            )
            if untitled_records and len(untitled_records) < len(records)
            else None
        )
        order = [i for fold in done for i in fold.test]
        found = [proposal.candidates for fold in done for proposal in fold.proposals]
        from .weighing import FIRST_STAGE_AT, candidate_recall

        result = Fit(
            judged,
            index_papers,
            done,
            curve_points,
            held,
            records,
            ranked,
            untitled,
            (
                candidate_recall(judged, [item.rules.candidates for item in judged], loaded),
                candidate_recall([judged[i] for i in order], found, loaded),
            ),
        )
        if before:
            log("tagging them as the model in use now does ...")
            records_now, result.before_ranked, result.before_label = tagged_now(
                judged, taxonomy, config, reader.embedder.name
            )
            result.before = evaluate_judged(
                records_now, loaded, source="before", judgments=judgments
            )
        if curve:
            figures.draw({"held out": curve_points}, config.min_score, curve)
        if out is None:
            return result
        log("fitting on every judged paper ...")
        with threadpool_limits(1):
            fitted = cv.fit_stages(
                judged,
                index_papers,
                loaded,
                settings,
                config,
                about,
                workers=usable_cores() if workers is None else workers,
            )
        if settings.calibrate:
            fitted.weigher = calibrate(fitted.weigher, cv.calibration_map(done))
        fitted_on = {
            "judged": [Path(p).name for p in judged_paths],
            "sha256": [sha256(p) for p in judged_paths],
            "labels": labels,
            "papers": len(judged),
            "index_papers": [Path(p).name for p in index_paths],
            "excluded": [Path(p).name for p in exclude],
            "judged_excluded": sealed,  # judged papers left out as --exclude names them
        }
        result.record = save_model(
            Path(out),
            fitted.parts(),
            taxonomy=loaded,
            fitted_on=fitted_on,
            about={
                "space": about["space"],
                "settings": vars(settings),
                "held_out": figures.as_json(figures.summary(held)),
            },
            config=config,
            constants={"first_stage_at": FIRST_STAGE_AT},
        )
        return result
    finally:
        if lock is not None:
            lock.close()


def tagged_now(
    judged: Sequence[JudgedPaper],
    taxonomy: str | Path | None,
    config: TaggerConfig,
    embedder: str,
) -> tuple[list[TaggedPaper], list[TaggedPaper], str]:
    """The judged papers as the model in use for ``taxonomy`` tags them now (with the settings
    it was fitted with): its tags, every candidate listed (min_score 0) in order, and what that
    model is. Papers the fit read with those settings are not read again."""
    model = FittedModel.load(backend=config.embedding_backend)
    now = replace(config, model="", **model.features["settings"])
    loaded = load_taxonomy(taxonomy)
    if now.shaping("evidence", "votes") == config.shaping("evidence", "votes"):
        learned = learned_for(loaded, now, embedder)
        readings = [item.reading for item in judged]
        provenance = provenance_of(loaded, now, embedder, learned)
        listed = [
            tagged_papers(readings, learned, provenance, listing=replace(now, **settings))
            for settings in ({}, {"min_score": 0.0})
        ]
    else:
        listed = []
        for settings in ({}, {"min_score": 0.0}):
            with Tagger.from_taxonomy(taxonomy, replace(now, **settings)) as tagger:
                listed.append(list(tagger.tag_many(item.paper for item in judged)))
                learned = tagger.learned
    if learned.serving:
        label = learned.model.label
    else:
        label = "rules and descriptions alone (no model fitted for this taxonomy)"
    known = model.known(item.paper.abstract for item in judged).count("fitted")
    if known:  # its first stage too was fitted on them
        label += (
            f"; in sample: {known:,} of the {len(judged):,} judged papers are papers it was "
            "fitted on"
        )
    return listed[0], listed[1], label


def _unjudged(judged: Sequence[JudgedPaper], taxonomy: Taxonomy) -> list[str]:
    """The topic areas no judgment names, nor any area below them (judgments made under another
    taxonomy than an overlay that adds areas never name them)."""
    named = {
        above
        for item in judged
        for area in (*item.judgment.areas, *item.judgment.acceptable, *item.judgment.main)
        for above in taxonomy.path(area)
    }
    return [
        area.id
        for area in taxonomy.areas
        if area.id not in named and taxonomy.facet(area.id) is None
    ]


MIN_AREAS = 3  # topic areas a taxonomy needs for a fit: it learns to tell areas apart
MIN_LABELS = 2  # areas the judgments must name between them, for the same reason
MIN_UNITS = 2  # units held out (folds.held_together): a fit measures itself on one held out


def _judged_papers(
    paths: Sequence[str | Path], excluded: frozenset[int], labels: str | None
) -> tuple[list[Paper], int]:
    """The papers of the judged files, but those whose abstract is among ``excluded`` (a sealed
    split: they reach no step of the fit), and how many those were. TaggerError if a paper id
    comes twice: a fit learns each paper once, and its figures find a paper by its id."""
    papers: list[Paper] = []
    first: dict[str, tuple[str, int, Paper]] = {}
    sealed = 0
    for path in paths:
        name = Path(path).name
        for number, paper in enumerate(read_papers(path), start=1):
            if abstract_key(paper.abstract) in excluded:
                sealed += 1
                continue
            if paper.id in first:
                where, at, earlier = first[paper.id]
                judged_by = labels or "judged"  # the field a judgment is read from
                same = field_of(earlier, judged_by) == field_of(paper, judged_by)
                raise TaggerError(
                    f"{name} record {number}: paper id {paper.id!r} comes again (first in "
                    f"{where} record {at}), {'judged alike' if same else 'judged differently'}: "
                    "a fit learns each paper once; keep one of them"
                )
            first[paper.id] = (name, number, paper)
            papers.append(paper)
    return papers, sealed


def _check_taxonomy(taxonomy: Taxonomy) -> None:
    topics = [area.id for area in taxonomy.areas if taxonomy.facet(area.id) is None]
    if len(topics) < MIN_AREAS:
        raise TaggerError(
            f"{taxonomy.label} has {len(topics)} topic area{'s' * (len(topics) != 1)}"
            f"{' (' + ', '.join(topics) + ')' if topics else ''}: a fit learns to tell areas "
            f"apart and needs at least {MIN_AREAS}; add areas to it, or tag without a fit (an "
            "area is then weighed by its rules and description)"
        )


def _check_learnable(judged: Sequence[JudgedPaper], source: str) -> None:
    """Refuse judged papers a fit cannot learn from, or cannot measure itself on: judgments
    that name one area between them, or papers all of one unit held out (one source)."""
    named = sorted({a for item in judged for a in (*item.judgment.areas, *item.judgment.main)})
    if len(named) < MIN_LABELS:
        raise TaggerError(
            f"{source}: every judged paper is judged {named[0]!r} alone: a fit learns to tell "
            f"areas apart and needs judgments of at least {MIN_LABELS} areas; add judged "
            "papers of other areas"
        )
    units = sorted(set(cv.held_together(judged)))
    if len(units) < MIN_UNITS:
        raise TaggerError(
            f"{source}: every judged paper is of one source ({units[0]!r}): a fit measures "
            "itself on sources it never saw, each held out in turn, and needs papers of at "
            f"least {MIN_UNITS}; add judged papers of another source (--judged again: another "
            "review's judgments, another venue or year)"
        )


def _check_areas(judged: Sequence[JudgedPaper], taxonomy: Taxonomy, source: str) -> None:
    unknown = sorted(
        {
            area
            for item in judged
            for area in (*item.judgment.areas, *item.judgment.acceptable, *item.judgment.main)
            if area not in taxonomy.by_id
        }
    )
    if unknown:
        raise TaggerError(
            f"{source}: judged with areas {taxonomy.label} does not have: {', '.join(unknown[:10])}"
            + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        )


class _Progress:
    """What a fit says on stderr as it goes, each line after the minutes and seconds since it
    began ("[1:05] fitting on every judged paper ...")."""

    def __init__(self) -> None:
        self.began = time.monotonic()

    def __call__(self, message: str) -> None:
        minutes, seconds = divmod(int(time.monotonic() - self.began), 60)
        print(f"[{minutes}:{seconds:02d}] {message}", file=sys.stderr, flush=True)
