"""Keyphrases: noun-phrase candidates from spaCy's POS tags, variants merged, each scored by
the probability that a reader accepts it.

Candidates are whole noun phrases (runs of adjectives and nouns up to their last noun: "graph
neural networks") or their tails that keep the head ("reinforcement learning" of "offline
multi-task reinforcement learning"); a piece cut before the head ("large language") only where
the paper uses it alone; never n-grams glued across removed stop words. Variants share one
normalised form: plural and singular, case, hyphenation, and an acronym the paper defines with its
long form ("graph neural networks (GNNs)" and later "GNNs"). KeyBERT gives each candidate its
cosine similarity to the paper, and the acceptance model (fitted to judged/keyphrases.jsonl)
turns that and what else is known about the phrase into its score; the list is chosen most likely
first, without redundant pairs, with MMR for variety.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from . import packaged
from .config import TaggerConfig
from .embedders import CachedEmbedder, Embedder
from .errors import TaggerError
from .imports import without
from .records import Keyphrase, Span
from .scoring import Context
from .specificity import Specificity
from .text import Analysis, Token, acronym_singular, is_acronym
from .weighing import Trees

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
    spans: list[Span] = field(default_factory=list)
    first: int = 0  # position of the first occurrence, in words
    whole: int = 0  # occurrences that are a whole noun phrase, not the tail of a longer one
    acronym: bool = False  # an acronym, or the long form of one the paper defines
    where: set[tuple[str, int, int]] = field(default_factory=set)  # the spans, to look up
    sentences: list[int] = field(default_factory=list)  # the sentence of each span

    def add(self, span: Span, sentence: int, *, whole: bool) -> None:
        place = (span.field, span.start, span.end)
        if place not in self.where:
            self.where.add(place)
            self.spans.append(span)
            self.sentences.append(sentence)
            self.whole += whole

    @property
    def words(self) -> int:
        return len(self.key.split())


def candidates(analysis: Analysis, *, max_words: int) -> dict[str, Candidate]:
    """Noun-phrase candidates of one paper, by normalised form, in order of first occurrence.

    A candidate is a whole noun phrase (a run of adjectives and nouns up to its last noun, at
    most ``max_words`` words) or a part of one that keeps its head: 'reinforcement learning' of
    'offline multi-task reinforcement learning', never 'offline multi-task reinforcement'. A
    part that stops before the head counts only where the paper also uses it as a phrase of its
    own ('graph neural network' inside 'graph neural network training', when the paper also
    writes 'graph neural networks' alone)."""
    found: dict[str, Candidate] = {}
    inner: list[tuple[list[Token], int]] = []  # parts that stop before a run's head
    for offset, run in _runs(analysis.words):
        head = _head(run)
        if head is None:
            continue
        for phrase, start in _tails(run, head + 1, max_words):
            key = _key(phrase, analysis)
            if key not in found:
                found[key] = Candidate(key=key, first=offset + start)
            found[key].add(_span(phrase), phrase[0].sentence, whole=start == 0)
        for end in range(head, 0, -1):
            if _can_end(run, end - 1) and not run[end].joined:
                inner += [(phrase, offset + start) for phrase, start in _tails(run, end, max_words)]
    for phrase, first in inner:
        candidate = found.get(_key(phrase, analysis))
        if candidate is not None:
            candidate.add(_span(phrase), phrase[0].sentence, whole=False)
            candidate.first = min(candidate.first, first)
    for candidate in found.values():  # spans in reading order: the title, then the abstract
        order = sorted(
            range(len(candidate.spans)),
            key=lambda k: (candidate.spans[k].field != "title", candidate.spans[k].start),
        )
        candidate.spans = [candidate.spans[k] for k in order]
        candidate.sentences = [candidate.sentences[k] for k in order]
    return found


def _runs(words: list[Token]) -> Iterator[tuple[int, list[Token]]]:
    """Maximal runs of words that may belong to a noun phrase, with where each starts. A
    hyphenated compound is never cut: its glued parts belong to the run whatever they are
    ('trade-off', 'text-to-CAD'), and a compound that starts with an unusable word is skipped
    whole."""
    i = 0
    while i < len(words):
        if not _usable(words[i]) or words[i].joined:
            i += 1
            continue
        j = i
        while j < len(words) and _adjacent(words, i, j) and (_usable(words[j]) or _glued(words[j])):
            j += 1
        while j > i and j < len(words) and words[j].joined:  # a compound the run cannot hold
            j -= 1
        yield i, words[i:j]
        i = max(j, i + 1)


def _glued(token: Token) -> bool:
    """The second part of a hyphenated compound, a word whatever its kind: 'off' of 'trade-off'."""
    return token.joined and token.is_word and token.text.isascii()


def _head(run: list[Token]) -> int | None:
    """Where the noun phrase of a run ends: its last word that can end one and is not the first
    half of a hyphenated compound."""
    for end in range(len(run) - 1, -1, -1):
        if _can_end(run, end) and not (end + 1 < len(run) and run[end + 1].joined):
            return end
    return None


def _tails(run: list[Token], end: int, max_words: int) -> Iterator[tuple[list[Token], int]]:
    """The phrases of ``run[:end]`` that end at ``end``, longest first, up to ``max_words``
    words ('multi-agent' counts as one), without a leading generic modifier ('novel'), and not
    a lone generic or two-letter word; with where each starts in the run."""
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
        yield phrase, start


def _span(phrase: list[Token]) -> Span:
    return Span(field=phrase[0].field, start=phrase[0].start, end=phrase[-1].end)


def _usable(token: Token) -> bool:
    """May the word be part of a noun phrase?"""
    return (
        (token.pos in _MODIFIER or token.tag == "VBN" or token.norm in _GERUND_NOUNS)
        and token.is_word
        and not token.is_stop
        and token.text.isascii()
        and not any(ch in token.text for ch in "$\\{}_^=<>/@#*`")
        and not _ABBREVIATION.fullmatch(token.text)
    )


# 'w.r.t', 'e.g.', 'etc.': never part of a noun phrase
_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.){1,3}[A-Za-z]?\.?|etc\.?|vs\.?|cf\.?", re.IGNORECASE)


def _adjacent(words: list[Token], start: int, j: int) -> bool:
    """A phrase stays inside one field and one sentence."""
    return j == start or (
        words[j].field == words[j - 1].field and words[j].sentence == words[j - 1].sentence
    )


def _can_end(run: list[Token], i: int) -> bool:
    """A phrase ends in a noun; or in a word tagged adjective right after a noun that does not
    look like an adjective: the tagger reads 'policy gradient methods' as NOUN ADJ NOUN."""
    token = run[i]
    if token.joined and not _usable(token):  # 'trade-off', 'text-to-CAD': as its first part
        first = i
        while first > 0 and run[first].joined:
            first -= 1
        return run[first].pos in _HEAD and token.is_word
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


# What the acceptance model reads about a candidate; :func:`features` computes each.
FEATURES = (
    "similarity",  # KeyBERT: cosine of the phrase and the paper's opening
    "title",  # the phrase is in the title
    "occurrences",  # ln(places the phrase or a variant occurs)
    "whole",  # the share of them where it is a whole noun phrase, not the tail of a longer one
    "single",  # one word
    "two",  # two words
    "head_idf",  # how rare its last word is in the corpus (specificity.py), in [0, 1]
    "min_idf",  # ... its commonest word
    "phrase_idf",  # ... the whole phrase
    "keyness",  # how much more often than usual authors list it as a keyword when it occurs
    "acronym",  # an acronym, or a phrase the paper defines one for
    "earliest",  # 1 - where it first occurs, as a share of the paper's words
    "aside",  # the share of its occurrences about other work, experiments, or in examples
    "opener",  # how often authors start a keyword with its first word (specificity.py)
)
DEFAULT_MODEL = "keyphrases.json"
# KeyBERT's cosine for a typical candidate (the mean over the judged set's candidates): what the
# shortlist assumes before anything is embedded.
_TYPICAL_SIMILARITY = 0.22


@dataclass(frozen=True)
class AcceptanceModel:
    """The probability that a reader accepts a candidate as a keyphrase of its paper: gradient-
    boosted trees over FEATURES, fitted to the judged keyphrase set (judged/keyphrases.md) by
    ``python -m tagger.calibrate --keyphrases``, and what it was fitted on."""

    accept: Trees
    about: dict[str, Any]

    @classmethod
    def load(cls, path: str | Path | None = None) -> AcceptanceModel:
        """The model at ``path``, or the one shipped with tagger."""
        return _load_model(str(path) if path else "")

    def fitted_on(self, path: str | Path) -> bool:
        """Whether this model was fitted on the judged keyphrase set in the file at ``path``."""
        return packaged.fitted_on(self.about, path)

    def save(self, path: str | Path) -> None:
        """Write the model: what it was fitted on, readable; then one line per tree."""
        trees = self.accept.as_dict()
        head = {"names": trees["names"], "baseline": trees["baseline"]}
        lines = ",\n".join(json.dumps(tree, separators=(",", ":")) for tree in trees["trees"])
        text = (
            f'{{"about": {json.dumps(self.about, indent=1)},\n"accept": '
            f'{json.dumps(head)[:-1]}, "trees": [\n{lines}\n]}}}}\n'
        )
        Path(path).write_text(text, encoding="utf-8")


@cache
def _load_model(path: str) -> AcceptanceModel:
    try:
        data = packaged.read_json(path, DEFAULT_MODEL)
        return AcceptanceModel(Trees.from_dict(data["accept"], FEATURES), data.get("about", {}))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TaggerError(
            f"cannot read the keyphrase model {path or DEFAULT_MODEL}: {exc!r}"
        ) from None


def features(
    candidate: Candidate,
    similarity: float,
    analysis: Analysis,
    table: Specificity,
    context: Context,
) -> dict[str, float]:
    """What the acceptance model reads about one candidate of a paper."""
    words = candidate.key.split()
    aside = sum(
        context.aside(span.field, sentence, span.start, span.end)
        for span, sentence in zip(candidate.spans, candidate.sentences, strict=True)
    )
    idf = [table.idf(word) for word in words]
    return {
        "similarity": similarity,
        "title": float(any(span.field == "title" for span in candidate.spans)),
        "occurrences": math.log(len(candidate.spans)),
        "whole": candidate.whole / len(candidate.spans),
        "single": float(len(words) == 1),
        "two": float(len(words) == 2),
        "head_idf": idf[-1],
        "min_idf": min(idf),
        "phrase_idf": table.phrase_idf(candidate.key),
        "keyness": table.keyness(candidate.key),
        "acronym": float(candidate.acronym),
        "earliest": 1.0 - candidate.first / max(1, len(analysis.words)),
        "aside": aside / len(candidate.spans),
        "opener": table.opener(words[0]) if len(words) > 1 else 0.0,
    }


class KeyphraseExtractor:
    """Ranks candidates by the probability that a reader would accept them, with KeyBERT's
    similarity as one of the things that probability reads.

    KeyBERT gives each candidate its cosine similarity to the paper (its first ``doc_words``
    words). The acceptance model (:class:`AcceptanceModel`) turns that, where and how often the
    phrase occurs, whether it is a whole noun phrase, and how specific its words are in the
    corpus (specificity.py), into a probability: the keyphrase's ``score``. The list is chosen
    best first, leaving out a phrase that contains, or is contained in, one already chosen unless
    both are likely (p >= 0.8) and the shorter one also occurs twice on its own; with
    ``diversity > 0``, Maximal Marginal Relevance then trades probability for variety. Only the
    ``max_candidates`` most likely before embedding are embedded. Phrase embeddings are cached
    across the run; a batch of papers is embedded at once.
    """

    def __init__(self, embedder: Embedder, config: TaggerConfig | None = None) -> None:
        self.embedder = embedder
        self.config = config or TaggerConfig()
        self.table = Specificity.load()
        self._phrases = CachedEmbedder(embedder, max_entries=self.config.phrase_cache)
        self._keybert = None

    @cached_property
    def model(self) -> AcceptanceModel:
        return AcceptanceModel.load(self.config.keyphrase_model or None)

    @property
    def keybert(self):
        if self._keybert is None:
            KeyBERT, BaseEmbedder = _keybert_classes()  # noqa: N806
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
        results = []
        for found, analysis, described, vectors, likely in self._describe(
            docs, analyses, doc_embeddings
        ):
            ranked = sorted(
                zip(likely, described, strict=True), key=lambda pair: (-pair[0], pair[1])
            )
            results.append(
                [
                    Keyphrase(
                        text=surface(found[key], analysis),
                        normalized=key,
                        score=round(p, 4),
                        spans=found[key].spans,
                    )
                    for p, key in _choose(ranked, found, vectors, self.config)
                ]
            )
        return results

    def described(
        self, docs: Sequence[str], analyses: Sequence[Analysis]
    ) -> list[dict[str, tuple[str, dict[str, float]]]]:
        """Every shortlisted candidate of each paper, by normalised form: its text as shown and
        the features the acceptance model reads (what ``python -m tagger.calibrate
        --keyphrases`` fits the model to)."""
        return [
            {key: (surface(found[key], analysis), row) for key, row in described.items()}
            for found, analysis, described, _, _ in self._describe(
                docs, analyses, None, score=False
            )
        ]

    def _describe(
        self,
        docs: Sequence[str],
        analyses: Sequence[Analysis],
        doc_embeddings: np.ndarray | None,
        *,
        score: bool = True,
    ) -> Iterator[tuple[dict[str, Candidate], Analysis, dict[str, dict[str, float]], dict, list]]:
        """Per paper: its shortlisted candidates, its analysis, each one's features, each one's
        embedding, and (with ``score``) the probability of each, in the order of the features."""
        config = self.config
        per_doc: list[dict[str, Candidate]] = []
        rows_of: list[dict[str, dict[str, float]]] = []
        for analysis in analyses:
            found = candidates(analysis, max_words=config.max_words)
            for key, candidate in found.items():
                candidate.acronym = _is_acronym_phrase(key, candidate, analysis)
            context = Context(analysis)
            per_doc.append(found)
            rows_of.append(
                {
                    key: features(c, _TYPICAL_SIMILARITY, analysis, self.table, context)
                    for key, c in found.items()
                }
            )
        self._shortlist(per_doc, rows_of)
        todo = [i for i, found in enumerate(per_doc) if found]
        scored_of: dict[int, list[tuple[str, float]]] = {}
        vectors: dict[str, np.ndarray] = {}
        if todo:
            from sklearn.feature_extraction.text import CountVectorizer

            # KeyBERT reads each "document" through the vectorizer: here a paper's index stands
            # for the paper, and the analyzer returns its candidates' normalised forms.
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
            scored_of = dict(zip(todo, similarities, strict=True))
            vectors = dict(zip(vocabulary, phrase_embeddings, strict=True))
        described_of = []
        for i, rows in enumerate(rows_of):
            described = {}
            for key, similarity in scored_of.get(i, []):
                rows[key]["similarity"] = similarity
                described[key] = rows[key]
            described_of.append(described)
        flat = [row for described in described_of for row in described.values()] if score else []
        likely = iter(self.model.accept.predict(flat).tolist() if flat else [])
        for found, analysis, described in zip(per_doc, analyses, described_of, strict=True):
            yield found, analysis, described, vectors, [next(likely) for _ in flat and described]

    def embed_papers(self, docs: Sequence[str]) -> np.ndarray:
        """The papers' embeddings, as keyphrases are ranked against: of their opening words."""
        return self.embedder.embed([_opening(doc, self.config.doc_words) for doc in docs])

    def _shortlist(
        self, per_doc: list[dict[str, Candidate]], rows_of: list[dict[str, dict[str, float]]]
    ) -> None:
        """Keep each paper's ``max_candidates`` most likely candidates before any embedding
        (their similarity taken as _TYPICAL_SIMILARITY), in order of first occurrence: most of a
        paper's candidates never come near the top ten, and dropping them early is faster."""
        limit = self.config.max_candidates
        over = [i for i, rows in enumerate(rows_of) if len(rows) > limit]
        flat = [row for i in over for row in rows_of[i].values()]
        likely = iter(self.model.accept.predict(flat).tolist() if flat else [])
        for i in over:
            prior = sorted(((next(likely), key) for key in rows_of[i]), key=lambda p: (-p[0], p[1]))
            keep = {key for _, key in prior[:limit]}
            per_doc[i] = {key: c for key, c in per_doc[i].items() if key in keep}
            rows_of[i] = {key: row for key, row in rows_of[i].items() if key in keep}


