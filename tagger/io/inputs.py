"""Which files a run reads, in what order, and how many papers they hold: a directory among the
inputs stands for the files of papers in it (by name, io.formats); the files are checked before
the run and read one at a time, a damaged one costing only what is in it after the damage; and a
progress bar's total is the papers counted before the run (io.readers reads them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError, InputNotice
from ..records import Paper
from .files import is_stdio, reads_once
from .formats import is_paper_file, is_parquet
from .parquet import open_parquet
from .readers import check_given, check_records, iter_records
from .tagged import own_output


def paper_inputs(
    inputs: Iterable[str | Path], note: Callable[[str], None] | None = None
) -> list[str]:
    """``inputs`` with each directory among them replaced by the files of papers in it, by
    their names (io.formats.is_paper_file), in sorted order, less tagger's own output (tagged
    lines, an errors report: io.tagged.own_output), which would be read back as papers; what a
    directory was read for, and what in it was left out, goes to ``note``. A directory without
    files of papers by name is an InputError: a run of it would tag nothing and say nothing."""
    found: list[str] = []
    for given in inputs:
        path = Path(given)
        if is_stdio(given) or not path.is_dir():
            found.append(str(given))
            continue
        entries = sorted(path.iterdir(), key=lambda entry: entry.name)
        papers = [entry for entry in entries if entry.is_file() and is_paper_file(entry)]
        others = [e.name + "/" * e.is_dir() for e in entries if e not in papers]
        left = f" (not {_names(others)})" if others else ""
        if not papers:
            raise InputError(
                f"is a directory with no file of papers in it{left}: name the files to tag",
                source=str(given),
            )
        own = {entry: own_output(entry) for entry in papers}
        papers = [entry for entry in papers if own[entry] is None]
        if note is not None:
            if papers:
                names = _names([entry.name for entry in papers])
                note(f"{given} is a directory: reading the papers of {names}{left}")
            skipped = [f"{entry.name} ({what})" for entry, what in own.items() if what]
            if skipped:
                note(
                    f"{given}: skipping tagger's own output, not papers: {_names(skipped)}; "
                    "name a file to tag its papers again"
                )
        found += [str(entry) for entry in papers]
    return found


def _names(names: list[str], most: int = 12) -> str:
    """Names for a message, the first few of a long list, and how many more there are."""
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[: most - 2])} and {len(names) - most + 2:,} more"


def read_inputs(
    sources: Iterable[str | Path],
    *,
    format: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    stdin: bytes | None = None,
) -> Iterator[Paper | InputError | InputNotice]:
    """The records of ``sources`` in order, notices among them (io.readers.iter_records, which
    takes ``format``, ``venue`` and ``year``). ``stdin``: the bytes of standard input, read
    before (a library written back reads its input twice), to read for "-".

    Each file that can be read twice is opened now and closed again (io.readers.check_records),
    so that a missing file, or one that holds no papers, raises InputError before anything is
    read; a pipe or stdin is left to its turn (io.files.reads_once). Then each is opened when
    its turn comes and closed at its end: a directory of thousands of files never holds more
    than one open. A file that fails part way (a truncated gzip, UTF-16, a JSON array that does
    not parse) yields an InputError in place of the rest, after the records read before the
    damage, and the next file is read."""
    sources, given = list(sources), {"venue": venue, "year": year}
    check_given(venue, year)
    for source in sources:
        if not reads_once(source):
            check_records(source, format=format)
    spooled = {"stdin": [stdin]} if stdin is not None else {}
    return (
        item
        for source in sources
        for item in _records_of(source, format, given | (spooled if is_stdio(source) else {}))
    )


def _records_of(source: str | Path, format: str | None, given: dict[str, Any]) -> Iterator[Any]:
    read = 0
    try:
        for item in iter_records(source, format=format, notices=True, **given):
            read += not isinstance(item, InputNotice)
            yield item
    except InputError as damage:
        if read:
            what = f"the {read:,} records before it are read, the rest of the file is not"
            damage = InputError(
                f"{damage.reason}; {what}",
                source=damage.source,
                line=damage.line,
                record=damage.record,
            )
        yield damage


def count_papers(sources: Iterable[str | Path], *, format: str | None = None) -> int | None:
    """How many papers ``sources`` hold (the records that are papers: the ones a run tags), for
    a progress bar's total: each file read once more, which is fast beside tagging it; a
    Parquet file's footer gives its rows. None if one is stdin or a pipe, which cannot be read
    twice (io.files.reads_once)."""
    total = 0
    for source in sources:
        if reads_once(source):
            return None
        if format == "parquet" or (format is None and is_parquet(source)):
            total += open_parquet(source).metadata.num_rows
        else:
            total += sum(isinstance(r, Paper) for r in _records_of(source, format, {}))
    return total
