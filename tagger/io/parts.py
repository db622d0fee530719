"""A part directory of `tagger tag --cluster`, read: which of its files are the output, proved
whole before a line of them is read.

``manifest.json`` names the run's partitions and, once the run has finished (``"complete":
true``), every part's sha256. The readers read exactly those parts, in order, each checked
against its sha256 first: a stray ``part-00001.bak.jsonl``, a ``.parquet`` beside the ``.jsonl``
parts or a file copied in is never read. A directory whose run has not finished, whose manifest
is missing, or whose parts are missing or changed is refused (an :class:`InputError` saying what
is wrong and how to go on); given ``incomplete``, its intact parts are read instead, and what is
left out is passed to it (the command line warns, and exits 1).

The run writes a part, then ``part-NNNNN.done.json`` with the part's sha256 (runs.cluster): in an
unfinished directory, a part is intact when its ``done`` file says so and its bytes agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError
from .files import sha256

MANIFEST = "manifest.json"
PART_FORMATS = ("jsonl", "parquet")


def part_name(index: int) -> str:
    """The name a partition's files start with: ``part-00007``."""
    return f"part-{index:05d}"


_PART_NAME = re.compile(r"part-\d{5,}\.(?:jsonl|parquet)")
_SHA256 = re.compile(r"[0-9a-f]{64}")

Incomplete = Callable[[InputError], None]


def part_files(directory: Path) -> list[Path]:
    """Every file of ``directory`` named like a part, in order, whatever the manifest says: what
    is there, not what is read (:func:`parts_to_read` says that)."""
    return sorted(
        path
        for path in directory.iterdir()
        if path.name.startswith("part-")
        and path.suffix in (".jsonl", ".parquet")
        and not path.name.endswith(".errors.jsonl")
    )


def parts_to_read(directory: Path, incomplete: Incomplete | None = None) -> list[Path]:
    """The parts of a part directory to read, in order, each checked against its sha256.

    Raises InputError for a directory that is not a whole run's output (no manifest, an
    unfinished run, a part missing or changed), unless ``incomplete`` is given: then the intact
    parts are returned and an InputError saying what is left out is passed to it."""
    name = str(directory)
    manifest = directory / MANIFEST
    if not manifest.is_file():
        found = [p for p in part_files(directory) if _PART_NAME.fullmatch(p.name)]
        if not found:
            raise InputError(
                "is a directory, not a file, and holds no part files (part-00000.jsonl, ...) of "
                "`tagger tag --cluster`",
                source=name,
            )
        problem = InputError(
            f"holds part files but no {MANIFEST}, so they cannot be checked (was it copied "
            "without it?)",
            source=name,
        )
        if incomplete is None:
            raise _refusal(problem)
        incomplete(_left_out(problem, "reading every part file found, unchecked"))
        return found
    data = read_manifest(directory)
    part_format = data["fingerprint"]["part_format"]
    expected = [p["index"] for p in data["fingerprint"]["partitions"]]
    if data["complete"]:
        checks = {part["index"]: part["sha256"] for part in data["parts"]}
    else:
        checks = {index: _done_sha256(directory, index) for index in expected}
    intact, problems = [], []
    for index in expected:
        path = directory / f"{part_name(index)}.{part_format}"
        digest = checks.get(index)
        if digest is None:
            problems.append(f"{path.name} is not done")
        elif not path.is_file():
            problems.append(f"{path.name} is missing")
        elif sha256(path) != digest:
            problems.append(f"{path.name} is not the file the run wrote (its sha256 differs)")
        else:
            intact.append(path)
    if not problems:
        return intact
    if data["complete"]:
        summary = f"{len(problems)} of its {len(expected)} parts are missing or changed"
        how = "run the tagging again into a new directory"
    else:
        summary = (
            f"the run writing it has not finished ({MANIFEST}: complete: false): "
            f"{len(intact)} of its {len(expected)} parts are done"
        )
        how = "finish it with the same `tagger tag ... --cluster ... --resume`"
    problem = InputError(f"{summary} ({_first(problems)}); {how}", source=name)
    if incomplete is None:
        raise _refusal(problem)
    incomplete(_left_out(problem, f"reading the {len(intact)} intact parts of {len(expected)}"))
    return intact


