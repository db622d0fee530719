"""The ``tagger`` command line: it parses options, calls the library and prints. Data goes to
stdout and only data; messages go to stderr.

Exit codes: 0 success, 1 an error (or, for ``tag``, some records were rejected), 2 a usage error,
130 interrupted.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from .config import Settings, SuggestConfig, TaggerConfig
from .corpus.query import FORMATS
from .errors import InputError, TaggerError
from .io.files import is_stdio
from .io.formats import FORMATS as READ_FORMATS
from .taxonomy.schemes import schemes

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
FILE = click.Path(dir_okay=False, path_type=Path)
OUTPUT = click.Path(dir_okay=False, path_type=Path, allow_dash=True)  # "-": stdout


class _Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C, so that files close and workers stop."""


class _Commands(click.Group):
    """The command group: a TaggerError becomes 'Error: ...' on stderr and exit code 1, as does
    an output that cannot be written (a full disk); Ctrl-C ends with exit code 130, SIGTERM
    with 143, both after closing what was open; a closed stdout (`tagger ... | head`) is a quiet
    end. For every command."""

    def invoke(self, ctx: click.Context) -> Any:
        signal.signal(signal.SIGTERM, _terminate)
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()
            return result
        except BrokenPipeError:
            sys.stderr.close()  # the reader left, nothing is wrong
            sys.exit(0)
        except (TaggerError, OSError) as exc:
            _let_stdout_go()
            message = str(exc) if isinstance(exc, TaggerError) else _os_error(exc)
            for line in message.splitlines():
                click.echo(f"Error: {line}", err=True)
            sys.exit(1)
        except (KeyboardInterrupt, _Terminated) as exc:
            what = "Interrupted" if isinstance(exc, KeyboardInterrupt) else "Terminated"
            click.echo(
                f"{what}. Lines already written are complete; `tagger tag ... -o FILE --resume` "
                "continues a run.",
                err=True,
            )
            sys.exit(130 if isinstance(exc, KeyboardInterrupt) else 143)


def _terminate(signum: int, frame: Any) -> None:
    raise _Terminated


def _os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else "cannot write the output: "
    return f"{where}{exc.strerror or exc}"


def _let_stdout_go() -> None:
    """After a failed write to stdout, send what is left there to /dev/null, so that Python's
    last flush at exit does not fail again with a traceback."""
    try:
        sys.stdout.flush()
    except OSError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class _Skipped:
    """Lines of a tagged file that are not tagged output: each warned of, the rest read; and,
    with --incomplete, a part directory read without what is missing or changed in it: warned
    of. Any of them make the exit code 1."""

    def __init__(self) -> None:
        self.count = 0
        self.partial = 0

    def __call__(self, error: InputError) -> None:
        self.count += 1
        _warning(f"skipped {error}")

    def incomplete(self, error: InputError) -> None:
        self.partial += 1
        _warning(str(error))

    def exit_if_any(self) -> None:
        if self.count:
            click.echo(f"{self.count:,} line{'s' * (self.count > 1)} skipped", err=True)
        if self.partial:
            click.echo("read an incomplete part directory (--incomplete)", err=True)
        if self.count or self.partial:
            sys.exit(1)


def _tagged_lines(
    tagged: str, taxonomy: Any, skipped: _Skipped, incomplete: bool = False, stdout: bool = True
) -> Iterator[Any]:
    """The lines of a tagged file, bad lines skipped, with a warning if they were tagged with
    another taxonomy than the one in use, and if a paper id comes twice; standard output, where
    the command writes (``stdout``), must not be the file or lie inside it."""
    from .io.files import STDIO, check_outputs
    from .io.tagged import read_tagged_lines, repeated_ids, same_taxonomy

    check_outputs({"the output": STDIO if stdout else None}, [tagged])
    lines = read_tagged_lines(
        tagged, skip=skipped, incomplete=skipped.incomplete if incomplete else None
    )
    return repeated_ids(same_taxonomy(lines, taxonomy, _warning, tagged), _warning, tagged)


def _tagged_records(
    tagged: str, taxonomy: Any, skipped: _Skipped, incomplete: bool = False, stdout: bool = True
) -> Iterator[Any]:
    """The records of :func:`_tagged_lines`."""
    lines = _tagged_lines(tagged, taxonomy, skipped, incomplete, stdout)
    return (line.record for line in lines)


