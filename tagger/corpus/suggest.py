"""Where the taxonomy falls short: keyphrases frequent in papers it tags weakly or not at all,
near-duplicates grouped, each group proposed as aliases of the area whose own aliases it is closest
to (by embedding similarity), or as a new area when no area is close."""

from __future__ import annotations

import re
import textwrap
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..config import SuggestConfig
from ..language.embedders import Embedder
from ..language.text import normalize_word
from ..records import TaggedPaper
from ..taxonomy.model import Taxonomy
from ..taxonomy.rules import RuleSet

_WORD = re.compile(r"[^\W_]+")
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 ._()/+-]*[A-Za-z0-9)]|[A-Za-z]")
_YAML_WORDS = {"yes", "no", "on", "off", "true", "false", "null", "y", "n", "~"}
GENERIC_SHARE = 0.25  # a word in this share of the corpus's papers is generic ('model', 'learning')
MIN_LIFT = 2.0  # a gap's phrases are at least twice as common in weakly tagged papers as overall


@dataclass
class Group:
    """Near-duplicate keyphrases from weakly tagged papers, and where they might belong."""

    phrases: list[str]  # normalised forms, the most frequent first
    spellings: dict[str, str]  # normalised form -> how papers most often write it
    papers: list[str]  # ids of the weakly tagged papers that have one of the phrases
    titles: dict[str, str]
    score: float = 0.0  # papers x how specific the phrases are to weakly tagged papers
    area: str | None = None  # the area with the nearest alias or name
    nearest: str = ""  # that alias or name
    similarity: float = 0.0
    new_id: str = ""  # for a proposed new area

    @property
    def label(self) -> str:
        return self.spellings[self.phrases[0]]


@dataclass
class Suggestions:
    source: str
    papers: int = 0
    weak: int = 0
    frequent: int = 0  # phrase groups in at least min_papers weakly tagged papers
    generic: int = 0  # of those, left out as generic (see suggest)
    settings: dict[str, float] = field(default_factory=dict)
    aliases: list[Group] = field(default_factory=list)
    new_areas: list[Group] = field(default_factory=list)

    def as_dict(self) -> dict:
        def group(g: Group) -> dict:
            return {
                "phrases": [g.spellings[p] for p in g.phrases],
                "papers": g.papers,
                "nearest_area": g.area,
                "nearest_alias": g.nearest,
                "similarity": round(g.similarity, 4),
            }

        return {
            "source": self.source,
            "papers": self.papers,
            "weak_papers": self.weak,
            "frequent_groups": self.frequent,
            "generic_groups": self.generic,
            "settings": self.settings,
            "aliases": [{"area": g.area, **group(g)} for g in self.aliases],
            "new_areas": [
                {"id": g.new_id, "parent": _parent(g, self.settings), **group(g)}
                for g in self.new_areas
            ],
        }


