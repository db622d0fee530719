"""``tagger stats``: count a tagged corpus by area (corpus.stats)."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import STATS_PAIRS
from .options import (
    Skipped,
    example,
    incomplete_option,
    json_option,
    print_json,
    tagged_argument,
    tagged_records,
    tagged_taxonomy_option,
)


@click.command(
    **example(
        "tagger stats examples/tagged/icml2025-abstracts.jsonl", "tagger stats tagged.jsonl --json"
    )
)
@tagged_argument
@tagged_taxonomy_option
@click.option(
    "--pairs",
    type=click.IntRange(min=0),
    default=STATS_PAIRS,
    show_default=True,
    help="How many of the most frequent area pairs to show.",
)
@json_option
@incomplete_option
def stats(
    tagged: str, taxonomy_path: Path | None, pairs: int, as_json: bool, incomplete: bool
) -> None:
    """Count a tagged corpus by area: the area tree with papers and shares (per venue when
    there are several), the most frequent pairs of top-level areas, and untagged papers.
    FILE is tagged output, or - for stdin."""
    from ..corpus.stats import corpus_stats, render

    skipped = Skipped()
    taxonomy, records = tagged_records(tagged, taxonomy_path, skipped, incomplete)
    result = corpus_stats(records, taxonomy)
    if as_json:
        print_json(result.as_dict(taxonomy, top_pairs=pairs))
    else:
        click.echo(render(result, taxonomy, top_pairs=pairs), nl=False)
    skipped.exit_if_any()
