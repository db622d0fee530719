"""Boolean expressions over area ids, for `tagger filter --where "rl and not llm"`.

Grammar: ``expr := term ("or" term)*``, ``term := factor ("and" factor)*``,
``factor := "not" factor | "(" expr ")" | AREA_ID``. An area id stands for the area and every
area below it, because a tag's path lists the area's ancestors.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection

from .errors import TaggerError

Predicate = Callable[[set[str]], bool]
_TOKEN = re.compile(r"\s*(?:(\()|(\))|([A-Za-z0-9_.-]+))")
_KEYWORDS = {"and", "or", "not"}


class QueryError(TaggerError):
    """A --where expression that does not parse or names an unknown area."""


def parse_query(text: str, known: Collection[str]) -> Predicate:
    """Compile ``text`` into a predicate over the set of area ids a paper is tagged with."""
    tokens = _tokenize(text)
    parser = _Parser(tokens, known, text)
    predicate = parser.expression()
    if parser.position < len(tokens):
        raise QueryError(f"--where {text!r}: unexpected {tokens[parser.position]!r} "
                         f"after a complete expression")
    return predicate


def _tokenize(text: str) -> list[str]:
    tokens, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            raise QueryError(f"--where {text!r}: cannot read {text[position:].strip()[:20]!r}; "
                             "use area ids, and, or, not and parentheses")
        tokens.append(match.group(match.lastindex))
        position = match.end()
    if not tokens:
        raise QueryError("--where needs an expression, like \"rl and not llm\"")
    return tokens


class _Parser:
    def __init__(self, tokens: list[str], known: Collection[str], text: str) -> None:
        self.tokens, self.known, self.text, self.position = tokens, known, text, 0

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
        if token == "not":
            inner = self.factor()
            return lambda areas: not inner(areas)
        if token == "(":
            inner = self.expression()
            if self.peek() != ")":
                raise QueryError(f"--where {self.text!r}: a '(' is not closed")
            self.take()
            return inner
        if token == ")" or token in _KEYWORDS:
            raise QueryError(f"--where {self.text!r}: expected an area id, got {token!r}")
        if token not in self.known:
            guesses = difflib.get_close_matches(token, list(self.known), n=3)
            hint = f" (did you mean {', '.join(guesses)}?)" if guesses else ""
            raise QueryError(f"unknown area {token!r}{hint}; `tagger taxonomy check` lists them")
        return lambda areas: token in areas
