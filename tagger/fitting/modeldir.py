"""Writing a model directory (tagging.model reads it): its parts, and the record that names the
taxonomy they were fitted for, the judged papers they were fitted on, the settings and constants
their features were made with, and each file's sha256.

The directory is made whole under a temporary name beside the target and renamed into place, so a
reader never sees half a model; a directory that is not a model (no model.json in it, and not
empty) is never replaced.
"""

from __future__ import annotations

import datetime
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ..config import TaggerConfig, tagger_version
from ..errors import TaggerError
from ..io.files import sha256, write_directory
from ..tagging.model import FILES, FORMAT, RECORD, FittedModel, feature_constants
from ..taxonomy.model import Taxonomy


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
    constants: tagging.model.Learned.check reads them)."""
    if where.exists() and not (where / RECORD).is_file() and any(where.iterdir()):
        raise TaggerError(
            f"{where} is a directory that holds something other than a model: "
            "give a new directory, or an old model's, to write the model to"
        )

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
