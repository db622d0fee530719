"""``tagger suggest``: how to grow the taxonomy, from the weakly tagged papers of a tagged corpus
(corpus.suggest)."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import SuggestConfig
from .options import (
    Skipped,
    example,
    incomplete_option,
    json_option,
    print_json,
    settings_options,
    tagged_argument,
    tagged_records,
    tagged_taxonomy_option,
)


@click.command(
    **example(
        "tagger suggest tagged.jsonl > suggestions.yaml",
        "tagger suggest tagged.jsonl --overlay > overlay.yaml",
    )
)
@tagged_argument
@tagged_taxonomy_option
@settings_options(SuggestConfig)
@click.option(
    "--overlay",
    is_flag=True,
    help="Print the suggestions as a taxonomy overlay (extending the taxonomy in use), ready "
    "for `tagger retag --taxonomy`.",
)
@json_option
@incomplete_option
def suggest(
    tagged: str,
    taxonomy_path: Path | None,
    as_json: bool,
    overlay: bool,
    incomplete: bool,
    config: SuggestConfig,
) -> None:
    """Suggest how to grow the taxonomy: keyphrases frequent in papers with no tag or only weak
    tags, near-duplicates grouped, proposed as aliases of the area whose aliases they are nearest
    to (by all-MiniLM-L6-v2 embeddings) or as new areas, each with its papers and their count.
    Prints a YAML snippet to merge into the taxonomy, or with --overlay an overlay file to review
    and pass to `tagger retag`. FILE is tagged output, or - for stdin."""
    from ..corpus.suggest import render_overlay, render_yaml
    from ..corpus.suggest import suggest as find_suggestions
    from ..language import embedders
    from ..taxonomy.loading import load_taxonomy

    if overlay and as_json:
        raise click.UsageError("--overlay prints YAML and --json prints JSON: choose one")

    skipped = Skipped()
    taxonomy, records = tagged_records(tagged, taxonomy_path, skipped, incomplete)
    if overlay and taxonomy_path is None and taxonomy.sha256 != load_taxonomy().sha256:
        raise click.UsageError(
            f"--overlay writes an overlay that extends a taxonomy file, and {tagged} was tagged "
            f"with taxonomy version {taxonomy.version}, not the packaged taxonomy: pass the file "
            "of the taxonomy it was tagged with (--taxonomy FILE)"
        )
    result = find_suggestions(
        records,
        taxonomy,
        embedders.make_embedder(),
        config,
        source="stdin" if tagged == "-" else tagged,
    )
    if as_json:
        print_json(result.as_dict())
    elif overlay:
        extends = "builtin" if taxonomy_path is None else str(taxonomy_path.resolve())
        click.echo(render_overlay(result, taxonomy, extends), nl=False)
    else:
        click.echo(render_yaml(result, taxonomy), nl=False)
    skipped.exit_if_any()
