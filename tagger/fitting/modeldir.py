"""Writing a model directory (tagging.model reads it): its parts, and the record that names the
taxonomy they were fitted for, the judged papers they were fitted on, the settings and constants
their features were made with, and each file's sha256.

The directory is made whole under a temporary name beside the target and exchanged with the old
one in one step (io.files.write_directory), so a reader never sees half a model, nor none. What
is not a model's is never replaced (:func:`check_target`): a directory that holds anything else
(no model.json in it, or a user's file beside a model's), and anything inside tagger's installed
package, whose packaged model a fit must not become.
"""

from __future__ import annotations

import datetime
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ..config import TaggerConfig, tagger_version
from ..errors import TaggerError
from ..io import packaged
from ..io.files import sha256, write_directory
from ..tagging.model import FILES, FORMAT, RECORD, FittedModel, feature_constants
from ..taxonomy.model import Taxonomy


def check_target(where: str | Path) -> None:
    """Refuse, with a TaggerError that says what to do, a directory a model may not be written
    to: one inside tagger's installed package (symlinks resolved), a file, a directory that
    holds something other than a model, and a model's directory that also holds files of a
    user's (writing the model anew replaces the whole directory, and would delete them). A
    directory that does not exist, an empty one and a model's alone are fine. ``tagger fit``
    calls it before it fits anything; save_model calls it again."""
    where = Path(where)
    refused = f"cannot write a model to {where}"
    package = packaged.package_dir()
    inside = where.resolve()
    if inside == package or package in inside.parents:
        raise TaggerError(
            f"{refused}: it is inside tagger's installed package ({package}), whose packaged "
            "model tags when no --model is given: choose a directory of your own, and tag with "
            "--model DIR"
        )
    if not where.exists():
        return
    if not where.is_dir():
        raise TaggerError(f"{refused}: it is a file: give a new directory, or an old model's")
    names = sorted(path.name for path in where.iterdir())
    if names and RECORD not in names:
        raise TaggerError(
            f"{refused}: it is a directory that holds something other than a model "
            f"({_named(names)}): give a new directory, or an old model's"
        )
    theirs = [name for name in names if name not in _model_files(where)]
    if theirs:
        raise TaggerError(
            f"{refused}: it holds {_named(theirs)} besides the model's files, and writing the "
            "model anew replaces the whole directory: move them elsewhere, or choose another "
            "directory"
        )


def _model_files(where: Path) -> set[str]:
    """The names of the files of the model in ``where``: what this version writes, and what
    its record lists (a former format's)."""
    names = {RECORD, *FILES.values()}
    try:
        listed = json.loads((where / RECORD).read_bytes()).get("files")
    except (OSError, ValueError, AttributeError):
        return names
    return names | (set(listed) if isinstance(listed, dict) else set())


def _named(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


class Saveable(Protocol):
    def save(self, path: str | Path) -> None: ...


def save_model(
    where: Path,
    parts: Mapping[str, Saveable],
    *,
    taxonomy: Taxonomy,
    fitted_on: Mapping[str, Any],
    config: TaggerConfig,
    about: Mapping[str, Any] | None = None,
    constants: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Write ``parts`` (keys of tagging.model.FILES) and model.json into the directory
    ``where``; the record written. ``config``: what the papers of the fit were read and their
    features made with (its settings that shape features are recorded, with this version's
    constants: tagging.model.Learned.check reads them). :func:`check_target` first."""
    check_target(where)

    def fill(work: Path) -> dict[str, Any]:
        for part, value in parts.items():
            value.save(work / FILES[part])
        return {
            "format": FORMAT,
            "taxonomy": {
                "version": taxonomy.version,
                "sha256": taxonomy.sha256,
                "source": taxonomy.source,
                "areas": len(taxonomy.areas),
                "ids": [area.id for area in taxonomy.areas],
            },
            "fitted_on": dict(fitted_on),
            "tagger_version": tagger_version(),
            "date": datetime.date.today().isoformat(),
            **dict(about or {}),
            "features": {
                "settings": config.shaping("evidence", "votes"),
                "constants": feature_constants() | dict(constants or {}),
            },
            "files": {FILES[part]: sha256(work / FILES[part]) for part in sorted(parts)},
        }

    return write_directory(where, fill, record=RECORD, replace=True)


def upgrade_model(where: Path) -> dict[str, Any]:
    """Write a model directory of a former format (tagging.model.FORMER) again in this version's:
    its weighers with today's feature names, its record with the format and the settings and
    constants its features were made with; its other files and figures unchanged. Tagging with
    it gives the same tags before and after (only a tagged line's provenance names the rewritten
    record). The record written."""
    from ..tagging.weigher import Weigher
    from .weighing import FIRST_STAGE_AT

    model = FittedModel.load(where)
    check_target(where)
    if model.record.get("format", 1) == FORMAT:
        return model.record
    features = model.features
    features = features | {"constants": features["constants"] | {"first_stage_at": FIRST_STAGE_AT}}
    record = {key: value for key, value in model.record.items() if key != "files"}
    record["settings"] = {
        key: value
        for key, value in record.get("settings", {}).items()
        if key not in features["settings"]
    }
    weighers = {part: Weigher.load(where / FILES[part]) for part in ("weigher", "rules")}

    class Copy:
        def __init__(self, path: Path) -> None:
            self.path = path

        def save(self, path: str | Path) -> None:
            shutil.copyfile(self.path, path)

    def fill(work: Path) -> dict[str, Any]:
        names = {}
        for part, name in FILES.items():
            if name in model.record["files"]:
                (weighers[part] if part in weighers else Copy(where / name)).save(work / name)
                names[name] = sha256(work / name)
        return {
            "format": FORMAT,
            **record,
            "features": features,
            "files": dict(sorted(names.items())),
        }

    return write_directory(where, fill, record=RECORD, replace=True)
