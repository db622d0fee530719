"""``tagger eval``: measure tagging, in one of two ways: tags against authors' labels and
keyphrases against their keywords (--scheme, corpus.evaluate), or tags and keyphrases against a
judged set (--judged, corpus.judged). The library decides what the figures mean (in sample or
not); this prints them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..config import GOLD_FIELD, TaggerConfig
from ..taxonomy.schemes import schemes
from .options import (
    FILE,
    Skipped,
    example,
    json_option,
    note,
    print_json,
    progress_option,
    settings_options,
    taxonomy_option,
    top_option,
)


@click.command(
    name="eval",
    **example(
        "tagger eval data/iclr2026-dev.jsonl --gold-field primary_area --scheme iclr",
        "tagger eval --judged judged/judged.jsonl",
        "tagger eval --judged judged/keyphrases.jsonl",
    ),
)
@click.argument("papers", metavar="[FILE]", required=False)
@click.option(
    "--gold-field",
    default=GOLD_FIELD,
    show_default=True,
    help="The field of each paper that holds the author's label.",
)
@click.option(
    "--scheme",
    type=click.Choice(list(schemes())),
    help="Which crosswalk of the taxonomy the labels are in.",
)
@click.option(
    "--judged",
    type=FILE,
    help="A judged set (judged/judged.jsonl, judged/keyphrases.jsonl): measure each tag, and "
    "the first five keyphrases, against the judgments. Without FILE, its own papers are tagged.",
)
@taxonomy_option
@click.option(
    "--references",
    is_flag=True,
    help="Also score YAKE and plain KeyBERT keyphrases on the same papers (slow).",
)
@click.option(
    "--save-tagged",
    type=FILE,
    help="Also write the tagged papers here, to evaluate again without tagging.",
)
@settings_options(TaggerConfig, "model")
@top_option
@json_option
@progress_option
def eval_(
    papers: str | None,
    judged: Path | None,
    taxonomy_path: Path | None,
    as_json: bool,
    scheme: str | None,
    progress: bool,
    config: TaggerConfig,
    **options: Any,
) -> None:
    """Measure tags against authors' labels (--scheme) and keyphrases against authors'
    keywords, or tags against a judged set (--judged).

    FILE holds labelled papers (any input format: they are tagged first) or the output of
    `tagger tag` (evaluated as it is); - reads stdin.
    """
    from ..tagging.pipeline import Tagger

    if judged is None and (papers is None or scheme is None):
        raise click.UsageError("give FILE and --scheme, or --judged JUDGED")
    if judged is not None and scheme is not None:
        raise click.UsageError("--judged measures tags against judgments, not a --scheme")
    skipped = Skipped()
    with Tagger.from_taxonomy(taxonomy_path, config) as tagger:
        if judged is None:
            text, data = _against_labels(papers, tagger, scheme, skipped, progress, **options)
        else:
            text, data = _against_judgments(
                papers, judged, tagger, skipped, progress, options["save_tagged"]
            )
    if as_json:
        print_json(data)
    else:
        click.echo(text, nl=False)
    skipped.exit_if_any()


def _against_labels(
    papers: str, tagger: Any, scheme: str, skipped: Skipped, progress: bool, **options: Any
) -> tuple[str, dict[str, Any]]:
    """--scheme: the tags against the authors' labels, the keyphrases against their keywords."""
    from ..corpus.evaluate import evaluate_file, render

    result = evaluate_file(
        papers, tagger, scheme=scheme, skip=skipped, progress=progress, **options
    )
    return render(result), result.as_dict()


def _against_judgments(
    papers: str | None,
    judged: Path,
    tagger: Any,
    skipped: Skipped,
    progress: bool,
    save_tagged: Path | None,
) -> tuple[str, dict[str, Any]]:
    """--judged: the tags and keyphrases of the judged papers (or of FILE's papers that are
    judged there) against the judgments."""
    from ..corpus.evaluate import papers_of, tagged_records
    from ..corpus.judged import evaluate_judged, judgments_of, render_judged

    judgments = None
    if papers is not None:  # the judgments first: a file of none fails before tagging
        judgments = judgments_of(papers_of(judged, skip=skipped), str(judged))
    records, _ = tagged_records(
        papers or judged, tagger, save_tagged=save_tagged, skip=skipped, progress=progress
    )
    report = evaluate_judged(
        records,
        tagger.taxonomy,
        source=str(papers or judged),
        judgments=judgments,
        judged_source=str(judged),
        tagger=tagger,
    )
    if judgments is not None:
        note(
            f"{report.matched:,} of the {report.records:,} papers of {papers} have a "
            f"judgment in {judged} ({len(judgments):,} papers judged, matched by id)"
        )
    return render_judged(report), report.as_dict()
