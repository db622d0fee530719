"""Agreement with labelled data: area accuracy against authors' own labels, and keyphrase
agreement with authors' keywords.

Area metrics rank, for each paper, the distinct conference labels its tags map to (through each
tag's ``crosswalk``), best tag first, after the labels of its contribution types (a conference
that files a kind of paper under its own label, such as ICLR's "datasets and benchmarks", is
told so by that type's crosswalk):

- coverage: share of papers with at least one tag;
- acc@1: the first label is the author's; acc@3: the author's is among the first three;
- labels per paper: how many distinct labels the tags map to (tagging everything scores badly here);
- per-label precision, recall, F1 and support of the first label, and the most frequent confusions.

For ``Area->Subtopic`` schemes the Area level compares the part before ``->``; at the Subtopic
level a tag's sub-area, when tagged, stands in for the area it belongs to.

Keyphrase metrics compare the top-k phrases with the author's keywords after lower-casing,
splitting on non-alphanumerics and Porter stemming: P@k = matches / min(k, predicted),
R@k = matches / keywords, F1 averaged over papers that have keywords.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import GOLD_FIELD, TaggerConfig
from ..errors import InputError, ModelError
from ..io.display import progress_bar
from ..io.files import check_outputs, open_output
from ..io.jsonl import JsonlWriter
from ..io.tagged import Skip, read_tagged, sniff_tagged
from ..language.text import stem_phrase
from ..records import AreaTag, Paper, TaggedPaper
from ..taxonomy.schemes import SUBTOPIC, schemes

if TYPE_CHECKING:
    from ..tagging.pipeline import Tagger


@dataclass
class LabelStats:
    label: str
    support: int
    predicted: int
    correct: int

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.support if self.support else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class AreaReport:
    level: str
    papers: int
    coverage: float
    acc_at_1: float
    acc_at_3: float
    labels_per_paper: float
    per_label: list[LabelStats] = field(default_factory=list)
    confusions: list[tuple[str, str, int]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "level": self.level,
            "papers": self.papers,
            "coverage": round(self.coverage, 4),
            "acc@1": round(self.acc_at_1, 4),
            "acc@3": round(self.acc_at_3, 4),
            "labels_per_paper": round(self.labels_per_paper, 3),
            "per_label": [
                {
                    "label": s.label,
                    "support": s.support,
                    "predicted": s.predicted,
                    "precision": round(s.precision, 4),
                    "recall": round(s.recall, 4),
                    "f1": round(s.f1, 4),
                }
                for s in self.per_label
            ],
            "confusions": [{"gold": g, "predicted": p, "count": n} for g, p, n in self.confusions],
        }


def ranked_labels(
    tags: Sequence[AreaTag],
    scheme: str,
    *,
    level: str = "label",
    facets: Sequence[AreaTag] = (),
) -> list[str]:
    """The distinct labels a paper's facet tags and then its tags map to, best tag first.

    ``level`` is "label" (as written), "area" (the part before '->') or "subtopic" (a tagged
    sub-area's 'Area->Subtopic' label takes the place of its bare 'Area' label).
    """
    labels: list[str] = []
    for tag in [*facets, *tags]:
        for label in tag.crosswalk.get(scheme, []):
            if level == "area":
                label = label.split(SUBTOPIC)[0]
            if label not in labels:
                labels.append(label)
    if level == "subtopic":
        labels = _specific_first(labels)
    return labels


def _specific_first(labels: list[str]) -> list[str]:
    """Replace each bare 'Area' by the first 'Area->Subtopic' that follows it."""
    out: list[str] = []
    for label in labels:
        if label in out:
            continue
        if SUBTOPIC not in label:
            specific = next(
                (
                    other
                    for other in labels
                    if other.startswith(label + SUBTOPIC) and other not in out
                ),
                None,
            )
            label = specific or label
        if label not in out:
            out.append(label)
    return out


def area_report(
    pairs: Iterable[tuple[str, Sequence[str]]], *, level: str = "label", top_confusions: int = 10
) -> AreaReport:
    """Metrics over (gold label, ranked predicted labels) pairs."""
    pairs = list(pairs)
    n = len(pairs)
    support: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    confusions: Counter[tuple[str, str]] = Counter()
    covered = hit1 = hit3 = 0
    total_labels = 0
    for gold, ranked in pairs:
        support[gold] += 1
        total_labels += len(ranked)
        if ranked:
            covered += 1
            predicted[ranked[0]] += 1
            if ranked[0] == gold:
                correct[gold] += 1
            else:
                confusions[(gold, ranked[0])] += 1
        hit1 += bool(ranked) and ranked[0] == gold
        hit3 += gold in ranked[:3]
    labels = sorted(set(support) | set(predicted), key=lambda label: (-support[label], label))
    return AreaReport(
        level=level,
        papers=n,
        coverage=covered / n if n else 0.0,
        acc_at_1=hit1 / n if n else 0.0,
        acc_at_3=hit3 / n if n else 0.0,
        labels_per_paper=total_labels / n if n else 0.0,
        per_label=[LabelStats(lb, support[lb], predicted[lb], correct[lb]) for lb in labels],
        confusions=[(g, p, c) for (g, p), c in confusions.most_common(top_confusions)],
    )


def keyphrase_f1(predicted: Sequence[str], gold: Sequence[str], k: int) -> float:
    """F1@k of predicted phrases (best first) against gold keywords, Porter-stemmed exact match."""
    gold_set = {stem_phrase(g) for g in gold} - {""}
    if not gold_set:
        return 0.0
    top: list[str] = []
    for phrase in predicted:
        stemmed = stem_phrase(phrase)
        if stemmed and stemmed not in top:
            top.append(stemmed)
        if len(top) == k:
            break
    if not top:
        return 0.0
    matches = len(set(top) & gold_set)
    precision, recall = matches / len(top), matches / len(gold_set)
    return 2 * precision * recall / (precision + recall) if matches else 0.0


def mean_keyphrase_f1(runs: Iterable[tuple[Sequence[str], Sequence[str]]], k: int) -> float:
    """Mean F1@k over (predicted, gold) pairs of papers that have gold keywords."""
    scores = [keyphrase_f1(pred, gold, k) for pred, gold in runs if gold]
    return sum(scores) / len(scores) if scores else 0.0


# --- running an evaluation over a file ---------------------------------------------------------


def top_shape(keyphrases: Sequence[Sequence[str]], k: int = 5) -> dict[str, float]:
    """How the first ``k`` keyphrases of each paper say things twice or say little: the share
    of them that are one word, the share contained in another of them (Porter-stemmed words),
    and the share of papers whose first ``k`` hold an acronym and its expansion."""
    from ..language.text import spells

    phrases = singles = contained = papers = pairs = 0
    for listed in keyphrases:
        top = [p for p in listed[:k] if p.strip()]
        if not top:
            continue
        papers += 1
        phrases += len(top)
        singles += sum(len(p.split()) == 1 for p in top)
        stems = [f" {stem_phrase(p)} " for p in top]
        contained += sum(
            any(stems[n] in other for m, other in enumerate(stems) if m != n)
            for n in range(len(top))
        )
        pairs += any(
            len(a.split()) == 1
            and len(b.split()) > 1
            and a.lower() not in b.lower().replace("-", " ").split()
            and spells(a, b.split())
            for a in top
            for b in top
        )
    return {
        "single_words": round(singles / phrases, 4) if phrases else 0.0,
        "contained": round(contained / phrases, 4) if phrases else 0.0,
        "acronym_and_expansion": round(pairs / papers, 4) if papers else 0.0,
    }


@dataclass
class Evaluation:
    source: str
    scheme: str
    gold_field: str
    papers: int  # papers with a gold label
    areas: list[AreaReport]
    keyphrases: dict[str, dict[str, float]]  # system -> {"F1@5": ., "F1@10": ., top_shape}
    keyword_papers: int
    keywords_known: int = 0  # of them, papers whose keywords the keyphrase ranking was fitted to
    seconds: float | None = None  # time spent tagging, when this run tagged
    known: dict[str, int] = field(default_factory=dict)  # labelled papers the model saw, by how
    unseen: list[AreaReport] = field(default_factory=list)  # the areas on the other papers

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "scheme": self.scheme,
            "gold_field": self.gold_field,
            "papers": self.papers,
            "areas": [r.as_dict() for r in self.areas],
            "keyphrases": self.keyphrases,
            "keyword_papers": self.keyword_papers,
            "keywords_known_to_the_keyphrase_ranking": self.keywords_known,
            "tagging_seconds": None if self.seconds is None else round(self.seconds, 2),
            "known_to_the_model": self.known,
            "unseen": [r.as_dict() for r in self.unseen],
        }


def evaluate_file(
    source: str | Path,
    tagger: Tagger,
    *,
    scheme: str,
    gold_field: str = GOLD_FIELD,
    references: bool = False,
    save_tagged: str | Path | None = None,
    skip: Skip | None = None,
    progress: bool = False,
) -> Evaluation:
    """Evaluate a file (or "-" for stdin, read once) of labelled papers in any input format,
    which ``tagger`` tags first (and, with ``save_tagged``, writes there), or of tagged output,
    evaluated as it is. ``references`` also scores YAKE and plain KeyBERT keyphrases. A record
    that cannot be read raises InputError, or, given ``skip``, is passed to it and left out.
    ``progress``: a bar on stderr while the papers are tagged."""
    records, seconds = tagged_records(
        source, tagger, save_tagged=save_tagged, skip=skip, progress=progress
    )
    refs = None
    if references:
        texts = [f"{r.paper.title or ''}. {r.paper.abstract}" for r in records]
        refs = {
            "YAKE (n=3)": yake_keyphrases(texts),
            "KeyBERT (1-2 grams)": keybert_keyphrases(texts),
        }
    return evaluate_records(
        records,
        scheme=scheme,
        gold_field=gold_field,
        source=str(source),
        references=refs,
        seconds=seconds,
        known=tagger.learned.model.known(r.paper.abstract for r in records),
        keywords_read=keywords_read(tagger, records),
    )


def keywords_read(tagger: Tagger, records: Sequence[TaggedPaper]) -> list[bool]:
    """Whether the keyphrase ranking's fit read each paper's authors' keywords (its authors'
    model was fitted to them: language.readers), by abstract_key."""
    from ..tagging.neighbours import abstract_key

    about = tagger.reader.keyphrases.model.about.get("ranking", {})
    read = set(about.get("listed_keys", ()))
    return [bool(read) and abstract_key(r.paper.abstract) in read for r in records]


def tagged_records(
    source: str | Path,
    tagger: Tagger,
    *,
    save_tagged: str | Path | None = None,
    skip: Skip | None = None,
    progress: bool = False,
) -> tuple[list[TaggedPaper], float | None]:
    """The tagged records of ``source``: read as they are when it holds tagged output, else its
    papers tagged by ``tagger`` (and written to ``save_tagged``), with the seconds that took;
    with ``progress``, a bar on stderr counts them as they are tagged."""
    tagged, stdin = sniff_tagged(source)
    if tagged:
        return list(read_tagged(source, stdin=stdin, skip=skip)), None
    check_outputs({"--save-tagged": save_tagged}, [source])
    with contextlib.ExitStack() as stack:  # the output opens before the work, not after
        saved = stack.enter_context(open_output(save_tagged)) if save_tagged else None
        papers = _read_papers(source, stdin, skip)
        started = time.perf_counter()
        tagged = tagger.tag_many(papers)
        if progress:
            tagged = progress_bar(tagged, total=len(papers))
        records = list(tagged)
        seconds = time.perf_counter() - started
        if saved:
            writer = JsonlWriter(saved)
            for record in records:
                writer.write(record)
    return records, seconds


def papers_of(source: str | Path, *, skip: Skip | None = None) -> list[Paper]:
    """The papers of ``source``, untagged: those of its records when it holds tagged output."""
    tagged, stdin = sniff_tagged(source)
    if tagged:
        return [record.paper for record in read_tagged(source, stdin=stdin, skip=skip)]
    return _read_papers(source, stdin, skip)


def _read_papers(source: str | Path, stdin, skip: Skip | None) -> list[Paper]:
    """Every paper of an input file; a record that cannot be read goes to ``skip`` (or is
    raised, without one)."""
    from ..io.readers import iter_records

    papers = []
    for item in iter_records(source, stdin=stdin):
        if isinstance(item, InputError):
            if skip is None:
                raise item
            skip(item)
        else:
            papers.append(item)
    return papers


def evaluate_records(
    records: Sequence[TaggedPaper],
    *,
    scheme: str,
    gold_field: str,
    source: str,
    references: dict[str, Sequence[Sequence[str]]] | None = None,
    seconds: float | None = None,
    known: Sequence[str] | None = None,
    keywords_read: Sequence[bool] | None = None,
) -> Evaluation:
    """Metrics over tagged records; the author's label is the paper's field ``gold_field``.

    ``references`` maps a reference system's name to its keyphrases for each record, in order.
    ``known`` says for each record what the model knows of its paper (FittedModel.known): the
    areas are then measured on the papers it does not know as well. ``keywords_read`` says for
    each whether the keyphrase ranking was fitted to its keywords: tagger's keyphrases are then
    measured on the papers whose keywords it never read as well.
    """
    if scheme not in schemes():
        raise ValueError(f"unknown scheme {scheme!r}; choose one of {', '.join(schemes())}")
    known = list(known) if known is not None else [""] * len(records)
    labelled = [(r, _gold(r, gold_field), how) for r, how in zip(records, known, strict=True)]
    labelled = [(r, gold, how) for r, gold, how in labelled if gold]
    levels = schemes()[scheme].levels
    reports = [_areas(labelled, scheme, level) for level in levels]
    unseen = [(r, gold, how) for r, gold, how in labelled if not how]
    seen = Counter(how for _, _, how in labelled if how)
    gold_keywords = [r.paper.keywords or [] for r in records]
    systems = {"tagger": [[k.text for k in r.keyphrases] for r in records]}
    systems.update(references or {})

    def measured(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]]) -> dict:
        return {
            f"F1@{k}": round(mean_keyphrase_f1(zip(predicted, gold, strict=True), k), 4)
            for k in (5, 10)
        } | top_shape(predicted)

    keyphrases = {name: measured(predicted, gold_keywords) for name, predicted in systems.items()}
    read = [bool(r) and bool(g) for r, g in zip(keywords_read or [], gold_keywords, strict=False)]
    if any(read):
        other = [n for n, g in enumerate(gold_keywords) if g and not read[n]]
        keyphrases[f"tagger, on the {len(other)} whose keywords no fit read"] = measured(
            [systems["tagger"][n] for n in other], [gold_keywords[n] for n in other]
        )
    return Evaluation(
        source=source,
        scheme=scheme,
        gold_field=gold_field,
        papers=len(labelled),
        areas=reports,
        keyphrases=keyphrases,
        keyword_papers=sum(1 for g in gold_keywords if g),
        keywords_known=sum(read),
        seconds=seconds,
        known=dict(sorted(seen.items())),
        unseen=[_areas(unseen, scheme, level) for level in levels] if seen and unseen else [],
    )


def _areas(labelled: list[tuple[TaggedPaper, str, str]], scheme: str, level: str) -> AreaReport:
    pairs = []
    for record, gold, _ in labelled:
        if level == "area":
            gold = gold.split(SUBTOPIC)[0]
        pairs.append((gold, ranked_labels(record.tags, scheme, level=level, facets=record.facets)))
    return area_report(pairs, level=level)


def _gold(record: TaggedPaper, field: str) -> str | None:
    """The author's label: a field of the paper, kept as it came (papers keep unknown fields)."""
    value = getattr(record.paper, field, None)
    return value if isinstance(value, str) and value else None