def suggest(
    records: Iterable[TaggedPaper],
    taxonomy: Taxonomy,
    embedder: Embedder,
    config: SuggestConfig | None = None,
    *,
    rules: RuleSet | None = None,
    source: str = "",
) -> Suggestions:
    """Suggest taxonomy additions from a tagged corpus (settings: :class:`SuggestConfig`).

    A paper is weakly tagged when its best tag scores below ``weak_below`` (or it has none). Its
    keyphrases are candidates unless a rule already matches them (an alias or cue, or an alias
    inside the phrase), they are one ordinary word, or all their words are in a quarter of the
    corpus's papers. Candidates are grouped when their embeddings' cosine reaches
    ``group_similarity``; a group in at least ``min_papers`` weakly tagged papers is kept unless it
    looks generic (less than twice as common in weakly tagged papers as overall, or spread over
    many top-level areas where its papers are tagged well). A kept group becomes aliases of the
    area whose aliases and name are nearest when that cosine reaches ``alias_similarity``, else a
    new area (under that area from ``parent_similarity``). At most ``limit`` of each, best first.
    """
    config = config or SuggestConfig()
    weak_below, min_papers = config.weak_below, config.min_papers
    result = Suggestions(source=source, settings=config.as_dict())
    known = _known_phrases(rules or RuleSet(taxonomy))
    with_phrase: dict[str, list[int]] = defaultdict(list)  # phrase -> papers (numbers) with it
    writings: dict[str, Counter[str]] = defaultdict(Counter)
    weak: list[bool] = []
    best_root: list[str | None] = []  # the top-level area of each paper's best tag
    ids: list[str] = []
    word_df: Counter[str] = Counter()  # papers with the (normalised) word in title or abstract
    titles: list[str] = []
    for number, record in enumerate(records):
        paper = record.paper
        best = max(record.tags, key=lambda t: t.score, default=None)
        weak.append(best is None or best.score < weak_below)
        best_root.append(best.path[0] if best else None)
        ids.append(paper.id)
        titles.append(" ".join((paper.title or paper.abstract).split())[:80])
        word_df.update(
            {normalize_word(w) for w in _WORD.findall(f"{paper.title or ''} {paper.abstract}")}
        )
        seen = set()
        for kp in record.keyphrases:
            normalized, text = kp.normalized, kp.text
            if (
                normalized
                and normalized not in seen
                and _specific(text or normalized)
                and not _is_known(normalized, text, known)
            ):
                seen.add(normalized)
                with_phrase[normalized].append(number)
                if weak[-1]:
                    writings[normalized][_display(text or normalized)] += 1
    result.papers, result.weak = len(weak), sum(weak)
    generic = (
        {w for w, n in word_df.items() if n >= GENERIC_SHARE * result.papers}
        if result.papers >= 20
        else set()
    )
    phrases = sorted(
        (p for p in writings if not set(p.split()) <= generic),
        key=lambda p: (-writings[p].total(), p),
    )  # of weak papers, not all generic
    if not phrases:
        return result

    vectors = _unit(embedder.embed(phrases))
    area_ids, area_texts, area_vectors = _area_vectors(taxonomy, embedder)
    taken = {area.id for area in taxonomy.areas}
    for members in _group(phrases, vectors, config.group_similarity):
        papers = sorted({i for m in members for i in with_phrase[phrases[m]]})
        weak_ones = [i for i in papers if weak[i]]
        if len(weak_ones) < min_papers:
            continue
        result.frequent += 1
        # A gap in the taxonomy shows as phrases much likelier in weakly tagged papers than in
        # any paper, and, where papers with them are tagged well, tagged in one top-level area
        # rather than spread over many (as "neural networks" or "feature space" are).
        lift = len(weak_ones) / len(papers) / (result.weak / result.papers)
        strong_roots = Counter(best_root[i] for i in papers if not weak[i])
        spread = (
            strong_roots.total() >= 3
            and strong_roots.most_common(1)[0][1] < strong_roots.total() / 3
        )
        if lift < MIN_LIFT or spread:
            result.generic += 1
            continue
        group = Group(
            phrases=[phrases[m] for m in members],
            spellings={phrases[m]: writings[phrases[m]].most_common(1)[0][0] for m in members},
            papers=[ids[i] for i in weak_ones],
            titles={ids[i]: titles[i] for i in weak_ones},
            score=len(weak_ones) * min(lift, 4.0),
        )
        centre = _unit(vectors[members].mean(axis=0, keepdims=True))[0]
        group.area, group.nearest, group.similarity = _nearest_area(
            centre, area_ids, area_texts, area_vectors
        )
        if group.similarity >= config.alias_similarity:
            result.aliases.append(group)
        else:
            parent = group.area if group.similarity >= config.parent_similarity else None
            group.new_id = _new_id(group.label, parent, taken)
            taken.add(group.new_id)
            result.new_areas.append(group)

    def best_first(group: Group) -> tuple:
        return -group.score, -len(group.papers), group.label

    result.aliases = sorted(result.aliases, key=best_first)[: config.limit]
    result.new_areas = sorted(result.new_areas, key=best_first)[: config.limit]
    return result


