"""tagger: tag research papers with keyphrases and research areas from a YAML taxonomy.

The public names, listed once in PUBLIC with the module that holds each, load on first use (PEP
562), so that `tagger --help` and the commands that only read tagged output never import numpy,
the models or the tagging pipeline.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

PUBLIC = {
    "AreaTag": "records",
    "Evidence": "records",
    "InputError": "errors",
    "Keyphrase": "records",
    "ModelError": "errors",
    "Paper": "records",
    "RunSummary": "runs.local",
    "Tagger": "tagging.pipeline",
    "TaggedPaper": "records",
    "TaggerConfig": "config",
    "TaggerError": "errors",
    "Taxonomy": "taxonomy.model",
    "TaxonomyError": "errors",
    "diff_tagged": "corpus.diff",
    "evaluate_judged": "corpus.judged",
    "filter_tagged": "corpus.query",
    "fit_model": "fitting.fit",
    "load_taxonomy": "taxonomy.loading",
    "read_papers": "io.readers",
    "read_tagged": "io.tagged",
    "retag_files": "runs.local",
    "tag_files": "runs.local",
    "tag_on_cluster": "runs.cluster",
}
__all__ = [*PUBLIC, "__version__"]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return import_module(".config", __name__).tagger_version()
    if name in PUBLIC:
        value = getattr(import_module(f".{PUBLIC[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tagger' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
