"""tagger: tag research papers with keyphrases and research areas from a YAML taxonomy.

The names below load on first use (PEP 562), so that `tagger --help` and the commands that only
read tagged output never import numpy, the models or the tagging pipeline.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import TaggerConfig
    from .corpus.diff import diff_tagged
    from .corpus.query import filter_tagged
    from .errors import InputError, ModelError, TaggerError, TaxonomyError
    from .io.readers import read_papers
    from .io.tagged import read_tagged
    from .records import AreaTag, Evidence, Keyphrase, Paper, TaggedPaper
    from .runs.cluster import tag_on_cluster
    from .runs.local import RunSummary, retag_files, tag_files
    from .tagging.pipeline import Tagger
    from .taxonomy.loading import load_taxonomy
    from .taxonomy.model import Taxonomy

_HOME = {
    "tag_on_cluster": "runs.cluster",
    "TaggerConfig": "config",
    "diff_tagged": "corpus.diff",
    "InputError": "errors",
    "ModelError": "errors",
    "TaggerError": "errors",
    "TaxonomyError": "errors",
    "read_tagged": "io.tagged",
    "Tagger": "tagging.pipeline",
    "tagger_version": "config",
    "filter_tagged": "corpus.query",
    "read_papers": "io.readers",
    "AreaTag": "records",
    "Evidence": "records",
    "Keyphrase": "records",
    "Paper": "records",
    "TaggedPaper": "records",
    "RunSummary": "runs.local",
    "tag_files": "runs.local",
    "retag_files": "runs.local",
    "Taxonomy": "taxonomy.model",
    "load_taxonomy": "taxonomy.loading",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return import_module(".config", __name__).tagger_version()
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
