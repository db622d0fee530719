"""Keyphrases: noun-phrase candidates from spaCy's POS tags, variants merged, each scored by
the probability that a reader accepts it.

Candidates are whole noun phrases (runs of adjectives and nouns up to their last noun: "graph
neural networks") or their tails that keep the head ("reinforcement learning" of "offline
multi-task reinforcement learning"); a piece cut before the head ("large language") only where
the paper uses it alone; never n-grams glued across removed stop words. Variants share one
normalised form: plural and singular, case, hyphenation, and an acronym the paper defines with its
long form ("graph neural networks (GNNs)" and later "GNNs"). Each candidate gets KeyBERT's
measure, the cosine similarity of its embedding and the paper's, rounded to four decimals as
KeyBERT rounds it (computed here, in integers, so that it is the same on every CPU:
language.vectors; tests/language/test_keyphrases.py checks it against ``KeyBERT.extract_keywords``
given the same candidates and embeddings). The acceptance model (fitted to
judged/keyphrases.jsonl) turns that and what else is known about the phrase into a probability;
where its file holds the readers' ranking (language.readers, the packaged model's), that ranks
the list and gives the score, each term listed once; the list is chosen best first, without
redundant pairs, with MMR for variety.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..config import EMBEDDING_BACKENDS, TaggerConfig, packaged_fit
from ..io import packaged
from ..io.files import ByContent
from ..records import Keyphrase, Span
from .candidates import _GENERIC_HEADS, Candidate, candidates
from .context import Context
from .embedders import Embedder, TokenStates
from .embedding_cache import CachedEmbedder
from .names import Names
from .readers import ReadersRanking, opening_contexts
from .specificity import Specificity
from .text import Analysis, is_acronym, spells, stem_phrase
from .trees import Trees
from .vectors import fixed, similarities

# What the acceptance model reads about a candidate; :func:`features` computes each.
PHRASE_FEATURES = (
    "similarity",  # KeyBERT's measure: cosine of the phrase and the paper's opening
    "title",  # the phrase is in the title
    "occurrences",  # ln(places the phrase or a variant occurs)
    "whole",  # the share of them where it is a whole noun phrase, not the tail of a longer one
    "single",  # one word
    "two",  # two words
    "head_idf",  # how rare its last word is in the corpus (language.specificity), in [0, 1]
    "min_idf",  # ... its commonest word
    "phrase_idf",  # ... the whole phrase
    "keyness",  # how much more often than usual authors list it as a keyword when it occurs
    "acronym",  # an acronym, or a phrase the paper defines one for
    "earliest",  # 1 - where it first occurs, as a share of the paper's words
    "aside",  # the share of its occurrences about other work, experiments, or in examples
    "opener",  # how often authors start a keyword with its first word (language.specificity)
)
DEFAULT_MODEL = "keyphrases.json"
# KeyBERT's cosine for a typical candidate (the mean over the judged set's candidates): what the
# shortlist assumes before anything is embedded.
_TYPICAL_SIMILARITY = 0.22


@dataclass(frozen=True)
class Described:
    """A paper's shortlisted candidates and what the models read of them."""

    found: dict[str, Candidate]
    analysis: Analysis
    features: dict[str, dict[str, float]]  # each candidate's (PHRASE_FEATURES), by normalised form
    shown: dict[str, str]  # each one's text as shown
    vectors: dict[str, np.ndarray]  # phrase embeddings, by normalised form (of the whole batch)
    # each one's context in the opening beside its embedding (language.readers), one row each
    # in the order of ``features``, where the opening's hidden states were read
    embedded: np.ndarray | None
    likely: list[float]  # the old model's probability of each, where scored


