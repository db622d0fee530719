"""``tagger report``: one self-contained HTML page about a tagged corpus (corpus.report)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import TaggerError
from ..io.files import is_stdio
from .options import (
    Skipped,
    example,
    incomplete_option,
    output_option,
    tagged_argument,
    tagged_records,
    tagged_taxonomy_option,
)


@click.command(**example("tagger report examples/tagged/icml2025-abstracts.jsonl -o report.html"))
@tagged_argument
@output_option("Write the page here instead of stdout (-).")
@click.option("--title", help="The page's title. Default: from FILE's name.")
@tagged_taxonomy_option
@incomplete_option
def report(
    tagged: str,
    output: Path | None,
    title: str | None,
    taxonomy_path: Path | None,
    incomplete: bool,
) -> None:
    """Write one self-contained HTML page about a tagged corpus: papers per area (the tree), a
    heatmap of top-level areas tagged together, the top keyphrases per area, and a searchable,
    filterable paper list with each tag's evidence highlighted. Opens without a network.
    FILE is tagged output, or - for stdin."""
    from ..corpus.report import build_report, render_html
    from ..io.files import STDIO, check_outputs, open_output

    check_outputs({"-o": output or STDIO}, [tagged])
    name = "stdin" if tagged == "-" else Path(tagged).name
    skipped = Skipped()
    taxonomy, records = tagged_records(tagged, taxonomy_path, skipped, incomplete, stdout=False)
    data = build_report(records, taxonomy, source=name)
    page = render_html(data, title=title or f"Tagged papers: {name}")
    if output is None or is_stdio(output):
        click.echo(page, nl=False)
    else:
        with open_output(output) as handle:
            try:
                handle.write(page.encode())
            except OSError as exc:
                raise TaggerError(f"{output}: cannot write the report: {exc.strerror}") from None
        click.echo(
            f"{output}: {data['papers_total']:,} papers, {len(data['areas'])} areas", err=True
        )
    skipped.exit_if_any()