def _example(*commands: str) -> dict[str, str]:
    """A help epilog: the runnable example every command's help ends with."""
    return {"epilog": "\b\nExample:\n" + "\n".join(f"  {command}" for command in commands)}


def settings_options(settings: type[Settings], *names: str) -> Decorator:
    """An option for each named setting (all by default), with its default, range and help; the
    command receives them together as ``config``, a ``settings`` object."""
    defaults = settings()
    fields = [settings.field(name) for name in names] or dataclasses.fields(settings)

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def with_config(*args: Any, **kwargs: Any) -> Any:
            values = {field.name: kwargs.pop(field.name) for field in fields}
            return command(*args, config=settings(**values), **kwargs)

        for field in reversed(fields):
            low, high = field.metadata["minimum"], field.metadata["maximum"]
            if field.metadata["choices"]:
                kind = click.Choice(field.metadata["choices"])
            elif field.type == "int":
                kind = click.IntRange(low, high)
            else:
                kind = click.FloatRange(low, high)
            name = f"--{field.name.replace('_', '-')}"
            default, help = getattr(defaults, field.name), field.metadata["help"]
            with_config = click.option(
                name, field.name, type=kind, default=default, show_default=True, help=help
            )(with_config)
        return with_config

    return decorate


def _taxonomy_in_use(ctx: click.Context, param: click.Parameter, value: Path | None) -> Any:
    """--taxonomy, and a warning when the taxonomy.yaml of the working directory is not the
    one in use: editing it does nothing until it is passed."""
    from .taxonomy.loading import ignored_local_taxonomy

    here = ignored_local_taxonomy(value)
    if here is not None:
        _warning(
            f"{here} here is not the taxonomy in use: without --taxonomy, tagger reads the "
            f"packaged taxonomy, and {here} differs from it. To use it, pass --taxonomy {here}; "
            "to change the taxonomy, write an overlay that says what changes "
            "(`extends: builtin`, README: Overlays) and pass that"
        )
    return value


taxonomy_option = click.option(
    "--taxonomy",
    "taxonomy_path",
    type=FILE,
    metavar="FILE",
    callback=_taxonomy_in_use,
    help="Taxonomy YAML file, or an overlay of one. Default: the taxonomy packaged with tagger.",
)
tagged_argument = click.argument("tagged", metavar="FILE")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
incomplete_option = click.option(
    "--incomplete",
    is_flag=True,
    help="Read a part directory (`tagger tag --cluster`) whose run has not finished, or whose "
    "parts are missing or changed: its intact parts, with a warning; the exit code is then 1.",
)
progress_option = click.option(
    "--progress/--no-progress",
    default=None,
    help="A progress bar on stderr: papers done of how many, and the time left. Default: when "
    "stderr is a terminal.",
)


def _print_json(data: Any) -> None:
    import orjson

    click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())


def _warning(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


def _note(message: str) -> None:
    click.echo(f"Note: {message}", err=True)


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"]},
    **_example(
        "tagger tag examples/icml2025-abstracts.txt -o tagged.jsonl",
        "tagger filter tagged.jsonl --area rl",
    ),
)
@click.version_option(package_name="tagger")
def main() -> None:
    """Tag research papers with keyphrases and research areas.

    Reads paper lists (the plain-text format, JSONL, JSON, CSV), extracts keyphrases with KeyBERT,
    maps them onto a YAML taxonomy and writes tagged JSONL.
    """


