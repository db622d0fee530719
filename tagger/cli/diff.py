"""``tagger diff``: what changed between two taggings of the same papers (corpus.diff)."""

from __future__ import annotations

import sys

import click

from ..config import DIFF_LIMIT
from ..errors import TaggerError
from .options import Skipped, example, json_option, print_json, warning


@click.command(
    name="diff",
    **example(
        "tagger diff tagged.jsonl retagged.jsonl",
        "tagger diff tagged.jsonl retagged.jsonl --json > changes.json",
    ),
)
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=DIFF_LIMIT,
    show_default=True,
    help="Papers to list in the text output (the counts cover all).",
)
@json_option
def diff_(old: str, new: str, limit: int, as_json: bool) -> None:
    """Show what changed between two taggings of the same papers: per area, the papers that
    gained and lost it; per paper, the tags gained, lost and rescored, with the evidence that
    fired or no longer counts. OLD and NEW are tagged output (- for stdin, one of them).

    Exit code 0: no differences in tags or facets; 1: differences; 2: trouble (as diff does).
    """
    from ..corpus.diff import diff_tagged, render

    skipped = Skipped()
    try:
        result = diff_tagged(old, new, skip=skipped)
    except TaggerError as exc:
        for line in str(exc).splitlines():
            click.echo(f"Error: {line}", err=True)
        sys.exit(2)
    if result.shared == 0 and (result.only_old or result.only_new):
        warning(f"{old} and {new} have no paper id in common: are they the same papers?")
    if as_json:
        print_json(result.as_dict())
    else:
        click.echo(render(result, limit=limit), nl=False)
    if skipped.count:  # trouble: the counts miss the lines skipped
        click.echo(f"{skipped.count:,} line{'s' * (skipped.count > 1)} skipped", err=True)
        sys.exit(2)
    sys.exit(1 if result.differs else 0)