@dataclass(frozen=True)
class AcceptanceModel:
    """The probability that a reader accepts a candidate as a keyphrase of its paper: gradient-
    boosted trees over PHRASE_FEATURES, fitted to the judged keyphrase set (judged/keyphrases.md) by
    ``python -m tagger.fitting.keyphrases``, and what it was fitted on."""

    accept: Trees
    about: dict[str, Any]
    # the readers' ranking (language.readers), in a model that has one: the list is ranked by
    # it, each phrase listed once, and ``score`` is its readers' probability
    ranking: ReadersRanking | None = None

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, backend: str = EMBEDDING_BACKENDS[0]
    ) -> AcceptanceModel:
        """The model at ``path``, or the one shipped with tagger for ``backend``'s space (read
        again when the file's bytes change)."""
        return _MODELS.load(path or packaged.data_dir(packaged_fit(DEFAULT_MODEL, backend)))

    def fitted_on(self, path: str | Path) -> bool:
        """Whether this model, or its readers' ranking, was fitted on the judged keyphrase set in
        the file at ``path``."""
        ranking = self.about.get("ranking") if self.ranking else None
        return packaged.fitted_on(self.about, path) or bool(
            ranking and packaged.fitted_on(ranking, path)
        )

    def save(self, path: str | Path) -> None:
        """Write the model: what it was fitted on, readable; then one line per tree."""
        trees = self.accept.as_dict()
        head = {"names": trees["names"], "baseline": trees["baseline"]}
        lines = ",\n".join(json.dumps(tree, separators=(",", ":")) for tree in trees["trees"])
        ranking = f',\n"ranking": {_lines(self.ranking.as_dict())}' if self.ranking else ""
        text = (
            f'{{"about": {json.dumps(self.about, indent=1)},\n"accept": '
            f'{json.dumps(head)[:-1]}, "trees": [\n{lines}\n]}}{ranking}}}\n'
        )
        Path(path).write_text(text, encoding="utf-8")


def _lines(ranking: dict[str, Any]) -> str:
    """The ranking as JSON a diff can read: a line for each part, and for each prior's phrase."""

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"))

    parts = []
    for key, value in ranking.items():
        if key in ("coded", "listed"):
            value = "{\n" + ",\n".join(f"{compact(k)}:{compact(v)}" for k, v in value.items())
            parts.append(f"{compact(key)}: {value}\n}}")
        else:
            parts.append(f"{compact(key)}: {compact(value)}")
    return "{\n" + ",\n".join(parts) + "\n}"


