"""Which tagged papers to keep: area ids, boolean expressions over them (`tagger filter --where
"rl and not llm"`), venue, year and a minimum tag score. Facet tags (the contribution type)
count like topic tags: `--where "rl and type.theory"`.

Grammar: ``expr := term ("or" term)*``, ``term := factor ("and" factor)*``,
``factor := "not" factor | "(" expr ")" | AREA_ID``. An area id stands for the area and every
area below it, because a tag's path lists the area's ancestors.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from ..config import FILTER_FORMAT, FILTER_MIN_SCORE, TAG_LABELS
from ..errors import TaggerError
from ..io.display import printable
from ..io.formats import LIBRARY_FORMATS, is_library
from ..io.libraries import library_entries
from ..records import TaggedPaper

if TYPE_CHECKING:
    from ..io.tagged import TaggedLine

FORMATS = ("jsonl", "csv", "ids", "titles", *LIBRARY_FORMATS)

Predicate = Callable[[set[str]], bool]
_TOKEN = re.compile(r"\s*(?:(\()|(\))|([A-Za-z0-9_.-]+))")
_AREA_ID = re.compile(r"[A-Za-z0-9_.-]+")
_KEYWORDS = {"and", "or", "not"}


class QueryError(TaggerError):
    """A --where expression that does not parse or names an unknown area."""


def filter_tagged(
    records: Iterable[TaggedPaper],
    known: Collection[str],
    *,
    areas: Iterable[str] = (),
    where: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    min_score: float = FILTER_MIN_SCORE,
) -> Iterator[TaggedPaper]:
    """The records that pass :func:`paper_filter`, in order."""
    keep = paper_filter(
        known, areas=areas, where=where, venue=venue, year=year, min_score=min_score
    )
    return (record for record in records if keep(record))


def format_selected(
    lines: Iterable[TaggedLine], format: str = FILTER_FORMAT, *, labels: str = TAG_LABELS
) -> Iterator[bytes]:
    """Tagged lines (a selection of them) as output lines in ``format``: ``jsonl``, each line as
    it was; ``csv`` (RFC 4180), a header then id, title, venue, year, tags and types (facet
    tags), ids joined by ';'; ``ids``, one a line; ``titles`` (an untitled paper shows the
    first 100 characters of its abstract), one a line with control characters escaped; or a
    library, ``bibtex``, ``ris`` or ``csl-json``, each paper an entry with its tags by
    ``labels`` (ids or names: io.libraries.library_entries)."""
    if is_library(format):
        yield from library_entries((line.record for line in lines), format, labels)
        return
    if format == "csv":
        yield _csv_row(["id", "title", "venue", "year", "tags", "types"])
    for line in lines:
        paper = line.record.paper
        if format == "jsonl":
            yield line.raw
        elif format == "csv":
            tags = ";".join(tag.id for tag in line.record.tags)
            types = ";".join(tag.id for tag in line.record.facets)
            yield _csv_row(
                [paper.id, paper.title or "", paper.venue or "", paper.year or "", tags, types]
            )
        else:
            text = paper.id if format == "ids" else printable(paper.title or paper.abstract[:100])
            yield f"{text}\n".encode()


_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # how a spreadsheet formula or a trick starts


def _csv_row(values: list) -> bytes:
    """One CSV row, CRLF-ended so that a cell holding a line break (a lone CR included) is
    quoted; a text cell a spreadsheet would run as a formula is neutralised with a leading
    apostrophe, as OWASP recommends."""
    cells = [f"'{v}" if isinstance(v, str) and v.startswith(_FORMULA) else v for v in values]
    text = io.StringIO()
    csv.writer(text, lineterminator="\r\n").writerow(cells)
    return text.getvalue().encode()


def paper_filter(
    known: Collection[str],
    *,
    areas: Iterable[str] = (),
    where: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    min_score: float = FILTER_MIN_SCORE,
) -> Callable[[TaggedPaper], bool]:
    """A test of one tagged paper: tagged (at ``min_score`` or more) with one of ``areas`` or an
    area below it, matching the ``where`` expression, of ``venue`` (any case) and ``year``.

    ``known`` holds the taxonomy's area ids, or maps them to their areas (``taxonomy.by_id``);
    an unknown id is a :class:`QueryError` that names the ones it likely means (:func:`meant`).
    """
    if not (
        isinstance(min_score, (int, float))
        and not isinstance(min_score, bool)
        and 0 <= min_score <= 1  # NaN is not: it would keep nothing
    ):
        raise ValueError(
            "The 'min_score' parameter of paper_filter must be a float in [0, 1]. "
            f"Got {min_score!r} instead."
        )
    wanted = [_area(area, known, "--area") for area in areas]
    expression = parse_query(where, known) if where is not None else None
    venue = venue.lower() if venue is not None else None

    def keep(record: TaggedPaper) -> bool:
        paper = record.paper
        if venue is not None and (paper.venue or "").lower() != venue:
            return False
        if year is not None and paper.year != year:
            return False
        tagged = {
            area
            for tag in record.tags + record.facets
            if tag.score >= min_score
            for area in tag.path
        }
        if wanted and tagged.isdisjoint(wanted):
            return False
        return expression is None or expression(tagged)

    return keep


def parse_query(text: str, known: Collection[str]) -> Predicate:
    """Compile ``text`` into a predicate over the set of area ids a paper is tagged with."""
    tokens = _tokenize(text)
    parser = _Parser(tokens, known, text)
    predicate = parser.expression()
    if parser.position < len(tokens):
        raise QueryError(
            f"--where {text!r}: unexpected {tokens[parser.position]!r} after a complete expression"
        )
    return predicate


def _tokenize(text: str) -> list[str]:
    tokens, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            raise QueryError(
                f"--where {text!r}: cannot read {text[position:].strip()[:20]!r}; "
                "use area ids, and, or, not and parentheses"
            )
        tokens.append(match.group(match.lastindex))
        position = match.end()
    if not tokens:
        raise QueryError('--where needs an expression, like "rl and not llm"')
    return tokens


MAX_NESTING = 50  # of parentheses and 'not's: deeper expressions are refused, never recursed into


class _Parser:
    def __init__(self, tokens: list[str], known: Collection[str], text: str) -> None:
        self.tokens, self.known, self.text, self.position = tokens, known, text, 0
        self.depth = 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise QueryError(f"--where {self.text!r}: the expression ends too early")
        self.position += 1
        return token

    def expression(self) -> Predicate:
        terms = [self.term()]
        while self.peek() == "or":
            self.take()
            terms.append(self.term())
        return terms[0] if len(terms) == 1 else (lambda areas: any(t(areas) for t in terms))

    def term(self) -> Predicate:
        factors = [self.factor()]
        while self.peek() == "and":
            self.take()
            factors.append(self.factor())
        return factors[0] if len(factors) == 1 else (lambda areas: all(f(areas) for f in factors))

    def factor(self) -> Predicate:
        token = self.take()
        if token in ("not", "("):
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise QueryError(
                    f"--where {self.text[:40]!r}...: parentheses and 'not's nest more than "
                    f"{MAX_NESTING} deep"
                )
        if token == "not":
            inner = self.factor()
            self.depth -= 1
            return lambda areas: not inner(areas)
        if token == "(":
            inner = self.expression()
            if self.peek() != ")":
                raise QueryError(f"--where {self.text!r}: a '(' is not closed")
            self.take()
            self.depth -= 1
            return inner
        if token == ")" or token in _KEYWORDS:
            raise QueryError(f"--where {self.text!r}: expected an area id, got {token!r}")
        area = _area(token, self.known, "--where")
        return lambda areas: area in areas


def _area(text: str, known: Collection[str], option: str) -> str:
    """``text`` if it is a known area id; else a QueryError naming the ones it likely means."""
    if text in known:
        return text
    if not _AREA_ID.fullmatch(text) or text in _KEYWORDS:
        raise QueryError(
            f"{option} {text!r} is not an area id; {option} takes one id, like "
            "'rl.offline' (combine areas with --where \"rl and not llm\")"
        )
    guesses = meant(text, known)
    hint = f" (did you mean {', '.join(guesses)}?)" if guesses else ""
    raise QueryError(f"unknown area {text!r}{hint}; `tagger taxonomy check` lists them")


def meant(text: str, known: Collection[str], limit: int = 4) -> list[str]:
    """The known area ids an unknown ``text`` most likely means, best first: those whose last
    part it is (``gnn``: graph.gnn; ``llms``: llm, rl.llm), then those whose name has it as
    words (``transformer``: dl.attention, "Attention & transformer architectures"); if there
    are none, the closest in spelling, by the whole id or its last part (``rl.ofline``).
    ``known`` holds the ids, or maps them to their areas (``taxonomy.by_id``), whose names are
    then searched too."""
    wanted = _words(text)
    names = known if isinstance(known, Mapping) else {}
    found = [area for area in known if _words(area.rsplit(".", 1)[-1]) == wanted]
    found.sort(key=lambda area: area.count("."))  # 'llms': llm before rl.llm
    found += [a for a in names if _has_words(_words(getattr(names[a], "name", "")), wanted)]
    if found:
        return list(dict.fromkeys(found))[:limit]
    last: dict[str, list[str]] = {}
    for area in known:
        last.setdefault(area.rsplit(".", 1)[-1].lower(), []).append(area)
    found += difflib.get_close_matches(text.lower(), list(known), n=limit)
    for close in difflib.get_close_matches(text.lower(), list(last), n=limit):
        found += last[close]
    return list(dict.fromkeys(found))[:limit]


def _words(text: str) -> tuple[str, ...]:
    """Lower-case words, a plural 's' dropped: 'multi_agent' and 'Multi-agent RL' alike."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words)


def _has_words(name: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    """Whether ``wanted`` occurs in ``name`` as consecutive whole words."""
    n = len(wanted)
    return n > 0 and any(name[k : k + n] == wanted for k in range(len(name) - n + 1))
