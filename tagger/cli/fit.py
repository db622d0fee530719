"""``tagger fit``: fit the learned parts of tagging to judged papers, for any taxonomy
(fitting.fit)."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import FIT_WORKERS, FOLDS, TaggerConfig
from .options import FILE, example, note, settings_options, taxonomy_option, workers_option

DIRECTORY = click.Path(file_okay=False, path_type=Path)


@click.command(
    **example(
        "tagger fit --taxonomy examples/iclr-areas.yaml --judged data/iclr2026-dev.jsonl "
        "--labels primary_area -o iclr-model",
    )
)
@taxonomy_option
@click.option(
    "--judged",
    "judged",
    type=click.Path(dir_okay=False, path_type=Path, exists=True),
    multiple=True,
    required=True,
    help="Judged papers (judged/README.md's format, as `tagger review` writes them), or papers "
    "with a field of labels (--labels). Give it again for more files.",
)
@click.option(
    "--labels",
    metavar="FIELD",
    help="Read each paper's areas from this field (a label or a list: area ids or exact names, "
    "the first the main area) instead of a judgment.",
)
@click.option(
    "-o",
    "--output",
    "out",
    type=DIRECTORY,
    help="The model directory to write (tag and retag take it as --model). Without it, the fit "
    "is measured and nothing is written.",
)
@click.option(
    "--papers",
    "index_papers",
    type=click.Path(dir_okay=False, path_type=Path, exists=True),
    multiple=True,
    help="Papers to find neighbours among (any input format; their areas are what the fit's "
    "first stage makes of them). Give it again for more files.",
)
@click.option(
    "--exclude",
    type=click.Path(dir_okay=False, path_type=Path, exists=True),
    multiple=True,
    help="Papers that must reach no part of the fit (a sealed split): left out of --papers.",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=FOLDS,
    show_default=True,
    help="Folds of whole groups (a source's papers) the fit is measured on, each held out.",
)
@click.option("--report", type=FILE, help="Also write the figures here (Markdown).")
@click.option("--curve", type=FILE, help="Also draw the held-out precision-recall curve (PNG).")
@click.option(
    "--cache",
    type=DIRECTORY,
    help="Keep the --papers' readings here, keyed by everything they depend on.",
)
@workers_option(
    "Processes reading --papers, and fitting the folds held out, in parallel (the same model "
    "for any number). Default: one per core this process may use.",
    default=FIT_WORKERS,
)
@settings_options(
    TaggerConfig, "embedding_backend", "top_n", "diversity", "neighbours", "judged_neighbours"
)
def fit(
    taxonomy_path: Path | None,
    judged: tuple[Path, ...],
    labels: str | None,
    out: Path | None,
    index_papers: tuple[Path, ...],
    exclude: tuple[Path, ...],
    folds: int,
    report: Path | None,
    curve: Path | None,
    cache: Path | None,
    workers: int | None,
    config: TaggerConfig,
) -> None:
    """Fit the weigher, the neighbour indexes and the area model to judged papers, for the
    taxonomy given (the packaged one by default), measure the fit on papers it never saw (folds
    of whole groups, each held out in turn from every step), print the figures before and
    after, and write the model to -o DIR."""
    from ..fitting.fit import fit_model
    from ..fitting.modeldir import check_target
    from ..io.files import check_outputs, write_atomic

    if out is not None:
        check_target(out)  # a model's own words first (a directory inside the package ...)
    inputs = [*judged, *index_papers, *exclude, *([taxonomy_path] if taxonomy_path else [])]
    check_outputs({"--report": report, "--curve": curve, "-o": out}, inputs)
    for option, path in (("--report", report), ("--curve", curve)):
        if out is not None and path is not None and out.resolve() in path.resolve().parents:
            raise click.UsageError(
                f"{option} {path} lies inside -o {out}, which the fit replaces whole: write the "
                "figures outside the model's directory"
            )
    title = (
        f"Fit of {taxonomy_path or 'the packaged taxonomy'} on {', '.join(p.name for p in judged)}"
    )
    result = fit_model(
        judged,
        taxonomy=taxonomy_path,
        out=out,
        labels=labels,
        index_paths=index_papers,
        exclude=exclude,
        folds=folds,
        workers=workers,
        cache=cache,
        curve=curve,
        config=config,
    )
    text = result.markdown(title)
    click.echo("\n".join(result.before_and_after()))
    if report:
        write_atomic(report, (text + "\n").encode("utf-8"))  # the old report or the new, whole
        note(f"wrote the figures to {report}")
    if out:
        note(f"wrote the model to {out}: tag with --model {out}")