def yake_keyphrases(texts: Sequence[str], top_n: int = TaggerConfig().top_n) -> list[list[str]]:
    """YAKE (n=3), a reference for keyphrase agreement: as many keyphrases as tagger lists."""
    try:
        import yake
    except ImportError:
        raise ModelError(
            "YAKE is not installed; install it with: pip install 'tagger[eval]'"
        ) from None

    extractor = yake.KeywordExtractor(lan="en", n=3, top=top_n)
    return [[phrase for phrase, _ in extractor.extract_keywords(text)] for text in texts]


def keybert_keyphrases(
    texts: Sequence[str],
    *,
    top_n: int = TaggerConfig().top_n,
    ngram_range: tuple[int, int] = (1, 2),
) -> list[list[str]]:
    """Plain KeyBERT with the default model and English stop words, a reference."""
    from keybert import KeyBERT

    from ..language.embedders import MiniLMEmbedder

    model = KeyBERT(model=MiniLMEmbedder().model)
    out = model.extract_keywords(
        list(texts), keyphrase_ngram_range=ngram_range, stop_words="english", top_n=top_n
    )
    if len(texts) == 1:
        out = [out]
    return [[phrase for phrase, _ in keywords] for keywords in out]


def _area_row(r: AreaReport) -> str:
    return (
        f"| {r.level} | {r.coverage:.3f} | {r.acc_at_1:.3f} | {r.acc_at_3:.3f} | "
        f"{r.labels_per_paper:.2f} |"
    )


