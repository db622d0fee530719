"""``tagger schema``: the JSON Schema of a line of tagged output (records.TaggedPaper)."""

from __future__ import annotations

import click

from .options import example, print_json


@click.command(**example("tagger schema > tagged.schema.json"))
def schema() -> None:
    """Print the JSON Schema of one line of `tagger tag` output."""
    from ..records import TaggedPaper

    print_json(TaggedPaper.model_json_schema())