def _parse_model(data: bytes) -> AcceptanceModel:
    """The keyphrase model in a file's bytes; ValueError if they hold none."""
    try:
        found = packaged.parse_json(data)
        ranking = found.get("ranking")
        return AcceptanceModel(
            Trees.from_dict(found["accept"], PHRASE_FEATURES),
            found.get("about", {}),
            ReadersRanking.from_dict(ranking, PHRASE_FEATURES) if ranking else None,
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(repr(exc)) from None


_MODELS = ByContent(_parse_model, "the keyphrase model")


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

    Each candidate's similarity is KeyBERT's: the cosine of its embedding and the paper's (its
    first ``doc_words`` words), rounded to four decimals (:func:`keybert_similarities`). The
    acceptance model (:class:`AcceptanceModel`) turns that, where and how often the
    phrase occurs, whether it is a whole noun phrase, and how specific its words are in the
    corpus (language.specificity), into a probability. The readers' ranking (language.readers),
    where the model has one and the embedder gives hidden states, ranks by that, the readers'
    and the authors' models, and the readers' probability is the keyphrase's ``score``;
    otherwise the probability ranks and is the score. The list is chosen best first, leaving out
    a phrase that contains, or is contained in, one already chosen (by the ranking: always; else
    unless both are likely, p >= 0.8, and the shorter one also occurs twice on its own); with
    ``diversity > 0``, Maximal Marginal Relevance then trades the rank for variety. Only the
    ``max_candidates`` most likely before embedding are embedded. Phrase embeddings are cached
    across the run; a batch of papers is embedded at once.
    """

    def __init__(self, embedder: Embedder, config: TaggerConfig | None = None) -> None:
        self.embedder = embedder
        self.config = config or TaggerConfig()
        self.table = Specificity.load()
        self.names = Names.load()
        self._phrases = CachedEmbedder(embedder, max_entries=self.config.phrase_cache)

    @cached_property
    def model(self) -> AcceptanceModel:
        return AcceptanceModel.load(
            self.config.keyphrase_model or None, backend=self.config.embedding_backend
        )

    def extract(
        self,
        docs: Sequence[str],
        analyses: Sequence[Analysis],
        doc_embeddings: np.ndarray | None = None,
        states: Sequence[TokenStates] | None = None,
    ) -> list[list[Keyphrase]]:
        """Keyphrases of each paper, best first; one list per paper, in order.
        ``doc_embeddings``, ``states``: the papers' embeddings, one row each, and their openings'
        hidden states, if already made by :meth:`embed_openings`."""
        results = []
        ranking = self._ranking
        papers = list(self._describe(docs, analyses, doc_embeddings, states))
        ranked_of = [(paper.likely, paper.likely) for paper in papers]
        if ranking is not None and any(paper.features for paper in papers):
            # every paper's candidates at once: a candidate's rank is its own, whatever beside it
            some = [paper for paper in papers if paper.features]
            order, scores = ranking.rank(
                [row for paper in some for row in paper.features.values()],
                [p for paper in some for p in paper.likely],
                np.vstack([paper.embedded for paper in some]),
                [stem_phrase(paper.shown[key]) for paper in some for key in paper.features],
            )
            at = 0
            for n, paper in enumerate(papers):
                if paper.features:
                    size = len(paper.features)
                    ranked_of[n] = (order[at : at + size], scores[at : at + size])
                    at += size
        for paper, (order, scores) in zip(papers, ranked_of, strict=True):
            found = paper.found
            score_of = dict(zip(paper.features, scores, strict=True))
            ranked = sorted(
                zip(order, paper.features, strict=True), key=lambda pair: (-pair[0], pair[1])
            )
            strict = ranking is not None
            chosen = _choose(ranked, found, paper.vectors, self.config, paper.shown, strict=strict)
            results.append(
                [
                    Keyphrase(
                        text=paper.shown[key],
                        normalized=key,
                        score=round(score_of[key], 4),
                        spans=found[key].spans,
                    )
                    for _, key in chosen
                ]
            )
        return results

    def described(
        self, docs: Sequence[str], analyses: Sequence[Analysis], *, contexts: bool = False
    ) -> list[Described]:
        """Every shortlisted candidate of each paper, with what the models read of it (what
        ``python -m tagger.fitting.keyphrases`` and ``.keyphrase_ranking`` fit them to); with
        ``contexts``, its context in the opening too."""
        return list(self._describe(docs, analyses, None, None, score=False, contexts=contexts))

    def _describe(
        self,
        docs: Sequence[str],
        analyses: Sequence[Analysis],
        doc_embeddings: np.ndarray | None,
        states: Sequence[TokenStates] | None,
        *,
        score: bool = True,
        contexts: bool | None = None,
    ) -> Iterator[Described]:
        """Per paper: its shortlisted candidates and what the models read of them, and (with
        ``score``) the old model's probability of each."""
        config = self.config
        per_doc: list[dict[str, Candidate]] = []
        rows_of: list[dict[str, dict[str, float]]] = []
        for analysis in analyses:
            found = candidates(analysis, max_words=config.max_words, names=self.names)
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
        openings = [_opening(doc, config.doc_words) for doc in docs]
        read_states = self._reads_context if contexts is None else contexts
        if todo:
            vocabulary = sorted({key for i in todo for key in per_doc[i]})
            phrase_embeddings = self._phrases.embed(vocabulary)
            if doc_embeddings is None or (read_states and states is None):
                doc_embeddings, states = self.embed_openings(docs, states=read_states)
            if not read_states:
                states = None
            vectors = dict(zip(vocabulary, phrase_embeddings, strict=True))
            for i in todo:
                keys = list(per_doc[i])
                phrases = np.stack([vectors[key] for key in keys])
                (measured,) = keybert_similarities(doc_embeddings[i][None], phrases)
                scored_of[i] = list(zip(keys, measured, strict=True))
        described_of = []
        for i, rows in enumerate(rows_of):
            described = {}
            for key, similarity in scored_of.get(i, []):
                rows[key]["similarity"] = similarity
                described[key] = rows[key]
            described_of.append(described)
        flat = [row for described in described_of for row in described.values()] if score else []
        likely = iter(self.model.accept.scores(flat))
        for i, (found, analysis, described) in enumerate(
            zip(per_doc, analyses, described_of, strict=True)
        ):
            shown = {key: surface(found[key], analysis) for key in described}
            embedded = None
            if states is not None and described:
                hidden = states[i]
                around = opening_contexts(
                    hidden.hidden,
                    hidden.offsets,
                    openings[i],
                    [(shown[key], key) for key in described],
                )
                embedded = np.column_stack([around, np.stack([vectors[k] for k in described])])
            yield Described(
                found,
                analysis,
                described,
                shown,
                vectors,
                embedded,
                [next(likely) for _ in flat and described],
            )

    @property
    def _ranking(self) -> ReadersRanking | None:
        """The model's readers' ranking, if it has one and the embedder gives the hidden states
        it reads (the transformer's backends do; an embedder of one's own, in another space,
        ranks as the old model does)."""
        ranking = self.model.ranking
        return ranking if hasattr(self.embedder, "embed_with_states") else None

    @property
    def _reads_context(self) -> bool:
        return self._ranking is not None

    def embed_papers(self, docs: Sequence[str]) -> np.ndarray:
        """The papers' embeddings, as keyphrases are ranked against: of their opening words."""
        return self.embedder.embed([_opening(doc, self.config.doc_words) for doc in docs])

    def embed_openings(
        self, docs: Sequence[str], *, states: bool | None = None
    ) -> tuple[np.ndarray, list[TokenStates] | None]:
        """:meth:`embed_papers`, and with ``states`` (by default: if the keyphrases are ranked
        by the readers' ranking) the openings' hidden states from the same run (the embedder's
        ``embed_with_states``)."""
        if not (self._reads_context if states is None else states):
            return self.embed_papers(docs), None
        openings = [_opening(doc, self.config.doc_words) for doc in docs]
        return self.embedder.embed_with_states(openings)

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


