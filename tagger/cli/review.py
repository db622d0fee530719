"""``tagger review``: judge tagged papers in a browser, each judgment saved as it is made
(corpus.review)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config import REVIEW_ORDER, REVIEW_PORT
from .options import FILE, STOPS, example, tagged_argument, warning


@click.command(
    **example(
        "tagger review examples/tagged/icml2025-abstracts.jsonl --judgments icml2025-judged.jsonl"
    )
)
@tagged_argument
@click.option(
    "--judgments",
    type=FILE,
    required=True,
    metavar="FILE",
    help="Where the judgments go, one line a paper in the judged set's format (judged/README.md); "
    "a file a review wrote is resumed.",
)
@click.option(
    "--order",
    type=click.Choice(["uncertain", "file"]),
    default=REVIEW_ORDER,
    show_default=True,
    help="uncertain: the papers whose scores lie nearest the threshold (--min-score) first; "
    "file: as in FILE.",
)
@click.option(
    "--taxonomy",
    "taxonomy_path",
    type=FILE,
    metavar="FILE",
    help="Taxonomy YAML file, or an overlay of one, to judge against. Default: the one FILE was "
    "tagged with (the packaged taxonomy, or one tagger has tagged with here).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=REVIEW_PORT,
    help="The port to serve on, on 127.0.0.1. Default: a free one.",
)
def review(tagged: str, judgments: Path, order: str, taxonomy_path: Path | None, port: int) -> None:
    """Review tagged papers in a browser and write down what is right: a page on this machine
    (127.0.0.1, at the address the command prints, which carries a secret) shows one paper at a
    time, its evidence highlighted, its tags with their scores
    and supporting papers. Accept or reject each tag, add missing areas, mark the main area, the
    contribution types and notes; every change is written to the --judgments file before the
    page says it is saved, and running the command again goes on where it stopped. Ctrl-C stops.
    FILE is tagged output, or - for stdin."""
    from ..corpus.review import Review

    opened = Review.open(tagged, judgments, taxonomy=taxonomy_path, order=order, warn=warning)
    server = opened.serve(port)
    try:  # a stop from here on, even as the URL is printed, says where the review stands
        done = len(opened.store.done)
        click.echo(
            f"Reviewing {len(opened.papers):,} papers ({done:,} done) against "
            f"{opened.taxonomy.label}; judgments go to {judgments}.\n"
            f"Open {server.url} in a browser. Ctrl-C stops.",
            err=True,
        )
        server.serve_forever()
    except STOPS as stopped:  # Ctrl-C or SIGTERM: where the review stands, not "Terminated."
        server.close()
        done = len(opened.store.done)
        click.echo(
            f"Stopped: {done:,} of {len(opened.papers):,} papers done, every change saved in "
            f"{judgments}; the same command goes on.",
            err=True,
        )
        sys.exit(130 if isinstance(stopped, KeyboardInterrupt) else 143)
    finally:
        server.close()
