"""tagger: tag research papers with keyphrases and research areas from a YAML taxonomy."""

from .errors import InputError, ModelError, TaggerError, TaxonomyError
from .pipeline import Tagger, tagger_version
from .readers import read_papers
from .records import AreaTag, Evidence, Keyphrase, Paper, TaggedPaper
from .taxonomy import Taxonomy, load_taxonomy

__version__ = tagger_version()

__all__ = [
    "AreaTag", "Evidence", "InputError", "Keyphrase", "ModelError", "Paper", "Tagger",
    "TaggedPaper", "TaggerError", "Taxonomy", "TaxonomyError", "load_taxonomy", "read_papers",
    "__version__",
]
