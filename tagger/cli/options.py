"""What the commands share, declared once: the options several commands take (as decorators),
the reader of tagged output with its warnings, and the messages on stderr.

Nothing here imports numpy or a model: `tagger --help` loads this module.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ..config import Settings
from ..errors import InputError

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
FILE = click.Path(dir_okay=False, path_type=Path)
OUTPUT = click.Path(dir_okay=False, path_type=Path, allow_dash=True)  # "-": stdout


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C, so that files close and workers stop (the group in
    cli/__init__.py raises it; a command that says how it stopped catches :data:`STOPS`)."""


STOPS = (KeyboardInterrupt, Terminated)  # Ctrl-C and SIGTERM, as a command catches them


def example(*commands: str) -> dict[str, str]:
    """A help epilog: the runnable example every command's help ends with."""
    return {"epilog": "\b\nExample:\n" + "\n".join(f"  {command}" for command in commands)}


def warning(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


def note(message: str) -> None:
    click.echo(f"Note: {message}", err=True)


def print_json(data: Any) -> None:
    import orjson

    click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())


class FiniteFloat(click.FloatRange):
    """A number with a fraction, in [min, max] where they are given, and finite: NaN passes
    every comparison with a range's ends (and infinity those of an open range), so click's
    FloatRange lets both through to fail later, or not at all. Every float option takes this."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            bounds = f" in {self._describe_range()}" if (self.min, self.max) != (None, None) else ""
            self.fail(f"{value!r} is not a finite number{bounds}.", param, ctx)
        return super().convert(number, param, ctx)


def given(name: str, ctx: click.Context | None = None) -> bool:
    """Whether the option ``name`` of the command (``ctx``, or the one running) was given, not
    left to its default."""
    source = (ctx or click.get_current_context()).get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT)


# --- options ------------------------------------------------------------------------------------


def settings_options(settings: type[Settings], *names: str) -> Decorator:
    """An option for each named setting (all by default), with its default, range and help; the
    command receives them together as ``config``, a ``settings`` object."""
    defaults = settings()
    fields = [settings.field(name) for name in names] or dataclasses.fields(settings)

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def with_config(*args: Any, **kwargs: Any) -> Any:
            values = {field.name: kwargs.pop(field.name) for field in fields}
            given = {name: value for name, value in values.items() if value is not None}
            return command(*args, config=settings(**given), **kwargs)

        for field in reversed(fields):
            low, high = field.metadata["minimum"], field.metadata["maximum"]
            default, help = getattr(defaults, field.name), field.metadata["help"]
            if field.metadata["choices"]:
                kind: click.ParamType = click.Choice(field.metadata["choices"])
            elif field.type == "int":
                kind = click.IntRange(low, high)
            elif field.type == "str":  # a file or directory a setting names: none, the shipped
                kind = click.Path(exists=True)
                default, help = None, f"{help.split('; empty:')[0]}. Default: the one shipped."
            else:
                kind = FiniteFloat(low, high)
            name = f"--{field.name.replace('_', '-')}"
            with_config = click.option(
                name, field.name, type=kind, default=default, show_default=bool(default), help=help
            )(with_config)
        return with_config

    return decorate


def top_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--top K: the K likeliest topic areas of every paper, whatever their scores, for users who
    rank rather than filter (min_tags and max_tags K; facets are still listed from --min-score).
    Goes just below settings_options, whose ``config`` it changes."""

    @functools.wraps(command)
    def ranked(*args: Any, top: int | None, config: Any, **kwargs: Any) -> Any:
        if top is not None:
            if given("max_tags"):
                raise click.UsageError("--top K lists K tags a paper: give it or --max-tags")
            config = dataclasses.replace(config, min_tags=top, max_tags=top)
        return command(*args, config=config, **kwargs)

    return click.option(
        "--top",
        type=click.IntRange(min=1),
        metavar="K",
        help="List the K likeliest topic areas of every paper, whatever their scores (to rank "
        "rather than filter): each tag still has its score, the probability that it is right.",
    )(ranked)