def render_yaml(result: Suggestions, taxonomy: Taxonomy) -> str:
    """A YAML snippet to merge into the taxonomy, each suggestion with its papers in a comment."""
    s = result.settings
    about = (
        f"tagger suggest {result.source}: {result.papers:,} papers, {result.weak:,} with no tag or "
        f"a best tag below {s['weak_below']:.2f}. Keyphrases of at least {s['min_papers']:g} of "
        "those papers that no alias or cue matches, near-duplicates grouped (cosine >= "
        f"{s['group_similarity']:.2f}), placed by their cosine to each area's aliases and name. "
        + _found(result)
    )
    if result.aliases or result.new_areas:
        about += " Merge what you agree with into the taxonomy, then run `tagger taxonomy lint`."
    lines = [*_comment_lines(about), ""]
    if not result.aliases and not result.new_areas:
        return "\n".join(
            [*lines, *_comment_lines(_nothing(result)), "aliases: {}", "new_areas: []", ""]
        )
    lines.append(f"# New aliases for existing areas (cosine >= {s['alias_similarity']:.2f}).")
    if not result.aliases:
        lines.append("aliases: {}")
    else:
        lines.append("aliases:")
        by_area: dict[str, list[Group]] = defaultdict(list)
        for group in result.aliases:
            by_area[group.area].append(group)
        for area_id, groups in by_area.items():
            lines.append(f"  {area_id}:  # {taxonomy.by_id[area_id].name}")
            for group in groups:
                for i, phrase in enumerate(group.phrases):
                    item = f"    - {_scalar(group.spellings[phrase])}"
                    lines.append(item if i else f"{item}  # {_motive(group)}")
    lines += ["", "# New areas: no area's aliases are near these phrases. Paste under `areas:`."]
    if not result.new_areas:
        lines.append("new_areas: []")
    else:
        lines.append("new_areas:")
        for group in result.new_areas:
            lines += _new_area(group, s)
    return "\n".join(lines) + "\n"


def _new_area(group: Group, s: dict[str, float]) -> list[str]:
    """A proposed area as a list item under ``areas:``, its papers in comments."""
    lines: list[str] = []
    parent = _parent(group, s)
    lines.append(f"  - id: {group.new_id}")
    lines.append(f"    name: {_scalar(group.label[:1].upper() + group.label[1:])}")
    if parent:
        lines.append(f"    parent: {parent}  # {group.similarity:.2f} to {_comment(group.nearest)}")
    else:
        lines.append(
            f"    # nearest area: {group.area}, {group.similarity:.2f} to {_comment(group.nearest)}"
        )
    lines.append(f"    description: {_scalar('Proposed by tagger suggest: ' + group.label)}")
    lines.append(
        "    aliases: [" + ", ".join(_scalar(group.spellings[p]) for p in group.phrases) + "]"
    )
    lines.append(f"    # {len(group.papers)} papers:")
    lines += [
        f"    #   {_comment(pid, quote=False)}  {_comment(group.titles[pid])}"
        for pid in group.papers[:5]
    ]
    if len(group.papers) > 5:
        lines.append(f"    #   and {len(group.papers) - 5} more")
    return lines


