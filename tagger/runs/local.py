"""A tagging run end to end: paper files in, one tagged line per paper out, nothing lost.

:func:`tag_files` is what `tagger tag` does, for Python callers too: it reads every input, reports
each record it cannot read (and writes it to the errors report), warns of repeated paper ids, tags
the rest in input order, and with ``resume=True`` continues an interrupted run's output, once it
has proved that output was written by the same configuration from the same inputs. The CLI only
adds option parsing and the summary line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..config import (
    RETAG_WORKERS,
    TAG_LABELS,
    TAG_WORKERS,
    TaggerConfig,
    tagger_version,
    usable_cores,
)
from ..errors import InputError, InputNotice, TaggerError
from ..io.display import progress_bar
from ..io.files import STDIO, check_outputs, is_stdio, open_output, write_atomic
from ..io.formats import is_library
from ..io.formats import output_format as output_format_of
from ..io.inputs import count_papers, paper_inputs, read_inputs
from ..io.jsonl import JsonlWriter, rejected_line
from ..io.libraries import LibraryWriter, check_names, check_write_back, read_source
from ..io.parquet import ParquetWriter
from ..io.tagged import (
    TaggedLine,
    count_lines,
    cut_partial_line,
    read_tagged,
    read_tagged_lines,
    repeated_ids,
)
from ..language import vectors
from ..records import Paper, Provenance, TaggedPaper
from ..tagging.pipeline import Tagger
from ..tagging.retag import Retagger
from ..taxonomy.model import Taxonomy


class RunWarning(UserWarning):
    """A record was skipped, a paper id came twice: the run goes on."""


@dataclass
class RunSummary:
    """What a run did. ``str()`` is the line `tagger tag` ends with."""

    tagged: int = 0  # lines this run wrote
    resumed: int = 0  # complete lines already in the output when the run resumed
    rejected: int = 0  # records that could not be read
    duplicates: int = 0  # papers whose id an earlier paper of the run had
    incomplete: int = 0  # part directories read without what is missing in them (retag)
    output: str | None = None  # None when writing to a stream
    errors: str | None = None
    verb: str = "tagged"  # what the run did to the papers: tagged, retagged

    def __str__(self) -> str:
        papers = f"{self.tagged:,} paper{'s' * (self.tagged != 1)}"
        text = f"{self.verb} {papers}" + (f" to {self.output}" if self.output else "")
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
    venue: str | None = None,
    year: int | None = None,
    errors: str | Path | None = None,
    resume: bool = False,
    workers: int | None = TAG_WORKERS,
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
    note: Callable[[str], None] | None = None,
    output_format: str | None = None,
    tag_labels: str = TAG_LABELS,
) -> RunSummary:
    """Tag every paper of ``inputs`` (paths, a directory for the files of papers in it, or "-"
    for stdin) into ``output`` (a path, "-" or a
    binary stream such as ``sys.stdout.buffer``): one JSONL line per paper, in input order; a
    path ending in ``.parquet`` gets one Parquet row per paper (io.parquet.parquet_schema), written
    whole at the end.

    ``output_format`` (by default from the output's name: io.formats.output_format) may be a
    library format, ``bibtex``, ``ris`` or ``csl-json``: then the inputs, each a library of
    that format, are written back whole at the end, every entry and everything between them as
    it was, but each tagged entry's tag field, which holds its area tags (``tag_labels``: their
    ids or names) after ``tagger:`` (io.libraries); stdin is read first, then tagged.

    A record that cannot be read is passed to ``warn`` (default: a :class:`RunWarning`) and, with
    ``errors``, written there as JSONL (source, line, record, id, reason); the run goes on. So
    is a file that cannot be read on (a truncated gzip, UTF-16): the records before the fault
    are tagged, and the other files are read (io.inputs.read_inputs). What the readers say that
    is no error (a paper list's header line), which taxonomy tags the papers, and that the
    fitted model does not serve it (tagging.model.Learned.note), go to ``note``, if given; what
    they warn of (a line that looks like a header), to ``warn``. ``venue`` and ``year`` are
    those of the papers that do not give their own.
    No output may be an input or another output, and each is locked while the run writes it.
    With ``resume``, the complete lines already in ``output`` are kept (a half-written last line
    is cut off) once they are shown to be this configuration's output for the first papers of the
    inputs, and only the rest are tagged: the file ends as one uninterrupted run would have
    written it. Lines are written whole and flushed one by one, so a killed run leaves only
    complete lines. ``workers`` is capped at the cores this process may use; None: one per core
    (or, for a Tagger given an embedder object, which workers cannot have, this process alone).
    """
    warn, note = warn or _warn, note or _quiet
    given = [str(source) for source in inputs]
    inputs = paper_inputs(given, note)  # a directory: the files of papers in it, not our output
    if is_stdio(output):
        output = sys.stdout.buffer
    path = None if hasattr(output, "write") else Path(output)
    if resume and path is None:
        raise ValueError("resume=True needs an output file: the output of the run to continue")
    stdout = STDIO if output is sys.stdout.buffer else None
    outputs = {"the output": path or stdout, "the errors report": errors}
    written = output_format_of(None if path is None else path, output_format)
    # a library written into a directory of papers is read with them next time: refused
    check_outputs(outputs, [*given, *inputs], inside=None if is_library(written) else warn)
    library, stdin = None, None
    if is_library(written):
        if resume:
            raise TaggerError(
                f"--resume continues JSONL output; a {written} library is written whole at the "
                "end of a run: run it again"
            )
        if any(is_stdio(source) for source in inputs):
            stdin = read_source("-")  # read twice: for its papers, then written back
        check_write_back(inputs, written, format, stdin)
        if tag_labels == "names":
            check_names(inputs, (area.name for area in tagger.taxonomy.areas), stdin)
        library = LibraryWriter(written, tag_labels)
    # every input checked now (a missing file fails before the models load), then read in turn
    records = read_inputs(inputs, format=format, venue=venue, year=year, stdin=stdin)
    workers = _usable_workers(
        1 if workers is None and tagger.reader.embedder_given else workers, warn
    )
    note(f"tagging with {tagger.taxonomy.label}")
    if (unfitted := tagger.learned.note()) is not None:
        note(unfitted)  # once, here: workers say nothing
    summary = RunSummary(output=str(path) if path else None, errors=str(errors) if errors else None)

    if written == "parquet" and resume:
        raise TaggerError(
            "--resume continues JSONL output; a Parquet file is written whole at the end of a "
            "run: run it again"
        )
    with contextlib.ExitStack() as stack:
        stream = _output_stream(stack, output, path, append=resume, whole=written != "jsonl")
        resumed = _Resume(path, tagger.provenance) if resume else None
        summary.resumed = resumed.count if resumed else 0
        report = stack.enter_context(_closing(open_output(errors))) if errors else None
        papers = _papers(records, summary, report, warn, note, resumed)
        results = tagger.tag_many(papers, workers=workers)
        if progress:
            total = count_papers(inputs, format=format)
            results = progress_bar(results, total=total, initial=summary.resumed)
        if library is None:
            _write(results, path, stream, summary, parquet=written == "parquet")
        else:
            _write_library(results, library, inputs, stdin, path, stream, summary)
    return summary


def _write_library(
    results: Iterable[TaggedPaper],
    library: LibraryWriter,
    inputs: Sequence[str | Path],
    stdin: bytes | None,
    path: Path | None,
    stream: IO[bytes] | None,
    summary: RunSummary,
) -> None:
    """Write the libraries back, whole, once every paper is tagged: to ``path`` in one step
    (io.files.write_atomic), or to ``stream``."""
    for tagged in results:
        library.write(tagged)
    summary.tagged = library.count
    data = library.render(inputs, stdin)
    try:
        if path is not None:
            write_atomic(path, data)
        elif stream is not None:
            stream.write(data)
            stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise TaggerError(
            f"cannot write {path or 'the output'}: {exc.strerror or exc}; nothing is written, "
            "fix this and run the command again"
        ) from None


def retag_files(
    taxonomy: Taxonomy,
    inputs: Sequence[str | Path],
    output: str | Path | IO[bytes],
    *,
    errors: str | Path | None = None,
    workers: int | None = RETAG_WORKERS,
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
    note: Callable[[str], None] | None = None,
    incomplete: bool = False,
    model: str | Path | None = None,
) -> RunSummary:
    """Tag the papers of tagged output again with ``taxonomy`` (and the fitted ``model``, a
    directory `tagger fit` wrote, if given), without the embedding model:
    each line's keyphrases and vector are reused, and the line written is the one `tagger tag`
    writes for the same paper with that taxonomy. ``inputs``: tagged files (JSONL, Parquet or
    part directories, "-" for stdin), in order; ``output`` as for :func:`tag_files`.

    Only lines written by this version of tagger can be retagged, all with the same models and
    settings (those of the first line, which the run takes over); a line that cannot be (another
    version, other settings, no vector, not tagged output) is reported like a rejected record:
    passed to ``warn``, written to ``errors``, counted in the summary. A paper id that comes
    again is warned of; which taxonomy the papers are retagged with goes to ``note``, if given.
    A part directory that is not a whole run's output is refused before
    anything is written, or with ``incomplete`` its intact parts are read, with a warning (and
    ``summary.incomplete`` counts them).
    """
    warn = warn or _warn
    if is_stdio(output):
        output = sys.stdout.buffer
    path = None if hasattr(output, "write") else Path(output)
    stdout = STDIO if output is sys.stdout.buffer else None
    check_outputs({"the output": path or stdout, "the errors report": errors}, inputs)
    for source in inputs:
        if not is_stdio(source) and not Path(source).exists():
            raise InputError("no such file", source=str(source))
    workers = _usable_workers(workers, warn)
    summary = RunSummary(
        output=str(path) if path else None, errors=str(errors) if errors else None, verb="retagged"
    )
    report: IO[bytes] | None = None

    def reject(error: InputError) -> None:
        summary.rejected += 1
        warn(f"skipped {error}")
        if report:
            try:
                report.write(rejected_line(error))
            except OSError as exc:
                raise TaggerError(
                    f"cannot write the errors report {errors}: {exc.strerror or exc}"
                ) from None

    def partial(error: InputError) -> None:
        summary.incomplete += 1
        warn(str(error))

    # every input is opened (and a part directory checked) before anything is written
    readers = [
        read_tagged_lines(s, skip=reject, incomplete=partial if incomplete else None)
        for s in inputs
    ]
    if note is not None:
        note(f"retagging with {taxonomy.label}")
    with contextlib.ExitStack() as stack:
        report = stack.enter_context(_closing(open_output(errors))) if errors else None
        stream = _output_stream(stack, output, path)
        lines = repeated_ids(
            itertools.chain.from_iterable(readers), warn, " and ".join(map(str, inputs))
        )
        first, config, lines = _first_retaggable(lines, reject)
        if first is None or config is None:  # nothing to retag: every line was reported
            _write([], path, stream, summary, resumable=False)
            return summary
        if model is not None:
            config = dataclasses.replace(config, model=str(model))
        retagger = stack.enter_context(Retagger(taxonomy, config))
        dimensions = retagger.area_vectors.shape[1]
        records = _retaggable(
            itertools.chain([first], lines), retagger.provenance, dimensions, reject
        )
        results = retagger.retag_many(records, workers=workers)
        if progress:
            counts = [count_lines(source) for source in inputs]
            total = None if None in counts else sum(c for c in counts if c is not None)
            results = progress_bar(results, total=total)
        _write(results, path, stream, summary, resumable=False)
    return summary


def _first_retaggable(
    lines: Iterator[TaggedLine], reject: Callable[[InputError], None]
) -> tuple[TaggedLine | None, TaggerConfig | None, Iterator[TaggedLine]]:
    """The first line this version can retag and its settings (the run takes them over), the
    others before it rejected, and the lines after it."""
    for line in lines:
        problem = _not_retaggable(line, None)
        if problem is None:
            try:
                return line, TaggerConfig(**line.record.provenance.settings), lines
            except (TypeError, ValueError) as exc:
                why = str(exc).splitlines()[0].removeprefix("TaggerConfig.__init__() ")
                problem = InputError(
                    f"cannot retag: its settings are not this version's: {why}",
                    **line.where(),
                    record_id=line.record.paper.id,
                )
        reject(problem)
    return None, None, lines


def _retaggable(
    lines: Iterable[TaggedLine],
    provenance: Provenance,
    dimensions: int,
    reject: Callable[[InputError], None],
) -> Iterator[TaggedPaper]:
    for line in lines:
        problem = _not_retaggable(line, provenance, dimensions)
        if problem is None:
            yield line.record
        else:
            reject(problem)


def _not_retaggable(
    line: TaggedLine, provenance: Provenance | None, dimensions: int | None = None
) -> InputError | None:
    """Why a tagged line cannot be retagged to the bytes `tagger tag` would write, if it
    cannot: written by another version, with other models or settings than ``provenance``
    (the run's; taxonomies may differ, that is the point), or without a vector."""
    record, why = line.record, None
    written = record.provenance
    if written.tagger_version != tagger_version():
        why = (
            f"it was tagged by tagger {written.tagger_version}, and retag reuses what this "
            f"version ({tagger_version()}) stores; tag the papers again"
        )
    elif record.vector is None:
        why = "it holds no paper vector; tag the papers again"
    elif provenance is not None:
        # the taxonomy and the model may differ: that is the point
        same = {"taxonomy_version": "", "taxonomy_sha256": "", "model": None}
        written = written.model_copy(update=same | {"settings": _but_model(written.settings)})
        first = provenance.model_copy(update=same | {"settings": _but_model(provenance.settings)})
        if written != first:
            why = (
                f"{_differences(written, first).replace('this run', 'the first line')}; "
                "retag files tagged alike together"
            )
    if why is None:
        try:
            size = len(vectors.decode(record.vector))
        except ValueError as exc:
            why = f"'vector': {exc}"
        else:
            if dimensions is not None and size != dimensions:
                why = f"'vector': it has {size:,} values, and the model's vectors {dimensions:,}"
    if why is None:
        return None
    return InputError(
        f"cannot retag: {why}",
        **line.where(),
        record_id=record.paper.id,
    )


def _but_model(settings: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in settings.items() if k != "model"}


def _is_parquet(path: Path | None) -> bool:
    return path is not None and output_format_of(path) == "parquet"


def _output_stream(
    stack: contextlib.ExitStack,
    output: Any,
    path: Path | None,
    append: bool = False,
    whole: bool = False,
) -> IO[bytes] | None:
    """Where JSONL lines go: the stream given, or the file at ``path``, opened now (so that an
    earlier run's output never passes for this one's); None for an output written ``whole`` at
    the end (Parquet, a library)."""
    if path is None:
        return output  # a stream: stdout, or one the caller opened
    if whole:
        return None
    return stack.enter_context(_closing(open_output(path, append=append)))


def _write(
    results: Iterable[TaggedPaper],
    path: Path | None,
    stream: IO[bytes] | None,
    summary: RunSummary,
    *,
    resumable: bool = True,
    parquet: bool | None = None,
) -> None:
    """Write the results: JSONL lines to ``stream``, or a Parquet file at ``path`` (written
    whole at the end; by default if its name ends in ``.parquet``); a failed write says how
    many lines are complete, and how to go on."""
    parquet = _is_parquet(path) if parquet is None else parquet
    writer = ParquetWriter(path) if parquet else JsonlWriter(stream)
    try:
        for tagged in results:
            writer.write(tagged)
        if parquet:
            writer.close()
    except BrokenPipeError:
        raise
    except OSError as exc:  # a full disk, a vanished mount
        where = f"write {path}" if path else "write the output"
        if not resumable:
            hint = "fix this and run the command again"
        elif path:
            hint = "fix this and run the same command with --resume to continue"
        else:
            hint = "write to a file with -o FILE to be able to resume"
        raise TaggerError(
            f"cannot {where}: {exc.strerror or exc}. The {writer.count:,} lines written are "
            f"complete; {hint}"
        ) from None
    finally:
        summary.tagged = writer.count
        if parquet and writer.temporary.exists():
            writer.discard()


def _papers(
    records: Iterator[Paper | InputError | InputNotice],
    summary: RunSummary,
    report: IO[bytes] | None,
    warn: Callable[[str], None],
    note: Callable[[str], None],
    resumed: _Resume | None,
) -> Iterator[Paper]:
    """The papers to tag: rejected records reported, repeated ids warned of, and the papers an
    interrupted run already tagged checked against its output and skipped."""
    seen: set[str] = set()
    position = 0  # of the paper among the inputs' papers
    for item in records:
        if isinstance(item, InputNotice):
            (warn if item.warning else note)(str(item))
            continue
        if isinstance(item, InputError):
            summary.rejected += 1
            warn(f"skipped {item}")
            if report:
                report.write(rejected_line(item))
            continue
        if item.id in seen:
            summary.duplicates += 1
            warn(
                f"paper id {item.id!r} appears again; both records are tagged and kept, "
                "in input order"
            )
        seen.add(item.id)
        position += 1
        if resumed and resumed.covers(position, item):
            continue
        yield item
    if resumed:
        resumed.check_count(position)


class _Resume:
    """The output of an interrupted run, proved to be this run's beginning: the same tagger
    version, taxonomy, models and settings on every line, and line by line the same papers as
    the inputs give (ids, text and every other field), no more lines than the inputs have.

    Nothing of the file is held: it is read once to check every line's provenance and count
    them, then again in step with the inputs, a line at a time, all before a paper is tagged or a
    line written (the papers it covers come first)."""

    def __init__(self, path: Path, provenance: Provenance) -> None:
        self.path = path
        cut_partial_line(path)
        self.count = 0
        for number, record in enumerate(self._records(), start=1):
            if record.provenance != provenance:
                raise self._refusal(number, _differences(record.provenance, provenance))
            self.count = number
        self._written: Iterator[TaggedPaper] | None = self._records()

    def _records(self) -> Iterator[TaggedPaper]:
        try:
            yield from read_tagged(self.path)
        except InputError as exc:
            raise InputError(
                f"{exc.reason}: cannot resume from this file", source=exc.source, line=exc.line
            ) from None

    def covers(self, position: int, paper: Paper) -> bool:
        """Whether the ``position``-th paper of the inputs (they come in order, from 1) is
        already in the file (and is this paper: anything else is refused)."""
        if position > self.count or self._written is None:
            self.close()
            return False
        written = next(self._written).paper
        if position == self.count:
            self.close()
        if written != paper:
            changed = _changed_fields(written, paper)
            raise self._refusal(
                position,
                f"it holds paper {written.id!r} and the inputs' paper {position} is "
                f"{paper.id!r}" + (f" ({changed} changed)" if changed else ""),
            )
        return True

    def close(self) -> None:
        if self._written is not None:
            self._written.close()
            self._written = None

    def check_count(self, papers: int) -> None:
        self.close()
        if papers < self.count:
            raise self._refusal(
                papers + 1,
                f"the file holds {self.count:,} papers, the inputs only {papers:,}",
            )

    def _refusal(self, line: int, why: str) -> InputError:
        return InputError(
            f"cannot resume: line {line} was not written by this run's configuration from these "
            f"inputs: {why}. Remove the file to start again, or run as it was run",
            source=str(self.path),
        )


def _differences(written: Provenance, now: Provenance) -> str:
    """What differs between the provenance of a line and this run's, in words."""
    found = []
    for name, label in [
        ("tagger_version", "tagger"),
        ("taxonomy_version", "taxonomy version"),
        ("taxonomy_sha256", "taxonomy sha256"),
        ("embedding_model", "embedding model"),
        ("spacy_model", "spaCy model"),
    ]:
        before, after = getattr(written, name), getattr(now, name)
        if before != after:
            found.append(f"{label} {before} (this run: {after})")
    for name in sorted(set(written.settings) | set(now.settings)):
        before, after = written.settings.get(name, "default"), now.settings.get(name, "default")
        if before != after:
            found.append(f"{name}={before} (this run: {after})")
    return "written with " + ", ".join(found)


def _changed_fields(written: Paper, paper: Paper) -> str:
    before, after = written.model_dump(), paper.model_dump()
    return ", ".join(
        repr(k) for k in [*after, *before.keys() - after.keys()] if before.get(k) != after.get(k)
    )


def _usable_workers(workers: int | None, warn: Callable[[str], None]) -> int:
    """``workers``, capped at the cores this process may run on; None: as many as those."""
    cores = usable_cores()
    if workers is None:
        return cores
    if workers > cores:
        warn(f"{workers} workers asked for, but tagger may use {cores} cores here: using {cores}")
        return cores
    return workers


@contextlib.contextmanager
def _closing(handle: IO[bytes]) -> Iterator[IO[bytes]]:
    """Close quietly: a write that failed has been reported already."""
    try:
        yield handle
    finally:
        with contextlib.suppress(OSError):
            handle.close()


def _quiet(message: str) -> None:
    pass


def _warn(message: str) -> None:
    warnings.warn(message, RunWarning, stacklevel=3)