def renamed_option(name: str, dest: str, *, formerly: str, **attrs: Any) -> Decorator:
    """The option ``name``, its value passed as ``dest``, once spelt ``formerly``: that spelling
    is still read, left out of the help, with a note on stderr that names the new one."""
    old = f"{dest}_formerly"

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def merged(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(old)
            if value is not None:
                if given(dest):
                    raise click.UsageError(f"{formerly} is now {name}: give {name} alone")
                note(f"{formerly} is now {name}")
                kwargs[dest] = value
            return command(*args, **kwargs)

        merged = click.option(name, dest, **attrs)(merged)
        return click.option(formerly, old, type=attrs.get("type"), hidden=True)(merged)

    return decorate


def output_option(help: str, *, directory: bool = False) -> Decorator:
    """-o/--output: a file (or, with ``directory``, a directory too) instead of stdout; - is
    stdout."""
    kind = click.Path(path_type=Path, allow_dash=True) if directory else OUTPUT
    return click.option("-o", "--output", type=kind, help=help)


def tag_labels_option(function: Any) -> Any:
    """--tag-labels: the tags written into a library (tag --output-format bibtex, filter
    --output-format bibtex) by area id or by name."""
    from ..config import TAG_LABEL_CHOICES, TAG_LABELS

    return click.option(
        "--tag-labels",
        type=click.Choice(TAG_LABEL_CHOICES),
        default=TAG_LABELS,
        show_default=True,
        help="Write tags into a library (bibtex, ris, csl-json) as area ids (tagger:rl.offline) "
        "or names (tagger:Offline RL).",
    )(function)


def workers_option(help: str, default: int | None = None) -> Decorator:
    return click.option(
        "-w",
        "--workers",
        type=click.IntRange(min=1),
        default=default,
        show_default=default is not None,
        help=help,
    )


def errors_option(help: str) -> Decorator:
    """--errors FILE: where rejected records (or lines) are written as JSONL."""
    return click.option("--errors", type=FILE, help=help)


def _taxonomy_in_use(ctx: click.Context, param: click.Parameter, value: Path | None) -> Any:
    """--taxonomy, and a warning when the taxonomy.yaml of the working directory is not the
    one in use: editing it does nothing until it is passed."""
    from ..taxonomy.loading import ignored_local_taxonomy

    here = ignored_local_taxonomy(value)
    if here is not None:
        warning(
            f"{here} here is not the taxonomy in use: without --taxonomy, tagger reads the "
            f"packaged taxonomy, and {here} differs from it. To use it, pass --taxonomy {here}; "
            "to change the taxonomy, write an overlay that says what changes "
            "(`extends: builtin`, docs/reference/taxonomy.md: Overlays) and pass that"
        )
    return value


def _shown(ctx: click.Context, param: click.Parameter, value: bool | None) -> bool:
    return sys.stderr.isatty() if value is None else value


taxonomy_option = click.option(
    "--taxonomy",
    "taxonomy_path",
    type=FILE,
    metavar="FILE",
    callback=_taxonomy_in_use,
    help="Taxonomy YAML file, or an overlay of one. Default: the taxonomy packaged with tagger.",
)
# commands that read tagged output: their taxonomy is the one the papers were tagged with
tagged_taxonomy_option = click.option(
    "--taxonomy",
    "taxonomy_path",
    type=FILE,
    metavar="FILE",
    help="Taxonomy YAML file, or an overlay of one. Default: the taxonomy the papers were tagged "
    "with (tagger keeps each one it tags with), or the packaged one if it cannot be found.",
)
tagged_argument = click.argument("tagged", metavar="FILE")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
incomplete_option = click.option(
    "--incomplete",
    is_flag=True,
    help="Read a part directory (`tagger tag --cluster`) whose run has not finished, or whose "
    "parts are missing or changed: its intact parts, with a warning; the exit code is then 1.",
)
progress_option = click.option(  # the command receives whether to show it
    "--progress/--no-progress",
    default=None,
    callback=_shown,
    help="A progress bar on stderr: papers done of how many, and the time left. Default: when "
    "stderr is a terminal.",
)


# --- reading tagged output ----------------------------------------------------------------------


class Skipped:
    """Lines of a tagged file that are not tagged output: each warned of, the rest read; and,
    with --incomplete, a part directory read without what is missing or changed in it: warned
    of. Any of them make the exit code 1."""

    def __init__(self) -> None:
        self.count = 0
        self.partial = 0

    def __call__(self, error: InputError) -> None:
        self.count += 1
        warning(f"skipped {error}")

    def incomplete(self, error: InputError) -> None:
        self.partial += 1
        warning(str(error))

    def exit_if_any(self) -> None:
        if self.count:
            click.echo(f"{self.count:,} line{'s' * (self.count > 1)} skipped", err=True)
        if self.partial:
            click.echo("read an incomplete part directory (--incomplete)", err=True)
        if self.count or self.partial:
            sys.exit(1)


def tagged_lines(
    tagged: str,
    taxonomy_path: Path | None,
    skipped: Skipped,
    incomplete: bool = False,
    stdout: bool = True,
) -> tuple[Any, Iterator[Any]]:
    """The taxonomy to read a tagged file with, and its lines: bad lines skipped, with a warning
    if they were tagged with another taxonomy than that one, or with two embedding models, and
    if a paper id comes twice; standard output, where the command writes (``stdout``), must not
    be the file or lie inside it.

    The taxonomy is --taxonomy's if it was given; else the one the first line was tagged with
    (its provenance's taxonomy_sha256: the packaged taxonomy, or one tagger kept when it tagged
    with it, taxonomy.store), so that a taxonomy of one's own reads back with its own areas; if
    that one cannot be found, the packaged taxonomy, with a note that says so."""
    from ..io.files import STDIO, check_outputs
    from ..io.tagged import read_tagged_lines, repeated_ids, same_embedding, same_taxonomy
    from ..taxonomy.loading import load_taxonomy

    check_outputs({"the output": STDIO if stdout else None}, [tagged])
    lines = read_tagged_lines(
        tagged, skip=skipped, incomplete=skipped.incomplete if incomplete else None
    )
    if taxonomy_path is not None:
        taxonomy = load_taxonomy(taxonomy_path)
    else:
        first = next(lines, None)  # stdin too: the line is kept, not read again
        taxonomy = _taxonomy_of(first, tagged)
        lines = itertools.chain([first] if first is not None else [], lines)
    lines = same_embedding(same_taxonomy(lines, taxonomy, warning, tagged), warning, tagged)
    return taxonomy, repeated_ids(lines, warning, tagged)


def _taxonomy_of(first: Any, tagged: str) -> Any:
    """The taxonomy the line ``first`` was tagged with, or the packaged one (with a note) if
    it cannot be found, or if there is no line."""
    from ..config import cache_dir
    from ..taxonomy.loading import load_taxonomy
    from ..taxonomy.store import tagged_with

    if first is None:
        return load_taxonomy()
    provenance = first.record.provenance
    found = tagged_with(provenance.taxonomy_sha256)
    if found is None:
        kept = cache_dir()
        where = f"in {kept / 'taxonomies'}" if kept else "the cache is off"
        note(
            f"{tagged}: the taxonomy it was tagged with (version {provenance.taxonomy_version}, "
            f"sha256 {provenance.taxonomy_sha256[:12]}) is neither the packaged one nor one "
            f"tagger kept when it tagged with it ({where}): it is read with the packaged taxonomy"
        )
        return load_taxonomy()
    return found


def tagged_records(
    tagged: str,
    taxonomy_path: Path | None,
    skipped: Skipped,
    incomplete: bool = False,
    stdout: bool = True,
) -> tuple[Any, Iterator[Any]]:
    """The taxonomy and the records of :func:`tagged_lines`."""
    taxonomy, lines = tagged_lines(tagged, taxonomy_path, skipped, incomplete, stdout)
    return taxonomy, (line.record for line in lines)
