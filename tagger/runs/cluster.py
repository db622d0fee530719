"""Tag many files on a Dask cluster: inputs split into partitions, one part file per partition,
and a manifest.

    tagger tag 'arxiv/*.jsonl' -o tagged/ --cluster local:2        # a LocalCluster here
    tagger tag 'arxiv/*.jsonl' -o tagged/ --cluster tcp://sched:8786

The client plans the partitions (:func:`plan`: a file's records in order, at most ``size`` each;
a JSON Lines file is cut at line starts and each partition reads only its own bytes), writes the
manifest, and submits one task per partition that has no complete part. A task tags its records
with a tagger made once per worker process (:func:`_tagger`) and writes ``part-NNNNN.jsonl`` (or
``.parquet``) and ``part-NNNNN.errors.jsonl`` under temporary names, renames them, then writes
``part-NNNNN.done.json`` (its counts and the part's sha256) the same way: a part is complete
when its ``done`` file says so and the part's bytes match. Dask may run a task twice (a lost
worker, a retry): the second run writes the same bytes over the first, atomically, so no part is
ever duplicated or half written. The JSONL parts, concatenated in order, are the bytes `tagger
tag` writes locally for the same inputs.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config import TaggerConfig
from ..errors import InputError, InputNotice, TaggerError
from ..io.files import open_input, sha256
from ..io.jsonl import JsonlWriter, rejected_line
from ..io.parquet import ParquetWriter
from ..io.readers import iter_records, read_line_range, read_parquet
from ..taxonomy.model import Taxonomy

PARTITION_SIZE = 10_000  # records a partition holds at most
MANIFEST = "manifest.json"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Partition:
    """Records ``first`` to ``stop`` (0-based, ``stop`` excluded) of one input file; for a JSON
    Lines file read by byte range, its bytes ``start`` to ``end`` from line ``first_line``."""

    index: int
    source: str
    format: str
    first: int
    stop: int
    start: int | None = None
    end: int | None = None
    first_line: int = 1

    @property
    def name(self) -> str:
        return f"part-{self.index:05d}"


@dataclass
class PartResult:
    """What a task wrote: its part's counts and sha256, and the ids it tagged (the client warns
    of ids seen twice across the whole run, as a local run does)."""

    index: int
    tagged: int
    rejected: int
    sha256: str
    ids: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


@dataclass
class ClusterSummary:
    output: str
    partitions: int = 0
    ran: int = 0  # partitions tagged by this run (the others were complete)
    tagged: int = 0
    rejected: int = 0
    duplicates: int = 0
    dashboard: str | None = None

    def __str__(self) -> str:
        text = f"tagged {self.tagged:,} papers to {self.output} in {self.partitions:,} parts" + (
            f" ({self.ran:,} run now)" if self.ran != self.partitions else ""
        )
        if self.duplicates:
            text += f" ({self.duplicates:,} with an id seen before)"
        if self.rejected:
            text += f", {self.rejected:,} rejected: see {self.output}/part-*.errors.jsonl"
        return text


# --- planning ----------------------------------------------------------------------------------


def expand(inputs: Sequence[str]) -> list[str]:
    """Each input as given, or a glob's matches in sorted order; a glob matching nothing, or a
    missing file, is an InputError."""
    files: list[str] = []
    for given in inputs:
        if glob.has_magic(given):
            matched = sorted(glob.glob(given, recursive=True))
            if not matched:
                raise InputError("no file matches this pattern", source=given)
            files += matched
        else:
            files.append(given)
    return files


def plan(inputs: Sequence[str], *, size: int = PARTITION_SIZE, format: str | None = None):
    """The partitions of ``inputs``, in input order: at most ``size`` records each, and the very
    first a quarter of that, so that the first part is written soon (a partition is tagged by
    one worker, a local run's first lines by all of them)."""
    partitions: list[Partition] = []
    for source in inputs:
        chosen = _format_of(source, format)
        first_size = size if partitions else max(1, size // 4)
        if chosen == "jsonl" and not _gzipped(source):
            spans = _line_spans(source, size, first_size)
        else:
            count = _count(source, chosen)
            starts = [0, *range(first_size, max(count, 1), size)]
            spans = [
                (first, min(stop, count), None, None, 1)
                for first, stop in zip(starts, [*starts[1:], max(count, 1)], strict=True)
            ]
        for first, stop, start, end, first_line in spans:
            partitions.append(
                Partition(len(partitions), source, chosen, first, stop, start, end, first_line)
            )
    return partitions


def _format_of(source: str, format: str | None) -> str:
    from ..io.formats import detect_format, is_parquet

    if format:
        return format
    if is_parquet(source):
        return "parquet"
    stream, _ = open_input(source)  # gzip read through, as iter_records reads it
    with stream:
        head = stream.read(1 << 16)
    return detect_format(Path(source).name.removesuffix(".gz"), head)


def _gzipped(source: str) -> bool:
    with open(source, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _count(source: str, format: str) -> int:
    """How many records (papers and rejected records) ``source`` holds: read once here."""
    return sum(
        1
        for item in iter_records(source, format=format, notices=True)
        if not isinstance(item, InputNotice)
    )


def _line_spans(
    source: str, size: int, first_size: int | None = None
) -> list[tuple[int, int, int, int, int]]:
    """Cut a JSON Lines file after its first ``first_size`` lines (default ``size``), then every
    ``size`` (as io.files.lines_of counts lines: LF, CRLF or a lone CR ends one), only ever after
    a LF byte or a lone CR: (first record, stop, start byte, end byte, first line). Record
    indexes here count lines; a partition's tasks count what they read."""
    spans: list[tuple[int, int, int, int, int]] = []
    first_size = first_size or size
    start = offset = lines = lines_at_start = 0
    pending_cr = False
    with open(source, "rb") as handle:
        while chunk := handle.read(1 << 20):
            if pending_cr:
                if chunk.startswith(b"\n"):
                    chunk, offset = chunk[1:], offset + 1
                pending_cr = False
                lines += 1
                if lines - lines_at_start >= (size if spans else first_size):
                    spans.append((lines_at_start, lines, start, offset, lines_at_start + 1))
                    start, lines_at_start = offset, lines
            for match in _LINE_END.finditer(chunk):
                if match.group() == b"\r" and match.end() == len(chunk):
                    pending_cr = True  # a CRLF may be split between chunks
                    continue
                lines += 1
                if lines - lines_at_start >= (size if spans else first_size):
                    end = offset + match.end()
                    spans.append((lines_at_start, lines, start, end, lines_at_start + 1))
                    start, lines_at_start = end, lines
            offset += len(chunk)
    if pending_cr:
        lines += 1
    if offset > start or not spans:
        spans.append((lines_at_start, lines, start, offset, lines_at_start + 1))
    return spans


# --- the task ----------------------------------------------------------------------------------

_TAGGERS: dict[str, Any] = {}  # one per worker process, made on its first task


def _tagger(taxonomy: Taxonomy, config: TaggerConfig, export: str | None):
    """This worker process's tagger for (taxonomy, config): its models load once, on the first
    task, and stay for the next ones. One thread: workers do not fight over cores."""
    key = f"{taxonomy.sha256} {config!r} {export}"
    if key not in _TAGGERS:
        from threadpoolctl import threadpool_limits

        from ..language import embedders
        from ..tagging.pipeline import Tagger

        threadpool_limits(1)
        _undo_malloc_trim()
        if config.embedding_backend == "torch":
            import torch

            torch.set_num_threads(1)
        directory = Path(export) if export and Path(export).is_dir() else None
        embedder = embedders.make_embedder(
            config.embedding_model, config.embedding_backend, directory=directory
        )
        _TAGGERS.clear()
        _TAGGERS[key] = Tagger(taxonomy, config, embedder=embedder)
    return _TAGGERS[key]


def _undo_malloc_trim() -> None:
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which also fixes glibc's
    mmap threshold at 128 KB: every tensor and array above it is mapped and unmapped afresh, and
    tagging takes 1.44x the CPU (measured: 25.5 against 17.8 s for 300 abstracts). Give glibc
    its usual thresholds back (LocalClusters started here do not set the variable at all)."""
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD: glibc's dynamic threshold's ceiling
        libc.mallopt(-1, 64 * 2**20)  # M_TRIM_THRESHOLD: twice that, as glibc keeps it


def _records(partition: Partition) -> Iterator[Any]:
    if partition.start is not None:
        return read_line_range(
            partition.source, partition.start, partition.end, partition.first_line
        )
    if partition.format == "parquet":
        return read_parquet(partition.source, start=partition.first, stop=partition.stop)
    items = (item for item in iter_records(partition.source, format=partition.format, notices=True))
    return _slice(items, partition.first, partition.stop)


def _slice(items: Iterator[Any], first: int, stop: int) -> Iterator[Any]:
    """Records first..stop of a file; its notices (a paper list's header) go with the first
    partition."""
    index = 0
    for item in items:
        if isinstance(item, InputNotice):
            if first == 0:
                yield item
            continue
        if index >= stop:
            return
        if index >= first:
            yield item
        index += 1


def tag_partition(
    partition: Partition,
    directory: str,
    taxonomy: Taxonomy,
    config: TaggerConfig,
    export: str | None,
    part_format: str,
) -> PartResult:
    """Tag one partition into its part file and errors file (each written under a temporary
    name, then renamed), then its ``done`` file. Run on a worker; safe to run twice."""
    tagger = _tagger(taxonomy, config, export)
    out = Path(directory)
    attempt = uuid.uuid4().hex[:8]
    papers, errors, notices = [], [], []
    for item in _records(partition):
        if isinstance(item, InputNotice):
            notices.append(str(item))
        elif isinstance(item, InputError):
            errors.append(rejected_line(item))
        else:
            papers.append(item)
    part = out / f"{partition.name}.{part_format}"
    temporary = out / f".{partition.name}.{attempt}.tmp"
    if part_format == "parquet":
        writer: Any = ParquetWriter(part, temporary=temporary)
        for tagged in tagger.tag_many(papers):
            writer.write(tagged)
        writer.close()
    else:
        with open(temporary, "wb") as stream:
            writer = JsonlWriter(stream)
            for tagged in tagger.tag_many(papers):
                writer.write(tagged)
            os.fsync(stream.fileno())
        os.replace(temporary, part)
    _write_whole(out / f"{partition.name}.errors.jsonl", b"".join(errors), attempt)
    result = PartResult(
        index=partition.index,
        tagged=len(papers),
        rejected=len(errors),
        sha256=sha256(part),
        ids=[paper.id for paper in papers],
        notices=notices,
    )
    done = {k: v for k, v in asdict(result).items() if k != "ids"}
    _write_whole(out / f"{partition.name}.done.json", json.dumps(done).encode(), attempt)
    return result


def _write_whole(path: Path, data: bytes, attempt: str) -> None:
    temporary = path.with_name(f".{path.name}.{attempt}.tmp")
    with open(temporary, "wb") as stream:
        stream.write(data)
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def complete(directory: Path, partition: Partition, part_format: str) -> dict | None:
    """The ``done`` record of a partition whose part is complete and unchanged, else None."""
    part = directory / f"{partition.name}.{part_format}"
    try:
        done = json.loads((directory / f"{partition.name}.done.json").read_text())
        return done if part.is_file() and sha256(part) == done["sha256"] else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- the client --------------------------------------------------------------------------------


def fingerprint(tagger: Any, partitions: list[Partition], part_format: str) -> dict[str, Any]:
    """What must match for ``--resume`` to continue a directory: the configuration (tagger and
    model versions, taxonomy, settings) and the inputs with their sizes and partitions."""
    inputs = sorted({p.source for p in partitions})
    return {
        "provenance": tagger.provenance.model_dump(mode="json"),
        "part_format": part_format,
        "inputs": [{"path": source, "bytes": os.path.getsize(source)} for source in inputs],
        "partitions": [asdict(p) for p in partitions],
    }


def connect(address: str, warn: Callable[[str], None]):
    """A Dask client: ``local`` or ``local:N`` starts a LocalCluster here (N worker processes,
    default one per core, one thread each); anything else is a scheduler's address."""
    from dask.distributed import Client, LocalCluster

    match = re.fullmatch(r"local(?::(\d+))?", address)
    if match:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        workers = int(match.group(1)) if match.group(1) else (cores or 1)
        import importlib.util

        import dask

        dashboard = ":0" if importlib.util.find_spec("bokeh") else None  # it needs bokeh
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            cluster = LocalCluster(  # see _undo_malloc_trim
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=dashboard,
                silence_logs=40,  # logging.ERROR
            )
        return Client(cluster)
    try:
        return Client(address, timeout="30s")
    except (OSError, TimeoutError) as exc:
        raise TaggerError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def tag_on_cluster(
    tagger: Any,
    inputs: Sequence[str],
    directory: str | Path,
    *,
    cluster: str = "local",
    format: str | None = None,
    resume: bool = False,
    part_format: str = "jsonl",
    size: int = PARTITION_SIZE,
    progress: bool = False,
    warn: Callable[[str], None] = print,
    note: Callable[[str], None] = print,
    client: Any = None,
) -> ClusterSummary:
    """Tag ``inputs`` (files or globs) into the directory ``directory`` on a Dask cluster (see
    the module's doc): ``cluster`` is a scheduler's address or ``local`` / ``local:N``;
    ``client``, a dask.distributed Client to use instead. Returns the run's summary; raises
    TaggerError (or InputError) for what a user must fix, before anything is tagged."""
    from ..language import embedders

    out = Path(directory)
    files = expand(inputs)
    for source in files:  # a missing or unreadable file fails before anything starts
        iter_records(source, format=format).close()
    partitions = plan(files, size=size, format=format)
    wanted = fingerprint(tagger, partitions, part_format)
    manifest = out / MANIFEST
    if resume:
        if not manifest.is_file():
            raise TaggerError(
                f"cannot resume: {out} holds no {MANIFEST} (no run was started there)"
            )
        written = json.loads(manifest.read_text())
        if written.get("fingerprint") != wanted:
            raise TaggerError(
                f"cannot resume {out}: {_difference(written.get('fingerprint') or {}, wanted)}; "
                "run with the same inputs and options, or into another directory"
            )
    elif out.exists() and any(out.iterdir()):
        raise TaggerError(
            f"{out} is not empty: tag into a new directory, or continue the run there with --resume"
        )
    out.mkdir(parents=True, exist_ok=True)
    _write_manifest(out, wanted, parts=None)
    summary = ClusterSummary(output=str(out), partitions=len(partitions))
    todo = [p for p in partitions if complete(out, p, part_format) is None]
    summary.ran = len(todo)
    made = embedders.export_dir(tagger.config.embedding_backend)
    export = str(made) if made is not None else None
    own = client is None
    client = client or connect(cluster, warn)
    try:
        summary.dashboard = _dashboard(client)
        if summary.dashboard:
            note(f"Dask dashboard: {summary.dashboard}")
        results = _run(client, todo, out, tagger, export, part_format, progress)
    finally:
        if own:
            cluster_object = getattr(client, "cluster", None)
            client.close()
            if cluster_object is not None:
                cluster_object.close()
    done_of = {}
    for p in partitions:
        done = complete(out, p, part_format)
        if done is None:
            raise TaggerError(f"partition {p.index} did not complete; run again with --resume")
        done_of[p.index] = done
    ids: Counter[str] = Counter()
    for p in partitions:
        result = results.get(p.index)
        if result is not None:
            ids.update(result.ids)
            for notice in result.notices:
                note(notice)
    summary.tagged = sum(d["tagged"] for d in done_of.values())
    summary.rejected = sum(d["rejected"] for d in done_of.values())
    summary.duplicates = sum(count - 1 for count in ids.values() if count > 1)
    if summary.duplicates:
        repeated = [paper_id for paper_id, count in ids.items() if count > 1]
        warn(
            f"{len(repeated):,} paper ids appear more than once (e.g. {repeated[0]!r}); every "
            "record is tagged and kept, in input order"
        )
    _write_manifest(out, wanted, parts=[done_of[p.index] for p in partitions])
    _clean(out)
    return summary


def _run(client, todo, out, tagger, export, part_format, progress) -> dict[int, PartResult]:
    from dask.distributed import as_completed

    if not todo:
        return {}
    taxonomy = client.scatter(tagger.taxonomy, broadcast=True)
    futures = [
        client.submit(
            tag_partition,
            partition,
            str(out),
            taxonomy,
            tagger.config,
            export,
            part_format,
            key=f"tagger-{partition.name}-{uuid.uuid4().hex[:8]}",
            retries=2,
            pure=False,
        )
        for partition in todo
    ]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(futures), unit=" parts", file=sys.stderr, dynamic_ncols=True)
    results = {}
    try:
        for future in as_completed(futures):
            result = future.result()
            results[result.index] = result
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return results


def _dashboard(client) -> str | None:
    """The dashboard's address, when the scheduler serves one (it needs bokeh)."""
    import importlib.util

    if importlib.util.find_spec("bokeh") is None and getattr(client, "cluster", None):
        return None  # a LocalCluster here: no bokeh, no dashboard
    try:
        services = client.scheduler_info().get("services", {})
        return client.dashboard_link if "dashboard" in services else None
    except (AttributeError, KeyError, OSError):
        return None


def _write_manifest(out: Path, wanted: dict, parts: list[dict] | None) -> None:
    data = {"fingerprint": wanted, "complete": parts is not None, "parts": parts or []}
    temporary = out / f".{MANIFEST}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, out / MANIFEST)


def _clean(out: Path) -> None:
    """Temporary files a lost worker left behind."""
    for path in out.glob(".part-*.tmp"):
        path.unlink(missing_ok=True)


def _difference(written: dict, wanted: dict) -> str:
    for key in ("provenance", "part_format", "inputs", "partitions"):
        if written.get(key) != wanted.get(key):
            if key == "provenance":
                a, b = written.get(key) or {}, wanted[key]
                changed = [k for k in b if a.get(k) != b.get(k)]
                return "it was tagged with other " + ", ".join(changed)
            return {
                "part_format": "its parts are in another format",
                "inputs": "its inputs were other files, or have changed size",
                "partitions": "its inputs were split otherwise (--partition-size?)",
            }[key]
    return "its manifest differs"