def _keybert_classes() -> tuple[type, type]:
    """KeyBERT and its embedder base class, without the backends it would import."""
    with without("sentence_transformers", "transformers", "huggingface_hub"):
        from keybert import KeyBERT
        from keybert.backend import BaseEmbedder
    return KeyBERT, BaseEmbedder


def _is_acronym_phrase(key: str, candidate: Candidate, analysis: Analysis) -> bool:
    """An acronym ('GNNs'), or the long form of one the paper defines."""
    if len(key.split()) > 1:
        return tuple(key.split()) in set(analysis.acronyms.values())
    text = analysis.surface(candidate.spans[0])
    return is_acronym(text)


def surface(candidate: Candidate, analysis: Analysis) -> str:
    """The phrase as the paper writes it: its first occurrence in the abstract, markup
    stripped; a phrase only in a title written in Title Case loses the capitals of the title's
    style ('Bandit Algorithms' -> 'bandit algorithms', 'Multi-Agent' -> 'multi-agent'), keeping
    acronyms, words with capitals inside ('PixArt') and names the abstract writes with a capital
    and never without ('Wasserstein')."""
    in_abstract = [span for span in candidate.spans if span.field == "abstract"]
    if in_abstract:
        return analysis.surface(min(in_abstract, key=lambda span: span.start))
    text = analysis.surface(candidate.spans[0])
    if not _title_case(analysis.title):
        return text
    written = set(re.findall(r"[^\W\d_]+", analysis.cleaned["abstract"][0]))

    def unstyled(part: str) -> str:
        styled = part[:1].isupper() and part[1:].islower()
        name = part in written and part.lower() not in written
        return part.lower() if styled and not name else part

    return " ".join("-".join(map(unstyled, word.split("-"))) for word in text.split())


