"""Which files a run reads, and how many papers they hold: a directory among the inputs stands for
the files of papers in it (by name, io.formats), and a progress bar's total is the papers counted
before the run (io.readers reads them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import InputError
from ..records import Paper
from .files import is_stdio, reads_once
from .formats import is_paper_file, is_parquet
from .parquet import open_parquet
from .readers import iter_records


def paper_inputs(
    inputs: Iterable[str | Path], note: Callable[[str], None] | None = None
) -> list[str]:
    """``inputs`` with each directory among them replaced by the files of papers in it, by
    their names (io.formats.is_paper_file), in sorted order; what a directory was read for, and
    what in it was left out, goes to ``note``. A directory without such files is an
    InputError: a run of it would tag nothing and say nothing."""
    found: list[str] = []
    for given in inputs:
        path = Path(given)
        if is_stdio(given) or not path.is_dir():
            found.append(str(given))
            continue
        entries = sorted(path.iterdir(), key=lambda entry: entry.name)
        papers = [entry for entry in entries if entry.is_file() and is_paper_file(entry)]
        others = [e.name + "/" * e.is_dir() for e in entries if e not in papers]
        left = f" (not {', '.join(others)})" if others else ""
        if not papers:
            raise InputError(
                f"is a directory with no file of papers in it{left}: name the files to tag",
                source=str(given),
            )
        if note is not None:
            names = ", ".join(entry.name for entry in papers)
            note(f"{given} is a directory: reading the papers of {names}{left}")
        found += [str(entry) for entry in papers]
    return found


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
            total += sum(isinstance(r, Paper) for r in iter_records(source, format=format))
    return total