def load_manifest(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A manifest file's content, or what is wrong with it as words that follow its name ("is
    not JSON (...)", "has no fingerprint ..."): an object with a ``fingerprint`` object, what
    every reader of a manifest needs (the cluster's ``--resume`` among them). OSError reaches
    the caller."""
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return None, f"is not JSON ({str(exc).splitlines()[0][:80]})"
    if not isinstance(data, dict):
        return None, f"holds a JSON {type(data).__name__}, not a manifest's object"
    if not isinstance(data.get("fingerprint"), dict):
        return None, "has no fingerprint (the inputs and configuration of its run)"
    return data, None


def read_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of a part directory, checked for what the readers use of it: its
    ``fingerprint``'s ``part_format`` and ``partitions`` (each with its ``index``),
    ``complete``, and, when complete, a ``parts`` entry with a sha256 for every partition.
    Raises InputError, in one line, for anything else (a file edited by hand, or cut short)."""
    path = directory / MANIFEST
    try:
        data, fault = load_manifest(path)
    except OSError as exc:
        raise InputError(f"cannot read it: {exc.strerror or exc}", source=str(path)) from None
    problem = fault or _manifest_problem(data)
    if problem:
        raise InputError(f"{problem}: {_REWRITE}", source=str(path))
    return data


_REWRITE = "not a manifest tagger wrote (run the tagging again into a new directory)"


def _manifest_problem(data: Any) -> str | None:
    fingerprint = data["fingerprint"]
    if fingerprint.get("part_format") not in PART_FORMATS:
        return f"'fingerprint.part_format' is not one of {', '.join(PART_FORMATS)}"
    partitions = fingerprint.get("partitions")
    if not isinstance(partitions, list) or not all(
        isinstance(p, dict) and _is_index(p.get("index")) for p in partitions
    ):
        return "'fingerprint.partitions' is not a list of partitions with their 'index'"
    indexes = [p["index"] for p in partitions]
    if len(set(indexes)) != len(indexes):
        return "'fingerprint.partitions' names a partition twice"
    if not isinstance(data.get("complete"), bool):
        return "'complete' is not true or false"
    parts = data.get("parts")
    if not isinstance(parts, list):
        return "'parts' is not a list"
    if data["complete"]:
        if not all(
            isinstance(p, dict)
            and _is_index(p.get("index"))
            and isinstance(p.get("sha256"), str)
            and _SHA256.fullmatch(p["sha256"])
            for p in parts
        ):
            return "'parts' is not a list of parts with their 'index' and 'sha256'"
        if sorted(p["index"] for p in parts) != sorted(indexes):
            return "'parts' does not name each partition of 'fingerprint.partitions' once"
    return None


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _done_sha256(directory: Path, index: int) -> str | None:
    """The sha256 a partition's ``done`` file records, if it has one that can be read."""
    try:
        done = json.loads((directory / f"{part_name(index)}.done.json").read_bytes())
    except (OSError, ValueError):
        return None
    digest = done.get("sha256") if isinstance(done, dict) else None
    return digest if isinstance(digest, str) and _SHA256.fullmatch(digest) else None


def _first(problems: list[str]) -> str:
    more = len(problems) - 1
    return problems[0] + (f", and {more:,} more" if more else "")


def _refusal(problem: InputError) -> InputError:
    return InputError(
        f"{problem.reason}; or read what is intact with --incomplete", source=problem.source
    )


def _left_out(problem: InputError, doing: str) -> InputError:
    return InputError(f"{doing}: {problem.reason}", source=problem.source)
