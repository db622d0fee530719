"""tagger: tag research papers with keyphrases and research areas from a YAML taxonomy."""

from .config import TaggerConfig
from .errors import InputError, ModelError, TaggerError, TaxonomyError
from .output import read_tagged
from .pipeline import Tagger, tagger_version
from .query import filter_tagged
from .readers import read_papers
from .records import AreaTag, Evidence, Keyphrase, Paper, TaggedPaper
from .run import RunSummary, tag_files
from .taxonomy import Taxonomy, load_taxonomy

__version__ = tagger_version()

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
    "filter_tagged",
    "load_taxonomy",
    "read_papers",
    "read_tagged",
    "tag_files",
    "__version__",
]
