"""The ``tagger`` command line: it parses options, calls the library and prints. Data goes to
stdout and only data; messages go to stderr.

One module per command or group (``tag.py`` is ``tagger tag``), the options they share declared
once in ``options.py``; this module holds the group, which turns errors and signals into exit
codes for every command.

Exit codes: 0 success, 1 an error (or, for ``tag``, some records were rejected), 2 a usage error,
130 interrupted, 143 terminated.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from ..errors import STOPPED, TaggerError
from ..io import cache
from . import (
    diff,
    eval,
    filter,
    fit,
    report,
    retag,
    review,
    schema,
    stats,
    suggest,
    tag,
    taxonomy,
)
from .options import STOPS, Terminated, example, note

# What a command says when Ctrl-C or SIGTERM stops it, if more than "Interrupted." (`tagger
# review` says its own, the papers done).
STOPPED_SAYS = {
    "tag": STOPPED,
    "fit": "{what}. The fit stopped; a model directory given with -o holds a whole model: the "
    "one it held before, unless the new one was written already.",
}


class _Commands(click.Group):
    """The command group: a TaggerError becomes 'Error: ...' on stderr and exit code 1, as does
    an output that cannot be written (a full disk); Ctrl-C ends with exit code 130, SIGTERM
    with 143, both after closing what was open (workers stopped at once); a closed stdout
    (`tagger ... | head`) is a quiet end. For every command. Stop means stop, once: the first
    Ctrl-C or SIGTERM starts the end, and later ones are ignored, so that closing is not cut
    short (nor ends in a traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        before = {kind: _set_signal(kind, _stop) for kind in _STOPS}
        cache.tell(note)  # a cache directory that cannot be used: said once, the run goes on
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
        except STOPS as exc:
            before = {}  # stopping: later signals stay ignored until the process has ended
            what = "Interrupted" if isinstance(exc, KeyboardInterrupt) else "Terminated"
            says = STOPPED_SAYS.get(ctx.invoked_subcommand or "", "{what}.")
            click.echo(says.format(what=what), err=True)
            sys.exit(130 if isinstance(exc, KeyboardInterrupt) else 143)
        finally:  # for a caller that goes on (a test), its own handlers back
            for kind, handler in before.items():
                if handler is not None:
                    _set_signal(kind, handler)


_STOPS = (signal.SIGINT, signal.SIGTERM)


def _stop(signum: int, frame: Any) -> None:
    """Ctrl-C or SIGTERM: unwind (closing files, stopping workers), and ignore the next ones."""
    for kind in _STOPS:
        signal.signal(kind, signal.SIG_IGN)
    raise KeyboardInterrupt if signum == signal.SIGINT else Terminated


def _set_signal(signum: int, handler: Any) -> Any:
    """Set a signal's handler (the main thread alone may), returning the one it had."""
    try:
        return signal.signal(signum, handler)
    except ValueError:  # not the main thread: the caller's handlers stand
        return None


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


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"]},
    **example(
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


for _command in (
    tag.tag,
    retag.retag,
    filter.filter_,
    stats.stats,
    report.report,
    suggest.suggest,
    diff.diff_,
    schema.schema,
    taxonomy.taxonomy,
    eval.eval_,
    fit.fit,
    review.review,
):
    main.add_command(_command)