def _title_case(title: str) -> bool:
    """Most of the title's longer words start with a capital: 'Robot Fleet Learning via ...'."""
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", title)[1:] if len(w) > 3]
    return bool(words) and sum(w[0].isupper() for w in words) >= 0.6 * len(words)


def _opening(text: str, words: int) -> str:
    """The first ``words`` words: the title and opening sentences say what a paper is about (on
    author keywords this ranks phrases as well as the whole abstract does, at half the cost)."""
    parts = text.split(maxsplit=words)
    return " ".join(parts[:words])


def _choose(
    ranked: list[tuple[float, str]],
    found: dict[str, Candidate],
    vectors: dict[str, np.ndarray],
    config: TaggerConfig,
) -> list[tuple[float, str]]:
    """The ``top_n`` keyphrases, most likely first: without a phrase that overlaps one already
    chosen (see :func:`_overlap`), and with ``diversity > 0`` picked by Maximal Marginal
    Relevance over the best 40: each pick maximises ``(1 - diversity) * p - diversity *
    (similarity to the closest phrase already picked)``."""
    pool = ranked[:40]
    if not pool:
        return []
    matrix = np.stack([vectors[key] for _, key in pool])
    similarity = matrix @ matrix.T
    chosen: list[int] = []
    closest = np.zeros(len(pool))
    left = set(range(len(pool)))
    while left and len(chosen) < config.top_n:
        best = max(
            left,
            key=lambda k: ((1 - config.diversity) * pool[k][0] - config.diversity * closest[k], -k),
        )
        left.discard(best)
        if any(_overlap(pool[best], pool[k], found) for k in chosen):
            continue
        chosen.append(best)
        closest = np.maximum(closest, similarity[best])
    picked = [pool[k] for k in chosen]
    return sorted(picked, key=lambda pair: (-pair[0], pair[1]))