@main.command(**_example("tagger tag examples/icml2025-abstracts.txt -o tagged.jsonl"))
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, allow_dash=True),
    help="Write JSONL here instead of stdout (-); a name ending in .parquet gets Parquet; with "
    "--cluster, a directory.",
)
@click.option(
    "--format",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", *READ_FORMATS]),
    help="Input format; auto guesses from the file.",
)
@taxonomy_option
@settings_options(
    TaggerConfig, "top_n", "diversity", "min_score", "max_tags", "batch_size", "embedding_backend"
)
@click.option(
    "-w",
    "--workers",
    type=click.IntRange(min=1),
    help="Processes tagging in parallel; output is identical for any number. Default: one per "
    "core this process may use (input that fits in one batch is tagged in this process).",
)
@click.option(
    "--errors", type=FILE, help="Write rejected records here as JSONL (source, line, reason)."
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted run: keep the complete lines of -o FILE, tag the rest.",
)
@progress_option
@click.option(
    "--cluster",
    metavar="ADDRESS",
    callback=lambda ctx, param, value: _cluster_address(value),
    help="Tag on a Dask cluster: a scheduler's address (tcp://host:8786), or local / local:N "
    "for a LocalCluster of N worker processes here. -o names a directory: one part file per "
    "partition, errors beside each, and manifest.json.",
)
@click.option(
    "--partition-size",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="With --cluster: records per partition, at most.",
)
@click.option(
    "--part-format",
    type=click.Choice(["jsonl", "parquet"]),
    default="jsonl",
    show_default=True,
    help="With --cluster: the parts' format.",
)
def tag(
    inputs: tuple[str, ...],
    output: Path | None,
    taxonomy_path: Path | None,
    config: TaggerConfig,
    format: str,
    progress: bool | None,
    **run: Any,
) -> None:
    """Tag papers: one JSONL line per input paper, in input order.

    INPUT is a paper file (paper-list text, JSONL, JSON array, CSV or Parquet), a directory (the
    paper files in it, by name), or - for stdin; a file that is none of these formats by name
    and content (README.md, a taxonomy) is refused unless --format names one. Records
    that cannot be read are reported on stderr (and in --errors FILE) and the run goes on; the
    exit code is then 1. Output is written line by line: after a crash or Ctrl-C, the same
    command with --resume finishes the file as one uninterrupted run would have written it.
    """
    from .language import embedders
    from .runs.local import tag_files
    from .tagging.pipeline import Tagger

    cluster, size, part_format = (
        run.pop("cluster"),
        run.pop("partition_size"),
        run.pop("part_format"),
    )
    if cluster is not None:
        return _tag_on_cluster(
            inputs, output, taxonomy_path, config, format, progress, cluster, size, part_format, run
        )
    if run["resume"] and (output is None or is_stdio(output)):
        raise click.UsageError("--resume needs -o FILE: the output of the run to continue")
    if output is not None and output.is_dir():
        raise click.UsageError(f"-o {output} is a directory: name a file (or tag with --cluster)")
    with Tagger.from_taxonomy(taxonomy_path, config) as tagger:
        if embedders.export_pending(tagger.embedder):
            _note(embedders.export_note(tagger.embedder))
        summary = tag_files(
            tagger,
            inputs,
            output or sys.stdout.buffer,
            warn=_warning,
            note=_note,
            format=None if format == "auto" else format,
            progress=sys.stderr.isatty() if progress is None else progress,
            **run,
        )
    click.echo(str(summary), err=True)
    if summary.rejected:
        sys.exit(1)


@main.command(
    **_example(
        "tagger retag tagged.jsonl --taxonomy examples/overlay.yaml -o retagged.jsonl",
    )
)
@click.argument("inputs", nargs=-1, required=True, metavar="TAGGED...")
@click.option(
    "-o",
    "--output",
    type=OUTPUT,
    help="Write JSONL here instead of stdout (-); a name ending in .parquet gets Parquet.",
)
@taxonomy_option
@click.option(
    "-w",
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes retagging in parallel. Each starts spaCy and the rules again: one is "
    "faster on a few thousand papers.",
)
@click.option(
    "--errors",
    type=FILE,
    help="Write lines that cannot be retagged here as JSONL (source, line, reason).",
)
@incomplete_option
@progress_option
def retag(
    inputs: tuple[str, ...],
    output: Path | None,
    taxonomy_path: Path | None,
    workers: int,
    errors: Path | None,
    incomplete: bool,
    progress: bool | None,
) -> None:
    """Tag papers again with another taxonomy, from their tagged output, in seconds.

    TAGGED is `tagger tag` output of this version (JSONL, Parquet, a --cluster directory, or -
    for stdin). Each line's keyphrases and paper vector are reused, the embedding model is not
    loaded, and each line written is the one `tagger tag` would write for the paper with
    --taxonomy. Lines that cannot be retagged (another tagger version, other settings than the
    first line) are reported like rejected records; the exit code is then 1.
    """
    from .runs.local import retag_files
    from .taxonomy.loading import load_taxonomy

    summary = retag_files(
        load_taxonomy(taxonomy_path),
        inputs,
        output or sys.stdout.buffer,
        errors=errors,
        workers=workers,
        progress=sys.stderr.isatty() if progress is None else progress,
        warn=_warning,
        note=_note,
        incomplete=incomplete,
    )
    click.echo(str(summary), err=True)
    if summary.rejected or summary.incomplete:
        sys.exit(1)


