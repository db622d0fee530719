"""Tag many files on a Dask cluster: inputs split into partitions, one part file per partition,
and a manifest.

    tagger tag 'arxiv/*.jsonl' -o tagged/ --cluster local:2        # a LocalCluster here
    tagger tag 'arxiv/*.jsonl' -o tagged/ --cluster tcp://sched:8786

The client checks the scheduler's address (:mod:`.connection`), plans the partitions
(:func:`.partitions.plan`: a file's records in order, at most ``size`` each, each with its
content's sha256; a JSON Lines file is cut at line starts and each partition reads only its own
bytes), writes the manifest, and submits one task per partition that has no complete part. A
task tags its records with a tagger made once per worker process (:func:`_tagger`) and writes
``part-NNNNN.jsonl`` (or ``.parquet``) and ``part-NNNNN.errors.jsonl`` under temporary names,
renames them, then writes ``part-NNNNN.done.json`` (its counts, the part's sha256 and the
partition's) the same way: a part is complete when its ``done`` file says so, the part's bytes
match and the partition's content is the one it was tagged from. Dask may run a task twice (a lost
worker, a retry): the second run writes the same bytes over the first, atomically, so no part is
ever duplicated or half written. The JSONL parts, concatenated in order, are the bytes `tagger
tag` writes locally for the same inputs.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..config import CLUSTER_ADDRESS, PART_FORMAT, PARTITION_SIZE, TaggerConfig
from ..errors import InputError, InputNotice, TaggerError
from ..io.display import progress_bar
from ..io.files import sha256
from ..io.inputs import paper_inputs
from ..io.jsonl import JsonlWriter, rejected_line
from ..io.parquet import ParquetWriter
from ..io.parts import MANIFEST, load_manifest
from ..io.readers import iter_records
from ..taxonomy.model import Taxonomy
from .connection import connect, reachable
from .partitions import Partition, expand, plan, read_partition


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


# --- the task ----------------------------------------------------------------------------------

_TAGGERS: dict[str, Any] = {}  # one per worker process, made on its first task


def _tagger(taxonomy: Taxonomy, config: TaggerConfig, export: str | None):
    """This worker process's tagger for (taxonomy, config): its models load once, on the first
    task, and stay for the next ones. One thread: workers do not fight over cores."""
    key = f"{taxonomy.sha256} {config!r} {export}"
    if key not in _TAGGERS:
        from ..tagging.pipeline import worker_tagger

        _undo_malloc_trim()
        directory = Path(export) if export and Path(export).is_dir() else None
        _TAGGERS.clear()
        _TAGGERS[key] = worker_tagger(taxonomy, config, directory)
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
    out = Path(directory)
    attempt = uuid.uuid4().hex[:8]
    papers, errors, notices = [], [], []
    for item in read_partition(partition):  # first: a changed input fails before the models load
        if isinstance(item, InputNotice):
            notices.append(str(item))
        elif isinstance(item, InputError):
            errors.append(rejected_line(item))
        else:
            papers.append(item)
    tagger = _tagger(taxonomy, config, export)
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
    done["input_sha256"] = partition.sha256
    _write_whole(out / f"{partition.name}.done.json", json.dumps(done).encode(), attempt)
    return result


def _write_whole(path: Path, data: bytes, attempt: str) -> None:
    temporary = path.with_name(f".{path.name}.{attempt}.tmp")
    with open(temporary, "wb") as stream:
        stream.write(data)
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def complete(directory: Path, partition: Partition, part_format: str) -> dict | None:
    """The ``done`` record of a partition whose part is complete and unchanged, and was tagged
    from the records the partition holds now; else None."""
    part = directory / f"{partition.name}.{part_format}"
    try:
        done = json.loads((directory / f"{partition.name}.done.json").read_text())
        whole = (
            isinstance(done["tagged"], int)
            and isinstance(done["rejected"], int)
            and done.get("input_sha256") == partition.sha256
        )
        return done if whole and part.is_file() and sha256(part) == done["sha256"] else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


# --- the client --------------------------------------------------------------------------------


def fingerprint(tagger: Any, partitions: list[Partition], part_format: str) -> dict[str, Any]:
    """What must match for ``--resume`` to continue a directory: the configuration (tagger and
    model versions, taxonomy, settings) and the inputs, by absolute path (the same file by a
    relative and an absolute path is the same input), with their sizes and partitions, each
    partition with its content's sha256."""
    inputs = sorted({p.path for p in partitions})
    return {
        "provenance": tagger.provenance.model_dump(mode="json"),
        "part_format": part_format,
        "inputs": [{"path": path, "bytes": os.path.getsize(path)} for path in inputs],
        "partitions": [{k: v for k, v in asdict(p).items() if k != "source"} for p in partitions],
    }


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a part directory, as a mapping with a ``fingerprint`` mapping; a
    TaggerError saying what is wrong with it when it is missing or not a manifest."""
    path = directory / MANIFEST
    if not path.is_file():
        raise TaggerError(
            f"cannot resume: {directory} holds no {MANIFEST} (no run was started there)"
        )
    written, fault = load_manifest(path)  # io.parts owns the manifest's format
    if fault:
        raise TaggerError(
            f"cannot resume: {path} {fault}, so nothing shows which run wrote {directory}; "
            "tag into a new directory"
        )
    return written


def tag_on_cluster(
    tagger: Any,
    inputs: Sequence[str],
    directory: str | Path,
    *,
    cluster: str = CLUSTER_ADDRESS,
    format: str | None = None,
    resume: bool = False,
    part_format: str = PART_FORMAT,
    size: int = PARTITION_SIZE,
    progress: bool = False,
    warn: Callable[[str], None] = print,
    note: Callable[[str], None] = print,
    client: Any = None,
) -> ClusterSummary:
    """Tag ``inputs`` (files or globs) into the directory ``directory`` on a Dask cluster (see
    the module's doc): ``cluster`` is a scheduler's address or ``local`` / ``local:N``
    (anything else is a ValueError); ``client``, a dask.distributed Client to use instead.
    Returns the run's summary; raises TaggerError (or InputError) for what a user must fix,
    before anything is tagged: a scheduler that does not answer, inputs that are not the
    records a resumed directory was tagged from, a manifest that is not one."""
    from ..language import model_files

    out = Path(directory)
    if client is None:
        cluster = reachable(cluster)  # a wrong address fails now, not after the planning
    files = paper_inputs(expand(inputs), note)  # a directory: the files of papers in it
    for source in files:  # a missing or unreadable file fails before anything starts
        iter_records(source, format=format).close()
    partitions = plan(files, size=size, format=format)
    wanted = fingerprint(tagger, partitions, part_format)
    if resume:
        written = read_manifest(out)["fingerprint"]
        if written != wanted:
            raise TaggerError(
                f"cannot resume {out}: {_difference(written, wanted)}; "
                "run with the same inputs and options, or into another directory"
            )
    elif out.exists() and any(out.iterdir()):
        raise TaggerError(
            f"{out} is not empty: tag into a new directory, or continue the run there with --resume"
        )
    note(f"tagging with {tagger.taxonomy.label}")
    if (unfitted := tagger.learned.note()) is not None:
        note(unfitted)
    out.mkdir(parents=True, exist_ok=True)
    _write_manifest(out, wanted, parts=None)
    summary = ClusterSummary(output=str(out), partitions=len(partitions))
    todo = [p for p in partitions if complete(out, p, part_format) is None]
    summary.ran = len(todo)
    made = model_files.export_dir(tagger.config.embedding_backend)
    export = str(made) if made is not None else None
    own, interrupted = client is None, False
    quiet = _quiet_dask()
    try:
        client = client or connect(cluster)
        summary.dashboard = _dashboard(client)
        if summary.dashboard:
            note(f"Dask dashboard: {summary.dashboard}")
        results = _run(client, todo, out, tagger, export, part_format, progress)
    except BaseException as exc:
        interrupted = not isinstance(exc, Exception)  # Ctrl-C, SIGTERM: the user stops the run
        raise
    finally:
        if own and client is not None:
            _close(client, quiet=interrupted)
        if not interrupted:  # interrupted, the process ends: Dask stays quiet till it does
            quiet()
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
            os.path.abspath(out),  # a worker's working directory is not this one's
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
    results = {}
    done = as_completed(futures)
    if progress:  # a part at a time: the parts' papers tag on the cluster's workers
        done = progress_bar(done, total=len(futures), unit="parts")
    for future in done:
        result = future.result()
        results[result.index] = result
    return results


DASK_LOGGERS = ("distributed", "bokeh", "tornado")


def _quiet_dask() -> Callable[[], None]:
    """Silence Dask's logging below WARNING while a run lasts: a LocalCluster's scheduler runs in
    this process and logs, at INFO, every worker and client that comes and goes (and whatever
    logging the user set up would print it). Each logger of Dask's set below WARNING is raised
    to it; returns what sets them back."""
    import distributed  # noqa: F401  (importing it sets its loggers' levels: first, then ours)

    names = [
        name
        for name in list(logging.root.manager.loggerDict)
        if name.split(".", 1)[0] in DASK_LOGGERS
    ]
    loggers = [logging.getLogger(name) for name in {*DASK_LOGGERS, *names}]
    raised = [(logger, logger.level) for logger in loggers if logger.level < logging.WARNING]
    for logger, level in raised:
        if level != logging.NOTSET or logger.parent is logging.root:
            logger.setLevel(logging.WARNING)

    def restore() -> None:
        for logger, level in raised:
            logger.setLevel(level)

    return restore


def _close(client: Any, *, quiet: bool) -> None:
    """Close a client this run made, and its LocalCluster if it made one. After an interrupt,
    what Dask says while it drops the run's work (a task cut short, data lost with a worker) is
    no news to the user who stopped it: Dask's and asyncio's logs are silenced meanwhile."""
    loggers = [logging.getLogger(name) for name in ("distributed", "asyncio", "tornado")]
    levels = [logger.level for logger in loggers]
    if quiet:
        for logger in loggers:
            logger.setLevel(logging.CRITICAL + 1)
    try:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


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
    """What differs between the fingerprint a directory's manifest holds and this run's, in
    words; a manifest edited into another shape only differs."""
    provenance = wanted["provenance"]
    if written.get("provenance") != provenance:
        before = _mapping(written.get("provenance"))
        changed = [key for key in provenance if before.get(key) != provenance[key]]
        return "it was tagged with other " + ", ".join(changed)
    if written.get("part_format") != wanted["part_format"]:
        return "its parts are in another format"
    sizes = {i.get("path"): i.get("bytes") for i in _mappings(written.get("inputs"))}
    for item in wanted["inputs"]:
        if item["path"] not in sizes:
            return f"its inputs were other files ({item['path']} was not one of them)"
        then = sizes[item["path"]]
        if then != item["bytes"]:
            then = f"{then:,}" if isinstance(then, int) else repr(then)
            return f"{item['path']} has changed since: {then} bytes then, {item['bytes']:,} now"
    if len(sizes) != len(wanted["inputs"]):
        gone = sorted(str(path) for path in sizes.keys() - {i["path"] for i in wanted["inputs"]})
        return f"its inputs were other files ({gone[0]} is not given now)"
    before_parts = _mappings(written.get("partitions"))
    for then, now in zip(before_parts, wanted["partitions"], strict=False):
        if any(then.get(key) != value for key, value in now.items() if key != "sha256"):
            break
        if then.get("sha256") != now["sha256"]:
            partition = Partition(source=now["path"], **now)
            return (
                f"{now['path']} has changed since: its {partition.extent} ({partition.name}) "
                "are not the records tagged there"
            )
    return "its inputs were split otherwise (--partition-size?)"


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _mappings(value: Any) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
