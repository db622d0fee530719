"""A fit, whole: judged papers and a taxonomy in, a model directory out (tagging.model), with the
figures held out by group and a precision-recall curve; what ``tagger fit`` runs, for the packaged
taxonomy and for a user's alike.

1. Read the judged papers and the papers to find neighbours among (papers).
2. Measure: each fold of groups held out in turn from every step (folds), its papers tagged by
   what the others made; the figures at every ``--min-score`` (report).
3. Fit every part on every judged paper (folds.fit_stages) and write the model directory
   (modeldir), its record holding the held-out figures.
4. With sealed papers, measure the model written on them, once (they reach no step of the fit).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import TaggerConfig, usable_cores
from ..corpus.judged import JudgedReport, evaluate_judged, render_judged
from ..errors import TaggerError
from ..io.files import sha256
from ..io.readers import read_papers
from ..records import TaggedPaper
from ..tagging.neighbours import abstract_key, space_of
from ..tagging.pipeline import Tagger
from ..taxonomy.loading import load_taxonomy
from ..taxonomy.model import Taxonomy
from . import folds as cv
from . import report as figures
from .modeldir import save_model
from .papers import IndexPaper, JudgedPaper, read_index_papers, read_judged

MIN_JUDGED = 30  # judged papers a fit needs: fewer than this leaves folds of a few papers


@dataclass
class Fit:
    """What a fit measured and wrote."""

    judged: list[JudgedPaper]
    index_papers: list[IndexPaper]
    folds: list[cv.Fold]
    curve: list[tuple[float, dict[str, float]]]
    held_out: JudgedReport
    untitled: JudgedReport | None
    candidates: tuple[tuple[float, float], tuple[float, float]]  # rules alone; with votes
    record: dict[str, Any] | None = None
    sealed: JudgedReport | None = None
    notes: list[str] = field(default_factory=list)

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
        if self.sealed is not None:
            lines += ["", render_judged(self.sealed)]
        return "\n".join(lines)


def fit_model(
    judged_paths: Sequence[str | Path],
    *,
    taxonomy: str | Path | None = None,
    out: str | Path | None = None,
    index_paths: Sequence[str | Path] = (),
    sealed: str | Path | None = None,
    settings: cv.Settings | None = None,
    config: TaggerConfig | None = None,
    folds: int = cv.FOLDS,
    workers: int | None = None,
    cache: str | Path | None = None,
    curve: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Fit:
    """Fit the model of ``taxonomy`` (the packaged one if None) to the judged papers of
    ``judged_paths``, measured held out, and write it to ``out`` (if given); see the module."""
    log = log or _note
    settings = settings or cv.Settings()
    config = config or TaggerConfig()
    loaded = load_taxonomy(taxonomy)
    reader = Tagger.for_fitting(loaded, config)
    papers = [p for path in judged_paths for p in read_papers(path)]
    shown = ", ".join(Path(p).name for p in judged_paths)
    log(f"reading {len(papers):,} papers of {shown} ...")
    judged = read_judged(reader, papers, source=shown)
    if len(judged) < MIN_JUDGED:
        raise TaggerError(
            f"{shown}: {len(judged)} judged paper{'s' * (len(judged) != 1)}; a fit needs at "
            f"least {MIN_JUDGED} ({MIN_JUDGED - len(judged)} more) to hold some out and still "
            "learn from the rest"
        )
    _check_areas(judged, loaded, shown)
    skip = frozenset(abstract_key(item.paper.abstract) for item in judged)
    if sealed is not None:
        skip |= frozenset(abstract_key(p.abstract) for p in read_papers(sealed))
    index_papers: list[IndexPaper] = []
    if index_paths:
        log(f"reading the papers to find neighbours among ({', '.join(map(str, index_paths))}) ...")
        index_papers = read_index_papers(
            index_paths,
            reader.config,
            taxonomy=taxonomy,
            skip=skip,
            workers=workers or usable_cores(),
            cache=cache,
        )
    about = {"space": space_of(reader.embedder.name), "taxonomy_sha256": loaded.sha256}
    log(f"{len(judged):,} judged papers, {len(index_papers):,} to find neighbours among; "
        f"measuring {folds} folds held out ...")  # fmt: skip
    done = cv.cross_validate(
        judged, index_papers, loaded, settings, about=about, folds=folds, log=log
    )
    curve_points = []
    for threshold in figures.CURVE:
        records = cv.held_out(done, judged, loaded, config, min_score=threshold)
        curve_points.append((threshold, figures.summary(evaluate_judged(records, loaded))))
    records = cv.held_out(done, judged, loaded, config)
    held = evaluate_judged(records, loaded, source=f"{shown}, each fold held out")
    untitled_records = [r for r in records if not r.paper.title]
    untitled = (
        evaluate_judged(untitled_records, loaded, source=f"{figures.UNTITLED}, held out")
        if untitled_records and len(untitled_records) < len(records)
        else None
    )
    order = [i for fold in done for i in fold.test]
    found = [candidates for fold in done for candidates in fold.found]
    from .weighing import candidate_recall

    candidates = (
        candidate_recall(judged, [item.rules for item in judged], loaded),
        candidate_recall([judged[i] for i in order], found, loaded),
    )
    result = Fit(judged, index_papers, done, curve_points, held, untitled, candidates)
    if curve:
        figures.draw({"held out": curve_points}, config.min_score, curve)
    if out is None:
        return result
    log("fitting on every judged paper ...")
    fitted, _ = cv.fit_stages(judged, index_papers, loaded, settings, about)
    fitted_on = {
        "judged": [Path(p).name for p in judged_paths],
        "sha256": [sha256(p) for p in judged_paths],
        "papers": len(judged),
        "index_papers": [Path(p).name for p in index_paths],
    }
    record = save_model(
        Path(out),
        fitted.parts(),
        taxonomy=loaded,
        fitted_on=fitted_on,
        about={
            "space": about["space"],
            "settings": vars(settings),
            "held_out": figures.as_json(figures.summary(held)),
        },
    )
    result.record = record
    if sealed is not None:
        result.sealed = measure(sealed, model=out, taxonomy=taxonomy, config=config)
    return result


def measure(
    path: str | Path,
    *,
    model: str | Path | None = None,
    taxonomy: str | Path | None = None,
    config: TaggerConfig | None = None,
) -> JudgedReport:
    """The judged papers of ``path`` as the model in ``model`` tags them (the shipped one if
    None), measured against their judgments."""
    from dataclasses import replace

    config = replace(config or TaggerConfig(), model=str(model or ""))
    with Tagger.from_taxonomy(taxonomy, config) as tagger:
        papers = list(read_papers(path))
        records: list[TaggedPaper] = []
        for start in range(0, len(papers), config.batch_size):
            records += tagger.tag_batch(papers[start : start + config.batch_size])
        return evaluate_judged(records, tagger.taxonomy, source=f"{Path(path).name}, sealed")


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


def _note(message: str) -> None:
    print(message, file=sys.stderr)