def _cluster_address(value: str | None) -> str | None:
    """--cluster checked before anything starts: a malformed address is a usage error."""
    from .runs.connection import parse_address

    try:
        return None if value is None else parse_address(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--cluster'") from None


def _tag_on_cluster(
    inputs: tuple[str, ...],
    output: Path | None,
    taxonomy_path: Path | None,
    config: TaggerConfig,
    format: str,
    progress: bool | None,
    cluster: str,
    size: int,
    part_format: str,
    run: dict[str, Any],
) -> None:
    from .runs.cluster import tag_on_cluster
    from .tagging.pipeline import Tagger

    if output is None or is_stdio(output):
        raise click.UsageError("--cluster needs -o DIRECTORY: where the part files go")
    if run["errors"] is not None:
        raise click.UsageError(
            "--cluster writes each partition's rejected records beside its part "
            "(part-NNNNN.errors.jsonl); --errors is for a local run"
        )
    if run["workers"] is not None:
        raise click.UsageError(
            "--cluster runs on the cluster's workers; --workers is for a local run"
        )
    if "-" in inputs:
        raise click.UsageError("--cluster reads files (or globs), not stdin")
    tagger = Tagger.from_taxonomy(taxonomy_path, config)
    summary = tag_on_cluster(
        tagger,
        inputs,
        output,
        cluster=cluster,
        format=None if format == "auto" else format,
        resume=run["resume"],
        part_format=part_format,
        size=size,
        progress=sys.stderr.isatty() if progress is None else progress,
        warn=_warning,
        note=_note,
    )
    click.echo(str(summary), err=True)
    if summary.rejected:
        sys.exit(1)


@main.command(
    name="filter",
    **_example(
        "tagger filter examples/tagged/icml2025-abstracts.jsonl --area rl --area llm.agents",
        'tagger filter tagged.jsonl --where "rl and not llm" --venue ICML --format titles',
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
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Only count tags scoring at least this.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="jsonl",
    show_default=True,
    help="What to print for each paper kept.",
)
@taxonomy_option
@incomplete_option
def filter_(
    tagged: str, output_format: str, taxonomy_path: Path | None, incomplete: bool, **criteria: Any
) -> None:
    """Keep the tagged papers in some research areas. FILE is tagged output, or - for stdin.

    --area (any of) and --where (an expression with and, or, not and parentheses) may be given
    together: a paper must pass both. An area always includes the areas below it.
    """
    from .corpus.query import QueryError, format_selected, paper_filter
    from .taxonomy.loading import load_taxonomy

    taxonomy, skipped = load_taxonomy(taxonomy_path), _Skipped()
    try:
        keep = paper_filter(taxonomy.by_id, **criteria)
    except QueryError as exc:  # the option's value is wrong: a usage error
        raise click.UsageError(str(exc)) from None
    lines = _tagged_lines(tagged, taxonomy, skipped, incomplete)
    kept = (line for line in lines if keep(line.record))
    for output in format_selected(kept, output_format):
        sys.stdout.buffer.write(output)
    sys.stdout.flush()
    skipped.exit_if_any()


@main.command(
    **_example(
        "tagger stats examples/tagged/icml2025-abstracts.jsonl", "tagger stats tagged.jsonl --json"
    )
)
@tagged_argument
@taxonomy_option
@click.option(
    "--pairs",
    type=click.IntRange(min=0),
    default=10,
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
    from .corpus.stats import corpus_stats, render
    from .taxonomy.loading import load_taxonomy

    taxonomy, skipped = load_taxonomy(taxonomy_path), _Skipped()
    result = corpus_stats(_tagged_records(tagged, taxonomy, skipped, incomplete), taxonomy)
    if as_json:
        _print_json(result.as_dict(taxonomy, top_pairs=pairs))
    else:
        click.echo(render(result, taxonomy, top_pairs=pairs), nl=False)
    skipped.exit_if_any()


@main.command(**_example("tagger report examples/tagged/icml2025-abstracts.jsonl -o report.html"))
@tagged_argument
@click.option("-o", "--output", type=OUTPUT, help="Write the page here instead of stdout (-).")
@click.option("--title", help="The page's title. Default: from FILE's name.")
@taxonomy_option
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
    from .corpus.report import build_report, render_html
    from .io.files import STDIO, check_outputs, open_output
    from .taxonomy.loading import load_taxonomy

    check_outputs({"-o": output or STDIO}, [tagged])
    name = "stdin" if tagged == "-" else Path(tagged).name
    taxonomy, skipped = load_taxonomy(taxonomy_path), _Skipped()
    records = _tagged_records(tagged, taxonomy, skipped, incomplete, stdout=False)
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


@main.command(
    **_example(
        "tagger suggest tagged.jsonl > suggestions.yaml",
        "tagger suggest tagged.jsonl --overlay > overlay.yaml",
    )
)
@tagged_argument
@taxonomy_option
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
    from .corpus.suggest import render_overlay, render_yaml
    from .corpus.suggest import suggest as find_suggestions
    from .language import embedders
    from .taxonomy.loading import load_taxonomy

    if overlay and as_json:
        raise click.UsageError("--overlay prints YAML and --json prints JSON: choose one")

    taxonomy, skipped = load_taxonomy(taxonomy_path), _Skipped()
    result = find_suggestions(
        _tagged_records(tagged, taxonomy, skipped, incomplete),
        taxonomy,
        embedders.make_embedder(),
        config,
        source="stdin" if tagged == "-" else tagged,
    )
    if as_json:
        _print_json(result.as_dict())
    elif overlay:
        extends = "builtin" if taxonomy_path is None else str(taxonomy_path.resolve())
        click.echo(render_overlay(result, taxonomy, extends), nl=False)
    else:
        click.echo(render_yaml(result, taxonomy), nl=False)
    skipped.exit_if_any()


@main.command(
    name="diff",
    **_example(
        "tagger diff tagged.jsonl retagged.jsonl",
        "tagger diff tagged.jsonl retagged.jsonl --json > changes.json",
    ),
)
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=20,
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
    from .corpus.diff import diff_tagged, render

    skipped = _Skipped()
    try:
        result = diff_tagged(old, new, skip=skipped)
    except TaggerError as exc:
        for line in str(exc).splitlines():
            click.echo(f"Error: {line}", err=True)
        sys.exit(2)
    if result.shared == 0 and (result.only_old or result.only_new):
        _warning(f"{old} and {new} have no paper id in common: are they the same papers?")
    if as_json:
        _print_json(result.as_dict())
    else:
        click.echo(render(result, limit=limit), nl=False)
    if skipped.count:  # trouble: the counts miss the lines skipped
        click.echo(f"{skipped.count:,} line{'s' * (skipped.count > 1)} skipped", err=True)
        sys.exit(2)
    sys.exit(1 if result.differs else 0)


@main.command(**_example("tagger schema > tagged.schema.json"))
def schema() -> None:
    """Print the JSON Schema of one line of `tagger tag` output."""
    from .records import TaggedPaper

    _print_json(TaggedPaper.model_json_schema())


@main.group(**_example("tagger taxonomy check"))
def taxonomy() -> None:
    """Work with taxonomy files: check one, lint it, or show the taxonomy an overlay makes."""


@taxonomy.command(**_example("tagger taxonomy check --taxonomy examples/overlay.yaml"))
@taxonomy_option
def check(taxonomy_path: Path | None) -> None:
    """Validate a taxonomy and print its tree of areas with their rule counts."""
    from .taxonomy.loading import load_taxonomy

    loaded = load_taxonomy(taxonomy_path)
    click.echo(loaded.render_tree(), nl=False)
    click.echo(f"{loaded.summary()}: OK", err=True)


@taxonomy.command(
    **_example(
        "tagger taxonomy show --taxonomy examples/overlay.yaml > effective.yaml",
        "tagger taxonomy show --taxonomy examples/overlay.yaml --json | sha256sum",
    )
)
@taxonomy_option
@json_option
def show(taxonomy_path: Path | None, as_json: bool) -> None:
    """Print the effective taxonomy: an overlay applied to what it extends, as one YAML file
    that loads to the same taxonomy. --json prints the one line of JSON whose sha256 tagged
    lines record as their taxonomy's (provenance.taxonomy_sha256)."""
    from .taxonomy.loading import load_taxonomy

    loaded = load_taxonomy(taxonomy_path)
    if as_json:
        sys.stdout.buffer.write(loaded.canonical())
    else:
        click.echo(f"# {loaded.summary()}, sha256 {loaded.sha256}")
        click.echo(loaded.to_yaml(), nl=False)


@taxonomy.command(
    **_example(
        "tagger taxonomy lint --taxonomy examples/overlay.yaml",
        "tagger taxonomy lint --corpus examples/tagged/icml2025-abstracts.jsonl",
    )
)
@taxonomy_option
@click.option(
    "--corpus",
    type=FILE,
    metavar="FILE",
    help="Tagged output (`tagger tag`): also report rules that never fired and areas never tagged.",
)
def lint(taxonomy_path: Path | None, corpus: Path | None) -> None:
    """Find faults in a taxonomy, one line each with its YAML line number.

    Errors (the file does not load) make the exit code 1; warnings (the same alias in two areas,
    acronyms that are English words, regular expressions that can backtrack catastrophically,
    areas with no rules or no crosswalk, rules that never fire) are printed and exit 0.
    """
    from .taxonomy.lint import lint_taxonomy

    skipped = _Skipped()
    findings = lint_taxonomy(taxonomy_path, corpus=corpus, skip=skipped, warn=_warning)
    for finding in findings:
        click.echo(str(finding))
    errors = sum(f.severity == "error" for f in findings)
    click.echo(f"{errors} errors, {len(findings) - errors} warnings", err=True)
    if errors:
        sys.exit(1)
    skipped.exit_if_any()


@main.command(
    name="eval",
    **_example(
        "tagger eval data/iclr2026-dev.jsonl --gold-field primary_area --scheme iclr",
        "tagger eval --judged judged/judged.jsonl",
        "tagger eval --judged judged/keyphrases.jsonl",
    ),
)
@click.argument("papers", metavar="[FILE]", required=False)
@click.option(
    "--gold-field",
    default="primary_area",
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
@json_option
@progress_option
def eval_(
    papers: str | None,
    judged: Path | None,
    taxonomy_path: Path | None,
    as_json: bool,
    scheme: str | None,
    progress: bool | None,
    **options: Any,
) -> None:
    """Measure tags against authors' labels (--scheme) and keyphrases against authors'
    keywords, or tags against a judged set (--judged).

    FILE holds labelled papers (any input format: they are tagged first) or the output of
    `tagger tag` (evaluated as it is); - reads stdin.
    """
    from .tagging.pipeline import Tagger

    if judged is None and (papers is None or scheme is None):
        raise click.UsageError("give FILE and --scheme, or --judged JUDGED")
    if judged is not None and scheme is not None:
        raise click.UsageError("--judged measures tags against judgments, not a --scheme")
    skipped, shown = _Skipped(), sys.stderr.isatty() if progress is None else progress
    with Tagger.from_taxonomy(taxonomy_path) as tagger:
        if judged is None:
            text, data = _against_labels(papers, tagger, scheme, skipped, shown, **options)
        else:
            text, data = _against_judgments(
                papers, judged, tagger, skipped, shown, options["save_tagged"]
            )
    if as_json:
        _print_json(data)
    else:
        click.echo(text, nl=False)
    skipped.exit_if_any()


def _against_labels(
    papers: str, tagger: Any, scheme: str, skipped: _Skipped, progress: bool, **options: Any
) -> tuple[str, dict[str, Any]]:
    """--scheme: the tags against the authors' labels, the keyphrases against their keywords."""
    from .corpus.evaluate import evaluate_file, render

    result = evaluate_file(
        papers, tagger, scheme=scheme, skip=skipped, progress=progress, **options
    )
    return render(result), result.as_dict()


def _against_judgments(
    papers: str | None,
    judged: Path,
    tagger: Any,
    skipped: _Skipped,
    progress: bool,
    save_tagged: Path | None,
) -> tuple[str, dict[str, Any]]:
    """--judged: the tags and keyphrases of the judged papers (or of FILE's papers that are
    judged there) against the judgments; the library says whether they are in sample."""
    from .corpus.evaluate import papers_of, tagged_records
    from .corpus.judged import evaluate_judged, judgments_of, render_judged

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
        _note(
            f"{report.matched:,} of the {report.records:,} papers of {papers} have a "
            f"judgment in {judged} ({len(judgments):,} papers judged, matched by id)"
        )
    return render_judged(report), report.as_dict()
