"""``tagger retag``: tag papers again with another taxonomy, from their tagged output (runs.local
over tagging.retag), without the embedding model."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config import RETAG_WORKERS
from .options import (
    errors_option,
    example,
    incomplete_option,
    note,
    output_option,
    progress_option,
    taxonomy_option,
    warning,
    workers_option,
)


@click.command(
    **example("tagger retag tagged.jsonl --taxonomy examples/overlay.yaml -o retagged.jsonl")
)
@click.argument("inputs", nargs=-1, required=True, metavar="TAGGED...")
@output_option("Write JSONL here instead of stdout (-); a name ending in .parquet gets Parquet.")
@taxonomy_option
@workers_option(
    "Processes retagging in parallel. Each starts spaCy and the rules again: one is "
    "faster on a few thousand papers.",
    default=RETAG_WORKERS,
)
@errors_option("Write lines that cannot be retagged here as JSONL (source, line, reason).")
@click.option(
    "--model",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A model directory made by `tagger fit` for --taxonomy. Default: the one the lines "
    "were tagged with.",
)
@incomplete_option
@progress_option
def retag(
    inputs: tuple[str, ...],
    output: Path | None,
    taxonomy_path: Path | None,
    workers: int,
    errors: Path | None,
    model: Path | None,
    incomplete: bool,
    progress: bool,
) -> None:
    """Tag papers again with another taxonomy, from their tagged output, in seconds.

    TAGGED is `tagger tag` output of this version (JSONL, Parquet, a --cluster directory, or -
    for stdin). Each line's keyphrases and paper vector are reused, the embedding model is not
    loaded, and each line written is the one `tagger tag` would write for the paper with
    --taxonomy. Lines that cannot be retagged (another tagger version, other settings than the
    first line) are reported like rejected records; the exit code is then 1.
    """
    from ..runs.local import retag_files
    from ..taxonomy.loading import load_taxonomy

    summary = retag_files(
        load_taxonomy(taxonomy_path),
        inputs,
        output or sys.stdout.buffer,
        model=model,
        errors=errors,
        workers=workers,
        progress=progress,
        warn=warning,
        note=note,
        incomplete=incomplete,
    )
    click.echo(str(summary), err=True)
    if summary.rejected or summary.incomplete:
        sys.exit(1)