def render_overlay(result: Suggestions, taxonomy: Taxonomy, extends: str) -> str:
    """The suggestions as an overlay of the taxonomy (``extends``: 'builtin' or its path): new
    aliases under ``edit:``, new areas under ``areas:``, each with its papers in comments. It
    loads as it is; review it, then retag a tagged corpus with it and diff."""
    s = result.settings
    about = (
        f"tagger suggest {result.source}: {result.papers:,} papers, {result.weak:,} with no tag or "
        f"a best tag below {s['weak_below']:.2f}; keyphrases of at least {s['min_papers']:g} of "
        f"those papers that no alias or cue matches, near-duplicates grouped. {_found(result)}"
    )
    if result.aliases or result.new_areas:
        about += (
            " Delete what you do not agree with, then: tagger retag TAGGED --taxonomy THIS_FILE "
            "-o retagged.jsonl && tagger diff TAGGED retagged.jsonl"
        )
    lines = [*_comment_lines(about)]
    lines += [f"extends: {_scalar(extends)}", "version: suggested"]
    if not result.aliases and not result.new_areas:
        lines += _comment_lines(_nothing(result))
    if result.aliases:
        lines += [
            "",
            f"# New aliases for existing areas (cosine >= {s['alias_similarity']:.2f}).",
            "edit:",
        ]
        by_area: dict[str, list[Group]] = defaultdict(list)
        for group in result.aliases:
            by_area[group.area].append(group)
        for area_id, groups in by_area.items():
            lines += [
                f"  {area_id}:  # {_comment(taxonomy.by_id[area_id].name)}",
                "    add:",
                "      aliases:",
            ]
            for group in groups:
                for i, phrase in enumerate(group.phrases):
                    item = f"        - {_scalar(group.spellings[phrase])}"
                    lines.append(item if i else f"{item}  # {_motive(group)}")
    if result.new_areas:
        lines += ["", "# New areas: no area's aliases are near these phrases.", "areas:"]
        for group in result.new_areas:
            lines += _new_area(group, s)
    return "\n".join(lines) + "\n"


def _comment_lines(text: str) -> list[str]:
    """Text as YAML comment lines of at most 98 characters, words (hyphenated ones too) whole."""
    return textwrap.wrap(
        text, width=98, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False
    )


def _found(result: Suggestions) -> str:
    """What the header says was found: the frequent groups, those left out as generic and those
    suggested below, in numbers that add up to what follows."""
    frequent, generic = result.frequent, result.generic
    if not frequent:
        return "No group is that frequent."
    kept, shown = frequent - generic, len(result.aliases) + len(result.new_areas)
    clauses = [f"{_count(frequent, 'group')} {_be(frequent)} that frequent"]
    if generic:
        which = "it is" if frequent == 1 else f"{'all ' if not kept else ''}{generic:,} of them are"
        if generic == 1 and frequent > 1:
            which = "1 of them is"
        clauses.append(
            f"{which} left out as generic: not twice as common in weakly tagged papers as "
            "overall, or spread over many areas where tagged well"
        )
    if kept > shown:
        other = "the other " if generic else ""
        clauses.append(
            f"the best {shown:,} of {other}{kept:,} {_be(shown)} suggested below (--limit "
            f"{result.settings['limit']:g} of each kind)"
        )
    elif kept:
        whom = f"the other {kept:,}" if generic else "it" if kept == 1 else f"all {kept:,}"
        clauses.append(f"{whom} {'is' if whom == 'it' or kept == 1 else 'are'} suggested below")
    return "; ".join(clauses) + "."


def _nothing(result: Suggestions) -> str:
    """Why there is nothing to suggest, and what to change to look wider."""
    s = result.settings
    if not result.weak:
        return (
            f"Nothing to suggest: no paper is weakly tagged (a best tag below "
            f"{s['weak_below']:.2f}); raise --weak-below to look at more papers."
        )
    if not result.frequent:
        return (
            f"Nothing to suggest: no keyphrase group is in {s['min_papers']:g} weakly tagged "
            "papers; lower --min-papers or raise --weak-below to look wider."
        )
    return "Nothing to suggest: every frequent group is generic."


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _be(n: int) -> str:
    return "is" if n == 1 else "are"


def _motive(group: Group) -> str:
    shown = ", ".join(_comment(pid, quote=False) for pid in group.papers[:3]) + (
        f" +{len(group.papers) - 3}" if len(group.papers) > 3 else ""
    )
    return (
        f"{len(group.papers)} papers ({shown}); {group.similarity:.2f} to {_comment(group.nearest)}"
    )


def _parent(group: Group, settings: dict[str, float]) -> str | None:
    return group.area if group.similarity >= settings["parent_similarity"] else None


def _known_phrases(rules: RuleSet) -> tuple[set[str], set[str], set[str]]:
    """Normalised aliases, normalised aliases and cues, and acronyms: what the rules match."""
    aliases = {
        " ".join(words)
        for words, found in rules.phrases.items()
        if any(rule.kind == "alias" for rule in found)
    }
    return aliases, {" ".join(words) for words in rules.phrases}, set(rules.acronyms)


