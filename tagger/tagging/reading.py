"""Reading papers: what the rules and the weigher see of each, before any vote or score.

A :class:`Reader` runs spaCy, extracts the keyphrases, embeds the paper and matches the taxonomy's
rules; a :class:`Reading` is what it found, plain data: the paper, its analysis, keyphrases and
stored vector, its similarity to each area's description, and its rule hits. Tagging reads papers
this way and then votes and weighs; retagging reads them again from tagged lines (their stored
keyphrases and vector stand in for the models); a fit reads its judged papers once and proposes
their candidates again with each fold's votes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..config import TaggerConfig
from ..language import embedders, embedding_cache, vectors
from ..language.keyphrases import Described, KeyphraseExtractor
from ..language.text import Analysis, analyse, load_spacy, paper_text
from ..records import Keyphrase, Paper
from ..taxonomy.model import Taxonomy
from ..taxonomy.rules import Hit, RuleSet
from .neighbours import abstract_key

# spaCy runs its tagger over this many texts at once: its default (1,000, so a whole batch of
# papers) holds about 260 MB of activations for 64 abstracts, 16 about 70 MB, 8 about 35 MB
# (traced peaks), and 8 is as fast as 16 (benchmarks/stages.py).
SPACY_BATCH = 8


@dataclass(frozen=True, eq=False)
class Reading:
    """One paper as the rules and the weigher see it."""

    paper: Paper
    analysis: Analysis
    keyphrases: list[Keyphrase]
    vector: str  # the paper's embedding as stored (language.vectors.encode)
    similarity: dict[str, float]  # cosine of the paper's opening and each area's description
    hits: list[Hit]  # every rule hit, vetoed by exclusions, with keyphrase ranks

    @property
    def code(self) -> np.ndarray:
        """The stored vector as int8 values (what neighbours and the area model read)."""
        return vectors.decode(self.vector)

    @property
    def key(self) -> int:
        """The abstract's key (tagging.neighbours.abstract_key): a paper is never its own
        neighbour."""
        return abstract_key(self.paper.abstract)

    @property
    def text(self) -> str:
        """The title and abstract as the area model reads them (language.text.paper_text)."""
        return paper_text(self.paper.title, self.paper.abstract)


class Reader:
    """Reads papers with a taxonomy's rules and a configuration's models, loaded on first use.

    ``embedder`` replaces the model named by ``config.embedding_model``. With ``words_only``
    (retagging), spaCy loads without its part-of-speech tagger (the rules read words and
    sentences, not parts of speech), and the embedding model only if an area's description is
    not in the cache: keyphrases and vectors come from the tagged lines.
    """

    def __init__(
        self,
        taxonomy: Taxonomy,
        config: TaggerConfig,
        *,
        embedder: embedders.Embedder | None = None,
        words_only: bool = False,
    ) -> None:
        self.taxonomy = taxonomy
        self.config = config
        self._given_embedder = embedder
        self.words_only = words_only

    @cached_property
    def embedder(self) -> embedders.Embedder:
        return self._given_embedder or embedders.make_embedder(
            self.config.embedding_model, self.config.embedding_backend
        )

    @property
    def embedder_given(self) -> bool:
        """Whether an embedder object was given, which worker processes cannot be given."""
        return self._given_embedder is not None

    @cached_property
    def nlp(self):
        """spaCy: the whole pipeline to read a paper; to read it again, its tokenizer and
        sentencizer alone."""
        return load_spacy(self.config.spacy_model, tagging=not self.words_only)

    @cached_property
    def rules(self) -> RuleSet:
        return RuleSet(self.taxonomy, spacy_model=self.config.spacy_model)

    @cached_property
    def keyphrases(self) -> KeyphraseExtractor:
        return KeyphraseExtractor(self.embedder, self.config)

    @cached_property
    def area_vectors(self) -> np.ndarray:
        """One int16 row per area of the taxonomy (language.vectors.area_codes): the embedding of
        what the area is about (kept on disk, text by text: a taxonomy that adds an area embeds
        that one alone; language.embedding_cache.lasting_embed)."""
        texts = [area.prototype() for area in self.taxonomy.areas]
        known = embedding_cache.fingerprint(self.embedder)
        if known is None:
            return vectors.area_codes(self.embedder.embed(texts))
        made = embedding_cache.lasting_embed(self.embedder, texts, fingerprint=known)
        return vectors.area_codes(made)

    def read(self, papers: list[Paper]) -> list[Reading]:
        """Each paper read: one spaCy pass, one embedding call for the batch."""
        texts, analyses = self.analyse(papers)
        embedded, states = self.keyphrases.embed_openings(texts)
        keyphrases = self.keyphrases.extract(texts, analyses, embedded, states)
        stored = [vectors.encode(v) for v in embedded]
        return self._readings(papers, analyses, keyphrases, stored)

    def read_again(
        self, papers: list[Paper], keyphrases: list[list[Keyphrase]], stored: list[str]
    ) -> list[Reading]:
        """Each paper read again from what its tagged line stores, its keyphrases and vector:
        the Reading :meth:`read` made of it, if the line was written with this configuration."""
        _, analyses = self.analyse(papers)
        return self._readings(papers, analyses, keyphrases, stored)

    def extract_keyphrases(self, papers: list[Paper]) -> list[list[Keyphrase]]:
        """The keyphrases of each paper, without reading it further."""
        texts, analyses = self.analyse(papers)
        return self.keyphrases.extract(texts, analyses)

    def keyphrase_candidates(self, papers: list[Paper]) -> list[Described]:
        """Every shortlisted keyphrase candidate of each paper, with what the keyphrase models
        read of it (``python -m tagger.fitting.keyphrases``, ``.keyphrase_ranking``)."""
        texts, analyses = self.analyse(papers)
        return self.keyphrases.described(texts, analyses)

    def analyse(self, papers: list[Paper]) -> tuple[list[str], list[Analysis]]:
        """The papers' texts and analyses. spaCy runs in a memory zone: the strings and
        tokenizer cache entries a batch adds are freed after it (an Analysis holds Python
        strings, never the Doc), so a worker's memory does not grow with the corpus."""
        texts = [paper_text(p.title, p.abstract) for p in papers]
        with self.nlp.memory_zone():
            docs = self.nlp.pipe(texts, batch_size=SPACY_BATCH)
            analyses = [analyse(d, p.title, p.abstract) for d, p in zip(docs, papers, strict=True)]
        return texts, analyses

    def _readings(
        self,
        papers: list[Paper],
        analyses: list[Analysis],
        keyphrases: list[list[Keyphrase]],
        stored: list[str],
    ) -> list[Reading]:
        """The readings; a paper's similarity to each area comes from its vector as stored
        (vectors.cosines), so that a paper read again is read as it was."""
        ids = [area.id for area in self.taxonomy.areas]
        similarities = vectors.cosines(stored, self.area_vectors) if papers else []
        return [
            Reading(
                paper,
                analysis,
                phrases,
                vector,
                dict(zip(ids, row.tolist(), strict=True)),
                self.rules.match(analysis, phrases),
            )
            for paper, analysis, phrases, vector, row in zip(
                papers, analyses, keyphrases, stored, similarities, strict=True
            )
        ]