def render(evaluation: Evaluation, *, per_label: int = 30) -> str:
    """The evaluation as a plain-text report with Markdown tables."""
    e = evaluation
    lines = [
        f"## {e.source}: scheme `{e.scheme}`, gold field `{e.gold_field}`, "
        f"{e.papers} labelled papers",
        "",
    ]
    if e.seconds is not None:
        lines += [f"Tagged in {e.seconds:.1f} s.", ""]
    areas = e.areas if e.papers else []
    if not e.papers:
        lines += [f"No paper has a `{e.gold_field}` label: keyphrases only.", ""]
    else:
        lines += [
            "| level | coverage | acc@1 | acc@3 | labels/paper |",
            "| --- | --- | --- | --- | --- |",
        ]
    lines += [_area_row(r) for r in areas]
    if e.known:
        from ..tagging.model import said_known

        how = said_known(e.known)
        lines += ["", f"Of the {e.papers} labelled papers, {how} (in sample: optimistic)."]
        if e.unseen:
            lines += [f"On the other {e.unseen[0].papers}, which no part of it saw:", ""]
            lines += ["| level | coverage | acc@1 | acc@3 | labels/paper |"]
            lines += ["| --- | --- | --- | --- | --- |", *map(_area_row, e.unseen)]
    if e.keyword_papers:
        lines += [
            "",
            f"Keyphrases against author keywords ({e.keyword_papers} papers, "
            "Porter-stemmed exact match):",
            "",
            "| system | F1@5 | F1@10 | first 5: one word | contained in another | papers with an "
            "acronym and its expansion |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for name, s in e.keyphrases.items():
            lines.append(
                f"| {name} | {s['F1@5']:.3f} | {s['F1@10']:.3f} | {s['single_words']:.3f} | "
                f"{s['contained']:.3f} | {s['acronym_and_expansion']:.3f} |"
            )
        if e.keywords_known:
            lines += [
                "",
                f"Of the {e.keyword_papers} papers with keywords, {e.keywords_known} had their "
                "keywords read by the keyphrase ranking's fit (its authors' model: in sample, "
                "optimistic); the last row is on the others.",
            ]
    for r in areas:
        lines += [
            "",
            f"Per label ({r.level} level), first label only:",
            "",
            "| label | support | predicted | precision | recall | F1 |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for s in r.per_label[:per_label]:
            lines.append(
                f"| {s.label} | {s.support} | {s.predicted} | {s.precision:.2f} | "
                f"{s.recall:.2f} | {s.f1:.2f} |"
            )
        if r.confusions:
            lines += [
                "",
                f"Most frequent confusions ({r.level} level):",
                "",
                "| author's label | tagger's first label | papers |",
                "| --- | --- | --- |",
            ]
            lines += [f"| {g} | {p} | {n} |" for g, p, n in r.confusions]
    return "\n".join(lines) + "\n"
