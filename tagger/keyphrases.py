"""Keyphrases: noun-phrase candidates from spaCy's POS tags, variants merged, ranked by KeyBERT.

Candidates are runs of adjectives and nouns that end in a noun ("policy gradient", "graph neural
networks"), never n-grams glued across removed stop words. Variants share one normalised form:
plural and singular, case, hyphenation, and an acronym the paper defines with its long form
("graph neural networks (GNNs)" and later "GNNs"). KeyBERT then ranks each paper's candidates by
cosine similarity to the paper, with MMR for diversity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .config import TaggerConfig
from .embedders import CachedEmbedder, Embedder
from .records import Keyphrase, Span
from .text import Analysis, Token, acronym_singular, is_acronym

_HEAD = frozenset({"NOUN", "PROPN"})
_MODIFIER = frozenset({"ADJ", "NOUN", "PROPN"})
# Words that open many noun phrases but say nothing about the topic.
_GENERIC_MODIFIERS = frozenset(
    [
        "novel",
        "new",
        "existing",
        "extensive",
        "various",
        "different",
        "several",
        "significant",
        "current",
        "recent",
        "prior",
        "previous",
        "standard",
        "simple",
        "general",
        "specific",
        "particular",
        "certain",
        "key",
        "main",
        "major",
        "many",
        "most",
        "other",
        "such",
        "same",
        "strong",
        "better",
        "best",
        "superior",
        "effective",
        "efficient",
        "empirical",
        "comprehensive",
        "remarkable",
        "promising",
        "first",
        "second",
        "third",
        "further",
        "additional",
        "diverse",
        "wide",
        "broad",
        "large-scale",
        "substantial",
    ]
)
# Words the tagger calls nouns that never end a phrase.
_NOT_HEADS = frozenset(
    ["neural", "deep", "based", "aware", "driven", "free", "specific", "agnostic", "guided"]
)
_ADJECTIVE_SUFFIXES = ("al", "ic", "ous", "ive", "able", "ible", "ed", "ful", "less", "ary", "ular")
# Heads too generic to be a keyphrase on their own.
_GENERIC_HEADS = frozenset(
    [
        "method",
        "approach",
        "paper",
        "work",
        "result",
        "performance",
        "framework",
        "model",
        "task",
        "problem",
        "study",
        "experiment",
        "technique",
        "way",
        "setting",
        "analysis",
        "solution",
        "improvement",
        "advantage",
        "issue",
        "challenge",
        "datum",
        "data",
        "number",
        "time",
        "step",
        "set",
        "use",
        "case",
        "term",
        "effect",
        "impact",
        "ability",
        "lack",
        "type",
        "form",
        "part",
        "field",
        "range",
        "level",
        "state",
        "strategy",
        "process",
        "scheme",
        "system",
        "baseline",
        "art",
    ]
)
# Gerunds that name things in ML ('deep learning', 'prompt tuning'), whatever the tagger says.
_GERUND_NOUNS = frozenset(
    [
        "learning",
        "training",
        "pretraining",
        "tuning",
        "finetuning",
        "matching",
        "mining",
        "captioning",
        "reasoning",
        "planning",
        "modeling",
        "modelling",
        "forecasting",
        "clustering",
        "prompting",
        "sampling",
        "decoding",
        "pruning",
        "editing",
        "understanding",
        "answering",
        "unlearning",
        "rendering",
        "tracking",
        "parsing",
        "labeling",
        "labelling",
        "embedding",
        "pooling",
        "scheduling",
        "routing",
        "hashing",
        "denoising",
        "inpainting",
        "watermarking",
        "jailbreaking",
        "steering",
        "programming",
        "computing",
        "processing",
        "engineering",
        "encoding",
        "imitation",
        "retrieval",
        "generation",
        "detection",
        "segmentation",
    ]
)


# The most tokens a candidate may span: 'multi-agent' is one word of max_words but three tokens,
# and a chain of hyphenated words must not make a paper's cost grow with the square of its length.
_MAX_TOKENS = 12


@dataclass(slots=True)
class Candidate:
    """One normalised phrase of a paper, with every place it occurs."""

    key: str
    text: str  # the first occurrence, as written
    spans: list[Span] = field(default_factory=list)
    first: int = 0  # position of the first occurrence, in words
    where: set[tuple[str, int, int]] = field(default_factory=set)  # the spans, to look up

    def add(self, span: Span) -> None:
        place = (span.field, span.start, span.end)
        if place not in self.where:
            self.where.add(place)
            self.spans.append(span)


def candidates(analysis: Analysis, *, max_words: int) -> dict[str, Candidate]:
    """Noun-phrase candidates of one paper, by normalised form, in order of first occurrence."""
    words = analysis.words
    found: dict[str, Candidate] = {}
    i = 0
    while i < len(words):
        if not _usable(words[i]):
            i += 1
            continue
        j = i
        while j < len(words) and _usable(words[j]) and _adjacent(words, i, j):
            j += 1
        _add_subphrases(words[i:j], i, analysis, found, max_words)
        i = j
    return found


def _usable(token: Token) -> bool:
    """May the word be part of a noun phrase?"""
    return (
        (token.pos in _MODIFIER or token.tag == "VBN" or token.norm in _GERUND_NOUNS)
        and token.is_word
        and not token.is_stop
        and token.text.isascii()
        and not any(ch in token.text for ch in "$\\{}_^=<>/@#")
    )


def _adjacent(words: list[Token], start: int, j: int) -> bool:
    """A phrase stays inside one field and one sentence."""
    return j == start or (
        words[j].field == words[j - 1].field and words[j].sentence == words[j - 1].sentence
    )


def _add_subphrases(
    run: list[Token], offset: int, analysis: Analysis, found: dict[str, Candidate], max_words: int
) -> None:
    """Every sub-phrase of a noun-phrase run that ends in a noun and does not cut a hyphenated
    compound; 'multi-agent' counts as one word towards ``max_words``."""
    for end in range(len(run), 0, -1):
        if not _can_end(run, end - 1) or end < len(run) and run[end].joined:
            continue
        words = 0
        for start in range(end - 1, max(-1, end - 1 - _MAX_TOKENS), -1):
            if not run[start].joined:
                words += 1
            if words > max_words:
                break
            if run[start].joined:
                continue
            phrase = run[start:end]
            if phrase[0].norm in _GENERIC_MODIFIERS and len(phrase) > 1:
                continue
            if len(phrase) == 1 and (phrase[0].norm in _GENERIC_HEADS or len(phrase[0].text) < 3):
                continue
            key = _key(phrase, analysis)
            first = phrase[0]
            span = Span(field=first.field, start=first.start, end=phrase[-1].end)
            if key not in found:
                found[key] = Candidate(key=key, text=analysis.text(span), first=offset + start)
            found[key].add(span)


def _can_end(run: list[Token], i: int) -> bool:
    """A phrase ends in a noun; or in a word tagged adjective right after a noun that does not
    look like an adjective: the tagger reads 'policy gradient methods' as NOUN ADJ NOUN."""
    token = run[i]
    if token.norm in _NOT_HEADS or token.tag == "VBN":
        return False
    if token.pos in _HEAD or token.norm in _GERUND_NOUNS or is_acronym(token.text):
        return True
    return (
        token.pos == "ADJ"
        and i > 0
        and run[i - 1].pos in _HEAD
        and not token.norm.endswith(_ADJECTIVE_SUFFIXES)
    )


def _key(phrase: list[Token], analysis: Analysis) -> str:
    """Normalised words, with an acronym the paper defines replaced by its long form."""
    out: list[str] = []
    for token in phrase:
        expansion = analysis.acronyms.get(acronym_singular(token.text))
        out.extend(expansion if expansion else (token.norm,))
    return " ".join(out)


class KeyphraseExtractor:
    """Ranks candidates with KeyBERT over an embedding model, then by where and how often they
    occur.

    KeyBERT gives each candidate its cosine similarity to the paper. Authors' own keywords are
    also the phrases they put in the title and repeat, so the ranking score is
    ``similarity + title_bonus * [in title] + frequency_bonus * ln(occurrences)``; with
    ``diversity > 0``, Maximal Marginal Relevance then trades score for variety. Only the
    ``max_candidates`` best by position and frequency are embedded, and the paper is embedded
    by its first ``doc_words`` words (all settings of :class:`~tagger.config.TaggerConfig`).
    Phrase embeddings are cached across the run; a batch of papers is embedded at once.
    """

    def __init__(self, embedder: Embedder, config: TaggerConfig | None = None) -> None:
        self.embedder = embedder
        self.config = config or TaggerConfig()
        self._phrases = CachedEmbedder(embedder, max_entries=self.config.phrase_cache)
        self._keybert = None

    @property
    def keybert(self):
        if self._keybert is None:
            from keybert import KeyBERT
            from keybert.backend import BaseEmbedder

            embedder = self.embedder

            class _Backend(BaseEmbedder):
                def embed(self, documents, verbose=False):
                    return embedder.embed(list(documents))

            self._keybert = KeyBERT(model=_Backend())
        return self._keybert

    def extract(
        self,
        docs: Sequence[str],
        analyses: Sequence[Analysis],
        doc_embeddings: np.ndarray | None = None,
    ) -> list[list[Keyphrase]]:
        """Keyphrases of each paper, best first; one list per paper, in order.
        ``doc_embeddings``: the papers' embeddings, one row each, if already made by
        :meth:`embed_papers`."""
        config = self.config
        per_doc = [self._shortlist(candidates(a, max_words=config.max_words)) for a in analyses]
        results: list[list[Keyphrase]] = [[] for _ in docs]
        todo = [i for i, found in enumerate(per_doc) if found]
        if not todo:
            return results
        from sklearn.feature_extraction.text import CountVectorizer

        # KeyBERT reads each "document" through the vectorizer: here a paper's index stands for
        # the paper, and the analyzer returns its candidates' normalised forms.
        vectorizer = CountVectorizer(
            analyzer=lambda index: list(per_doc[int(index)]), lowercase=False
        )
        vocabulary = sorted({key for i in todo for key in per_doc[i]})
        phrase_embeddings = self._phrases.embed(vocabulary)
        similarities = self.keybert.extract_keywords(
            [str(i) for i in todo],
            vectorizer=vectorizer,
            doc_embeddings=doc_embeddings[todo]
            if doc_embeddings is not None
            else self.embedder.embed([_opening(docs[i], config.doc_words) for i in todo]),
            word_embeddings=phrase_embeddings,
            top_n=max(len(per_doc[i]) for i in todo),  # every candidate, by similarity
        )
        if len(todo) == 1:  # KeyBERT returns a bare list for a single document
            similarities = [similarities]
        row = {key: n for n, key in enumerate(vocabulary)}
        for i, scored in zip(todo, similarities, strict=True):
            found = per_doc[i]
            ranked = sorted(
                ((self._score(found[key], similarity), key) for key, similarity in scored),
                key=lambda pair: (-pair[0], pair[1]),
            )
            if config.diversity > 0:  # pick a varied set, then list it best first
                picked = _mmr(ranked, phrase_embeddings, row, config.top_n, config.diversity)
                ranked = sorted(picked, key=lambda pair: (-pair[0], pair[1]))
            results[i] = [
                Keyphrase(
                    text=found[key].text,
                    normalized=key,
                    score=round(score, 4),
                    spans=found[key].spans,
                )
                for score, key in ranked[: config.top_n]
            ]
        return results

    def embed_papers(self, docs: Sequence[str]) -> np.ndarray:
        """The papers' embeddings, as keyphrases are ranked against: of their opening words."""
        return self.embedder.embed([_opening(doc, self.config.doc_words) for doc in docs])

    def _shortlist(self, found: dict[str, Candidate]) -> dict[str, Candidate]:
        """The ``max_candidates`` most promising candidates by where and how often they occur,
        before any embedding: most of a paper's 80-odd sub-phrases never reach the top ten,
        and dropping them early is both faster and (measured on author keywords) a little
        better."""
        limit = self.config.max_candidates
        if len(found) <= limit:
            return found
        prior = sorted(
            found.values(),
            key=lambda c: (
                -self._score(c, 0.0) + c.first / 10_000 - 0.02 * (len(c.key.split()) == 2),
                c.key,
            ),
        )
        keep = {c.key for c in prior[:limit]}
        return {key: c for key, c in found.items() if key in keep}

    def _score(self, candidate: Candidate, similarity: float) -> float:
        in_title = any(span.field == "title" for span in candidate.spans)
        return (
            similarity
            + self.config.title_bonus * in_title
            + self.config.frequency_bonus * math.log(len(candidate.spans))
        )


def _opening(text: str, words: int) -> str:
    """The first ``words`` words: the title and opening sentences say what a paper is about (on
    author keywords this ranks phrases as well as the whole abstract does, at half the cost)."""
    parts = text.split(maxsplit=words)
    return " ".join(parts[:words])


def _mmr(
    ranked: list[tuple[float, str]],
    embeddings: np.ndarray,
    row: dict[str, int],
    top_n: int,
    diversity: float,
    pool: int = 40,
) -> list[tuple[float, str]]:
    """Maximal Marginal Relevance over the best ``pool`` candidates: each pick maximises
    ``(1 - diversity) * score - diversity * (similarity to the closest phrase already picked)``."""
    pool_items = ranked[:pool]
    vectors = embeddings[[row[key] for _, key in pool_items]]
    similarity = vectors @ vectors.T
    chosen = [0]
    closest = similarity[0].copy()
    while len(chosen) < min(top_n, len(pool_items)):
        gain = np.array([(1 - diversity) * score for score, _ in pool_items]) - diversity * closest
        gain[chosen] = -np.inf
        best = int(np.argmax(gain))
        chosen.append(best)
        closest = np.maximum(closest, similarity[best])
    return [pool_items[k] for k in chosen]