# A phrase and one it contains are both listed only when both carry weight: each at least this
# likely, and the shorter one occurring at least _ALONE times outside the longer (measured on the
# judged keyphrase set: docs/keyphrase-calibration.md).
_BOTH_LIKELY = 0.8
_ALONE = 2


def _overlap(a: tuple[float, str], b: tuple[float, str], found: dict[str, Candidate]) -> bool:
    """One phrase contains the other ('reinforcement learning', 'deep reinforcement learning'),
    and they do not both carry weight (see _BOTH_LIKELY), or the longer one only adds a generic
    head ('method', 'framework') to the shorter."""
    (pa, ka), (pb, kb) = a, b
    short, long = (ka, kb) if len(ka) <= len(kb) else (kb, ka)
    if f" {short} " not in f" {long} ":
        return False
    rest, head = long.rsplit(" ", 1)
    if min(pa, pb) < _BOTH_LIKELY or rest == short and head in _GENERIC_HEADS:
        return True  # 'AFL framework' adds nothing to 'asynchronous federated learning'

    alone = [s for s in found[short].spans if not _within(s, found[long].spans)]
    return len(alone) < _ALONE


def _within(span: Span, spans: list[Span]) -> bool:
    return any(s.field == span.field and s.start <= span.start and span.end <= s.end for s in spans)