def _is_known(normalized: str, text: str, known: tuple[set[str], set[str], set[str]]) -> bool:
    """Whether a rule already matches the phrase, or an alias matches part of it."""
    aliases, phrases, acronyms = known
    if normalized in phrases or text in acronyms or text.rstrip("s") in acronyms:
        return True
    words = normalized.split()
    return any(
        " ".join(words[i:j]) in aliases
        for i in range(len(words))
        for j in range(i + 1, len(words) + 1)
    )


def _group(phrases: list[str], vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Greedy grouping, most frequent phrase first: a phrase joins the group whose first phrase is
    nearest, if that cosine reaches the threshold, else starts a group."""
    heads: list[int] = []
    groups: list[list[int]] = []
    for i in range(len(phrases)):
        if heads:
            similarities = vectors[heads] @ vectors[i]
            best = int(np.argmax(similarities))
            if similarities[best] >= threshold:
                groups[best].append(i)
                continue
        heads.append(i)
        groups.append([i])
    return groups


def _area_vectors(
    taxonomy: Taxonomy, embedder: Embedder
) -> tuple[list[str], list[str], np.ndarray]:
    """One row per alias and per name of every area."""
    ids, texts = [], []
    for area in taxonomy.areas:
        for text in dict.fromkeys([area.name, *area.aliases]):
            ids.append(area.id)
            texts.append(text)
    return ids, texts, _unit(embedder.embed(texts))


def _nearest_area(
    vector: np.ndarray, ids: list[str], texts: list[str], vectors: np.ndarray, k: int = 3
) -> tuple[str, str, float]:
    """The area whose k nearest aliases (or name) are nearest on average, its nearest alias, and
    that average. Averaging keeps one loosely worded alias from pulling in unrelated phrases."""
    similarities = vectors @ vector
    by_area: dict[str, list[int]] = defaultdict(list)
    for row, area in enumerate(ids):
        by_area[area].append(row)
    best, best_score, best_row = "", -2.0, 0
    for area, rows in by_area.items():
        top = sorted(rows, key=lambda r: -similarities[r])[:k]
        score = float(np.mean(similarities[top]))
        if score > best_score:
            best, best_score, best_row = area, score, top[0]
    return best, texts[best_row], best_score


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def _new_id(label: str, parent: str | None, taken: set[str]) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:40].strip("_") or "area"
    if not slug[0].isalpha():
        slug = "a_" + slug
    base = f"{parent}.{slug}" if parent else slug
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    return candidate


def _specific(text: str) -> bool:
    """Whether a keyphrase could be an alias: several words, or one written with inner capitals
    or digits (LoRA, GPT-4, CLIP). A single ordinary word is rarely specific to one area."""
    words = text.split()
    return len(words) > 1 or any(c.isupper() or c.isdigit() for c in text[1:])


def _display(text: str) -> str:
    """A keyphrase as an alias is written: words lower-cased unless they are acronyms or names
    with inner capitals ('Transformer' -> 'transformer', 'LoRA' and 'GPT-4' stay)."""
    return " ".join(w if any(c.isupper() for c in w[1:]) else w.lower() for w in text.split())


def _scalar(text: str) -> str:
    """A YAML scalar for text: plain when that reads back the same, else double-quoted."""
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS and " #" not in text:
        return text
    return _quoted(text)


def _quoted(text: str) -> str:
    """A double-quoted YAML scalar; what YAML cannot hold as it is (control characters, line
    breaks, including U+0085 and U+2028) is escaped."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif (
            ch == " "
            or (0x20 < code < 0x7F)
            or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029))
            or 0xE000 <= code <= 0xFFFD
            or code >= 0x10000
        ):
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _comment(text: str, *, quote: bool = True) -> str:
    """Text for a YAML comment, on one line: quoted, or as it is when it needs no escapes."""
    quoted = _quoted(" ".join(text.split()))
    return quoted if quote or quoted[1:-1] != text else text
