"""``tagger tag``: tag papers here (runs.local) or on a Dask cluster (runs.cluster, --cluster).

Which options a run takes depends on where it runs; click checks them, before anything starts,
with the options' types (--cluster's address) and :class:`_Launcher` (what a run here or on a
cluster does not take): a usage error, exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..config import (
    INPUT_FORMAT,
    OUTPUT_FORMAT,
    PART_FORMAT,
    PARTITION_SIZE,
    TAG_WORKERS,
    TaggerConfig,
)
from ..io.files import is_stdio
from ..io.formats import FORMATS, LIBRARY_FORMATS, OUTPUT_FORMATS, is_library, output_format
from ..records import FIRST_YEAR, LAST_YEAR
from .options import (
    errors_option,
    example,
    given,
    note,
    output_option,
    progress_option,
    renamed_option,
    settings_options,
    tag_labels_option,
    taxonomy_option,
    top_option,
    warning,
    workers_option,
)

# The options of a local run, and why a run on a cluster does not take them.
LOCAL = {
    "errors": "--cluster writes each partition's rejected records beside its part "
    "(part-NNNNN.errors.jsonl); --errors is for a local run",
    "workers": "--cluster runs on the cluster's workers; --workers is for a local run",
    "venue": "--venue is for a local run; give each paper its venue in the files to tag on a "
    "cluster",
    "year": "--year is for a local run; give each paper its year in the files to tag on a cluster",
}
# The options of a run on a cluster, which a local run does not take.
CLUSTER = {"partition_size": "--partition-size", "part_format": "--part-format"}


class ClusterAddress(click.ParamType):
    """--cluster: ``local``, ``local:N`` or a scheduler's address; a malformed one is a usage
    error (runs.connection.parse_address says what is wrong with it)."""

    name = "address"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..runs.connection import parse_address

        try:
            return parse_address(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class PaperVenue(click.ParamType):
    """--venue: a line of text (io.readers.check_given says what else is refused)."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..io.readers import check_given

        try:
            return check_given(value, None)["venue"]
        except ValueError as exc:
            self.fail(str(exc).replace("The 'venue' parameter must", "It must"), param, ctx)


