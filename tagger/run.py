"""A tagging run end to end: paper files in, one tagged line per paper out, nothing lost.

:func:`tag_files` is what `tagger tag` does, for Python callers too: it reads every input, reports
each record it cannot read (and writes it to the errors report), warns of repeated paper ids, tags
the rest in input order, and with ``resume=True`` continues an interrupted run's output. The CLI
only adds option parsing and the summary line.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .errors import InputError, TaggerError
from .output import JsonlWriter, cut_partial_line, dumps, read_tagged
from .pipeline import Tagger
from .readers import iter_records
from .records import Paper


class RunWarning(UserWarning):
    """A record was skipped, or a paper id came twice: the run goes on."""


@dataclass
class RunSummary:
    """What a run did. ``str()`` is the line `tagger tag` ends with."""

    tagged: int = 0  # lines this run wrote
    resumed: int = 0  # complete lines already in the output when the run resumed
    rejected: int = 0  # records that could not be read
    duplicates: int = 0  # papers whose id an earlier paper of the run had
    output: str | None = None  # None when writing to a stream
    errors: str | None = None

    def __str__(self) -> str:
        text = f"tagged {self.tagged:,} papers" + (f" to {self.output}" if self.output else "")
        if self.resumed:
            text += f" after the {self.resumed:,} already there"
        if self.duplicates:
            text += f" ({self.duplicates:,} with an id seen before)"
        if self.rejected:
            text += f", {self.rejected:,} rejected" + (
                f": see {self.errors}" if self.errors else ""
            )
        return text


def tag_files(
    tagger: Tagger,
    inputs: Sequence[str | Path],
    output: str | Path | IO[bytes],
    *,
    format: str | None = None,
    errors: str | Path | None = None,
    resume: bool = False,
    workers: int = 1,
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
) -> RunSummary:
    """Tag every paper of ``inputs`` (paths, or "-" for stdin) into ``output`` (a path, or a
    binary stream such as ``sys.stdout.buffer``): one JSONL line per paper, in input order.

    A record that cannot be read is passed to ``warn`` (default: a :class:`RunWarning`) and, with
    ``errors``, written there as JSONL (source, line, record, id, reason); the run goes on. With
    ``resume``, the complete lines already in ``output`` are kept (a half-written last line is
    cut off), checked to be the first papers of the inputs, and only the rest are tagged: the
    file ends as one uninterrupted run would have written it. Lines are written whole and
    flushed one by one, so a run that is killed leaves only complete lines.
    """
    warn = warn or _warn
    path = None if hasattr(output, "write") else Path(output)
    if resume and path is None:
        raise ValueError("resume=True needs an output file: the output of the run to continue")
    # Opening every input now makes a missing file fail before the models load.
    readers = [iter_records(source, format=format) for source in inputs]
    done = _resume_point(path) if resume and path.exists() else []
    summary = RunSummary(
        output=str(path) if path else None,
        errors=str(errors) if errors else None,
        resumed=len(done),
    )
    seen: set[str] = set()

    def papers(report: IO[bytes] | None) -> Iterator[Paper]:
        position = 0  # of the paper among the inputs' papers
        for item in itertools.chain.from_iterable(readers):
            if isinstance(item, InputError):
                summary.rejected += 1
                warn(f"skipped {item}")
                if report:
                    report.write(
                        dumps(
                            {
                                "source": item.source,
                                "line": item.line,
                                "record": item.record,
                                "id": item.record_id,
                                "reason": item.reason,
                            }
                        )
                    )
                continue
            if item.id in seen:
                summary.duplicates += 1
                warn(
                    f"paper id {item.id!r} appears again; both records are tagged and kept, "
                    "in input order"
                )
            seen.add(item.id)
            position += 1
            if position <= len(done):  # tagged by the run being resumed
                if item.id != done[position - 1]:
                    raise InputError(
                        f"line {position} holds paper {done[position - 1]!r} but the inputs' "
                        f"paper {position} is {item.id!r}: this file is not an earlier run "
                        "over these inputs (remove it, or drop --resume)",
                        source=str(path),
                    )
                continue
            yield item

    with contextlib.ExitStack() as stack:
        report = _open(stack, errors, "wb") if errors else None
        stream = _open(stack, path, "ab" if resume else "wb") if path else output
        writer = JsonlWriter(stream)
        results: Iterable = tagger.tag_many(papers(report), workers=workers)
        if progress:
            import sys

            from tqdm import tqdm

            results = tqdm(results, unit=" papers", file=sys.stderr, dynamic_ncols=True)
        try:
            for tagged in results:
                writer.write(tagged)
        except BrokenPipeError:
            raise
        except OSError as exc:  # a full disk, a vanished mount
            raise TaggerError(
                f"cannot write {path or 'the output'}: {exc.strerror or exc}. The "
                f"{writer.count:,} lines written are complete; fix this and run the same "
                "command with --resume to continue"
            ) from None
        finally:
            summary.tagged = writer.count
    return summary


def _resume_point(path: Path) -> list[str]:
    """The paper ids of the complete lines of an earlier run's output, in order."""
    cut_partial_line(path)
    try:
        return [record.paper.id for record in read_tagged(path)]
    except InputError as exc:
        raise InputError(
            f"{exc.reason}: cannot resume from this file", source=exc.source, line=exc.line
        ) from None


def _open(stack: contextlib.ExitStack, path: str | Path, mode: str) -> IO[bytes]:
    """Unbuffered, so that each line reaches the file in one write; closed with the run, quietly
    (a write that failed has been reported already)."""
    try:
        handle = open(path, mode, buffering=0)  # noqa: SIM115 - closed by the stack
    except OSError as exc:
        raise TaggerError(f"cannot write {path}: {exc.strerror or exc}") from None
    stack.callback(_close_quietly, handle)
    return handle


def _close_quietly(handle: IO[bytes]) -> None:
    with contextlib.suppress(OSError):
        handle.close()


def _warn(message: str) -> None:
    warnings.warn(message, RunWarning, stacklevel=3)
