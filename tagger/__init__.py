"""tagger: tag research papers with keyphrases and research areas from a YAML taxonomy.

The names below load on first use (PEP 562), so that `tagger --help` and the commands that only
read tagged output never import numpy, the models or the tagging pipeline.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cluster import tag_on_cluster
    from .config import TaggerConfig
    from .diff import diff_tagged
    from .errors import InputError, ModelError, TaggerError, TaxonomyError
    from .output import read_tagged
    from .pipeline import Tagger
    from .query import filter_tagged
    from .readers import read_papers
    from .records import AreaTag, Evidence, Keyphrase, Paper, TaggedPaper
    from .run import RunSummary, retag_files, tag_files
    from .taxonomy import Taxonomy, load_taxonomy

_HOME = {
    "tag_on_cluster": "cluster",
    "TaggerConfig": "config",
    "diff_tagged": "diff",
    "InputError": "errors",
    "ModelError": "errors",
    "TaggerError": "errors",
    "TaxonomyError": "errors",
    "read_tagged": "output",
    "Tagger": "pipeline",
    "tagger_version": "pipeline",
    "filter_tagged": "query",
    "read_papers": "readers",
    "AreaTag": "records",
    "Evidence": "records",
    "Keyphrase": "records",
    "Paper": "records",
    "TaggedPaper": "records",
    "RunSummary": "run",
    "tag_files": "run",
    "retag_files": "run",
    "Taxonomy": "taxonomy",
    "load_taxonomy": "taxonomy",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return import_module(".pipeline", __name__).tagger_version()
    if name in _HOME:
        value = getattr(import_module(f".{_HOME[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tagger' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME, "__version__"])


__all__ = [
    "AreaTag",
    "Evidence",
    "InputError",
    "Keyphrase",
    "ModelError",
    "Paper",
    "RunSummary",
    "Tagger",
    "TaggedPaper",
    "TaggerConfig",
    "TaggerError",
    "Taxonomy",
    "TaxonomyError",
    "diff_tagged",
    "filter_tagged",
    "load_taxonomy",
    "read_papers",
    "read_tagged",
    "retag_files",
    "tag_files",
    "tag_on_cluster",
    "__version__",
]