class _Launcher(click.Command):
    """A command whose options are checked together once parsed: a run on a cluster (--cluster)
    and a local run each refuse what the other takes, and what it cannot write to."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        if not ctx.resilient_parsing:
            _check_run(ctx)
        return rest


def _check_run(ctx: click.Context) -> None:
    output, inputs = ctx.params["output"], ctx.params["inputs"]
    if ctx.params["cluster"] is not None:
        if output is None or is_stdio(output):
            raise click.UsageError("--cluster needs -o DIRECTORY: where the part files go", ctx)
        for name, why in LOCAL.items():
            if given(name, ctx):
                raise click.UsageError(why, ctx)
        if "-" in inputs:
            raise click.UsageError("--cluster reads files (or globs), not stdin", ctx)
        given_format = ctx.params["output_format"]
        if is_library(output_format(output, None if given_format == "auto" else given_format)):
            raise click.UsageError(
                "--cluster writes part files (--part-format); write a library back with a "
                "local run, or with `tagger filter` from the parts",
                ctx,
            )
        return
    for name, option in CLUSTER.items():
        if given(name, ctx):
            raise click.UsageError(f"{option} is for a run on a cluster: give --cluster too", ctx)
    if ctx.params["resume"] and (output is None or is_stdio(output)):
        raise click.UsageError("--resume needs -o FILE: the output of the run to continue", ctx)
    given_format = ctx.params["output_format"]
    written = output_format(output, None if given_format == "auto" else given_format)
    if written in LIBRARY_FORMATS and ctx.params["resume"]:
        raise click.UsageError(
            f"--resume continues JSONL output; a {written} library is written whole at the end: "
            "run it again",
            ctx,
        )
    if written == "parquet" and (output is None or is_stdio(output)):
        raise click.UsageError("--output-format parquet needs -o FILE: Parquet is no stream", ctx)
    if output is not None and output.is_dir():
        raise click.UsageError(
            f"-o {output} is a directory: name a file (or tag with --cluster)", ctx
        )


@click.command(
    cls=_Launcher,
    **example(
        "tagger tag examples/icml2025-abstracts.txt -o tagged.jsonl",
        "tagger tag examples/library.bib --output-format bibtex",
    ),
)
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@output_option(
    "Write JSONL here instead of stdout (-); a name ending in .parquet gets Parquet; with "
    "--cluster, a directory.",
    directory=True,
)
@click.option(
    "--output-format",
    type=click.Choice(["auto", *OUTPUT_FORMATS]),
    default=OUTPUT_FORMAT,
    show_default=True,
    help="auto: by -o's name (.parquet: Parquet; .bib: BibTeX; .ris: RIS), else JSONL. bibtex, "
    "ris or csl-json write each input library back whole, as it was, with each tagged entry's "
    "areas (those tagger lists) in the field the manager reads (keywords, KW, keyword) as "
    "tagger:ID; the user's keywords are kept, tagger's earlier ones replaced.",
)
@tag_labels_option
@renamed_option(
    "--input-format",
    "input_format",
    formerly="--format",
    default=INPUT_FORMAT,
    show_default=True,
    type=click.Choice(["auto", *FORMATS]),
    help="Input format; auto guesses from the file.",
)
@click.option(
    "--venue",
    type=PaperVenue(),
    help="The venue of the papers that do not give one (nor have it from a paper list's "
    "header): as if their records said so.",
)
@click.option(
    "--year",
    type=click.IntRange(FIRST_YEAR, LAST_YEAR),
    help="The year of the papers that do not give one, likewise.",
)
@taxonomy_option
@settings_options(
    TaggerConfig,
    "top_n",
    "diversity",
    "min_score",
    "max_tags",
    "batch_size",
    "embedding_backend",
    "model",
)
@top_option
@workers_option(
    "Processes tagging in parallel; output is identical for any number. Default: one per "
    "core this process may use (input that fits in one batch is tagged in this process).",
    default=TAG_WORKERS,
)
@errors_option("Write rejected records here as JSONL (source, line, reason).")
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted run: keep the complete lines of -o FILE, tag the rest.",
)
@progress_option
@click.option(
    "--cluster",
    metavar="ADDRESS",
    type=ClusterAddress(),
    help="Tag on a Dask cluster: a scheduler's address (tcp://host:8786), or local / local:N "
    "for a LocalCluster of N worker processes here. -o names a directory: one part file per "
    "partition, errors beside each, and manifest.json.",
)
@click.option(
    "--partition-size",
    type=click.IntRange(min=1),
    default=PARTITION_SIZE,
    show_default=True,
    help="With --cluster: records per partition, at most.",
)
@click.option(
    "--part-format",
    type=click.Choice(["jsonl", "parquet"]),
    default=PART_FORMAT,
    show_default=True,
    help="With --cluster: the parts' format.",
)
def tag(
    inputs: tuple[str, ...],
    output: Path | None,
    taxonomy_path: Path | None,
    config: TaggerConfig,
    input_format: str,
    progress: bool,
    cluster: str | None,
    partition_size: int,
    part_format: str,
    **run: Any,
) -> None:
    """Tag papers: one JSONL line per input paper, in input order.

    INPUT is a paper file (paper-list text, JSONL, JSON array, CSV or Parquet, or a library:
    BibTeX .bib, RIS .ris, CSL JSON), a directory (the paper files in it, by name), or - for
    stdin; a file that is none of these formats by name
    and content (README.md, a taxonomy) is refused unless --input-format names one. Records
    that cannot be read are reported on stderr (and in --errors FILE) and the run goes on; the
    exit code is then 1. Output is written line by line: after a crash or Ctrl-C, the same
    command with --resume finishes the file as one uninterrupted run would have written it.
    """
    from ..tagging.pipeline import Tagger

    tagger = Tagger.from_taxonomy(taxonomy_path, config)
    format = None if input_format == "auto" else input_format
    written = run.pop("output_format")
    if cluster is None:
        run["output_format"] = None if written == "auto" else written
        summary = _here(tagger, inputs, output, format=format, progress=progress, **run)
    else:  # -o names the directory of the parts
        from ..runs.cluster import tag_on_cluster

        summary = tag_on_cluster(
            tagger,
            inputs,
            output,
            cluster=cluster,
            format=format,
            resume=run["resume"],
            part_format=part_format,
            size=partition_size,
            progress=progress,
            warn=warning,
            note=note,
        )
    click.echo(str(summary), err=True)
    if summary.rejected:
        sys.exit(1)


def _here(tagger: Any, inputs: tuple[str, ...], output: Path | None, **run: Any) -> Any:
    """A local run (runs.local), in this process or in worker processes it starts."""
    from ..language import embedders
    from ..runs.local import tag_files

    with tagger:
        if embedders.export_pending(tagger.embedder):
            note(embedders.export_note(tagger.embedder))
        return tag_files(
            tagger, inputs, output or sys.stdout.buffer, warn=warning, note=note, **run
        )
