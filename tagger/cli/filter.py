"""``tagger filter``: keep the tagged papers in some research areas (corpus.query)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ..config import FILTER_FORMAT, FILTER_MIN_SCORE
from ..corpus.query import FORMATS
from .options import (
    FiniteFloat,
    Skipped,
    example,
    incomplete_option,
    note,
    renamed_option,
    tag_labels_option,
    tagged_argument,
    tagged_lines,
    tagged_taxonomy_option,
)


@click.command(
    name="filter",
    **example(
        "tagger filter examples/tagged/icml2025-abstracts.jsonl --area rl --area llm.agents",
        'tagger filter tagged.jsonl --where "rl and not llm" --venue ICML --output-format titles',
        "tagger filter examples/tagged/icml2025-abstracts.jsonl --area rl --output-format bibtex",
    ),
)
@tagged_argument
@click.option(
    "--area",
    "areas",
    multiple=True,
    metavar="ID",
    help="Keep papers tagged with this area or one below it. Repeat for any of several.",
)
@click.option(
    "--where",
    metavar="EXPR",
    help='A boolean expression over area ids: "graph.gnn or (graph and theory)".',
)
@click.option("--venue", help="Only papers of this venue (case-insensitive).")
@click.option("--year", type=int, help="Only papers of this year.")
@click.option(
    "--min-score",
    type=FiniteFloat(0, 1),
    default=FILTER_MIN_SCORE,
    show_default=True,
    help="Only count tags scoring at least this.",
)
@renamed_option(
    "--output-format",
    "output_format",
    formerly="--format",
    type=click.Choice(FORMATS),
    default=FILTER_FORMAT,
    show_default=True,
    help="What to print for each paper kept. bibtex, ris, csl-json: a library of them, each "
    "paper read from one exactly as it was there (its @string macros first), with its areas in "
    "its tag field (keywords, KW, keyword) as tagger:ID; any other as a minimal entry.",
)
@tag_labels_option
@tagged_taxonomy_option
@incomplete_option
def filter_(
    tagged: str,
    output_format: str,
    tag_labels: str,
    taxonomy_path: Path | None,
    incomplete: bool,
    **criteria: Any,
) -> None:
    """Keep the tagged papers in some research areas. FILE is tagged output, or - for stdin.

    --area (any of) and --where (an expression with and, or, not and parentheses) may be given
    together: a paper must pass both. An area always includes the areas below it. Area ids are
    those of the taxonomy the papers were tagged with (or of --taxonomy).
    """
    from ..corpus.query import QueryError, format_selected, paper_filter

    skipped = Skipped()
    taxonomy, lines = tagged_lines(tagged, taxonomy_path, skipped, incomplete)
    try:
        keep = paper_filter(taxonomy.by_id, **criteria)
    except QueryError as exc:  # the option's value is wrong: a usage error
        raise click.UsageError(str(exc)) from None
    read = kept = 0

    def selected() -> Iterator[Any]:
        nonlocal read, kept
        for line in lines:
            read += 1
            if keep(line.record):
                kept += 1
                yield line

    for output in format_selected(selected(), output_format, labels=tag_labels):
        sys.stdout.buffer.write(output)
    sys.stdout.flush()
    if not kept:  # an empty stdout should not leave the reader guessing whether anything ran
        note(f"no paper matched the filter ({read:,} papers read)")
    skipped.exit_if_any()
