"""Writing a model directory (tagging.model reads it): its parts, and the record that names the
taxonomy they were fitted for, the judged papers they were fitted on, the settings and constants
their features were made with, and each file's sha256.

The directory is made whole under a temporary name beside the target and renamed into place, so a
reader never sees half a model; a directory that is not a model (no model.json in it, and not
empty) is never replaced.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ..config import TaggerConfig, tagger_version
from ..errors import TaggerError
from ..io.files import sha256, write_directory
from ..tagging.model import FILES, FORMAT, RECORD, feature_constants
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