def keybert_similarities(papers: np.ndarray, phrases: np.ndarray) -> list[list[float]]:
    """KeyBERT's measure of each phrase for each paper: the cosine of their embeddings (unit
    rows), rounded to four decimals, as ``KeyBERT.extract_keywords`` returns it; one list per
    paper, in the order of ``phrases``. The cosines are integer dot products (language.vectors),
    the same on every CPU, where KeyBERT's float product can differ in its last bit."""
    cosines = similarities(fixed(papers), fixed(phrases))
    return [[round(float(c), 4) for c in row] for row in cosines]


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
    shown: Mapping[str, str],
    *,
    strict: bool = False,
) -> list[tuple[float, str]]:
    """The ``top_n`` keyphrases, most likely first: without a phrase that overlaps one already
    chosen (see :func:`_overlap`; ``strict``: that contains or is contained in one, one term
    listed once) nor an acronym beside a phrase it spells ('EvoCF' and
    'Evolutionary Counterfactual Planning': one term said twice, the likelier kept; see
    :func:`_spelled`), and with ``diversity > 0`` picked by Maximal Marginal
    Relevance over the best 40: each pick maximises ``(1 - diversity) * p - diversity *
    (similarity to the closest phrase already picked)``. ``shown``: each candidate's text as
    the paper writes it (:func:`surface`)."""
    pool = ranked[:40]
    if not pool:
        return []
    matrix = fixed(np.stack([vectors[key] for _, key in pool]))
    similarity = similarities(matrix, matrix)
    chosen: list[int] = []
    closest = np.zeros(len(pool))
    left = set(range(len(pool)))
    while left and len(chosen) < config.top_n:
        best = max(
            left,
            key=lambda k: ((1 - config.diversity) * pool[k][0] - config.diversity * closest[k], -k),
        )
        left.discard(best)
        if any(
            (
                _contains(pool[best][1], pool[k][1])
                if strict
                else _overlap(pool[best], pool[k], found)
            )
            or _spelled(shown[pool[best][1]], shown[pool[k][1]])
            for k in chosen
        ):
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


def _contains(a: str, b: str) -> bool:
    """One of two different phrases contains the other, word for word."""
    return a != b and (f" {a} " in f" {b} " or f" {b} " in f" {a} ")


def _spelled(a: str, b: str) -> bool:
    """One is an acronym of the other's words ('SDCP', 'Style Decomposition'; 'EvoCF',
    'Evolutionary Counterfactual Planning'), as text.spells reads it."""
    return any(
        " " not in short
        and " " in long
        and short.lower() not in long.lower().split()
        and spells(short, long.split())
        for short, long in ((a, b), (b, a))
    )


def _within(span: Span, spans: list[Span]) -> bool:
    return any(s.field == span.field and s.start <= span.start and span.end <= s.end for s in spans)
