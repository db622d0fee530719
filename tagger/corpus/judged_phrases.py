"""The keyphrases of judged papers against their judged phrases (judged/keyphrases.jsonl): the
part of a judged report (corpus.judged) that measures keyphrases."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, get_args

from ..records import Keyphrase, TaggedPaper, source_of

PhraseLabel = Literal["accept", "fragment", "generic", "vague", "passing", "noise"]
PHRASE_LABELS: tuple[str, ...] = get_args(PhraseLabel)
TOP_PHRASES = 5  # keyphrases measured per paper: the first five listed
# A reader's codes of a top-5 keyphrase (../shared/READING.md), the first that applies, and the
# judged label each code reads: a phrase accepted on its own is RED beside another accepted one
# that contains it, word for word, or that is a higher-ranked name of the same thing.
READ_CODES = ("NOISE", "FRAG", "GEN", "RED", "ACCEPT")
CODE_OF = {
    "noise": "NOISE",
    "fragment": "FRAG",
    "generic": "GEN",
    "vague": "GEN",
    "passing": "GEN",
    "accept": "ACCEPT",
}
CALIBRATION_BINS = 10


class PhraseJudgment(Protocol):
    """What of a judgment (corpus.judged.Judgment) keyphrases are measured by."""

    def phrase_label(self, phrase: str) -> str | None: ...

    def same_thing(self, one: str, other: str) -> bool: ...


def add_to_bin(bins: list[list[float]], score: float, right: bool) -> None:
    """Count one scored item in its calibration bin: [items, sum of scores, right ones]."""
    row = bins[min(int(score * CALIBRATION_BINS), CALIBRATION_BINS - 1)]
    row[0] += 1
    row[1] += score
    row[2] += right


def largest_gap(bins: list[list[float]], min_items: int) -> float:
    """The largest |share right - mean score| of a bin with at least ``min_items`` items."""
    gaps = [abs(right / n - total / n) for n, total, right in bins if n >= min_items]
    return max(gaps, default=0.0)


@dataclass
class PhraseReport:
    """The first TOP_PHRASES keyphrases of each paper against the judged phrases."""

    papers: int = 0
    listed: int = 0
    unjudged: int = 0
    labels: Counter = field(default_factory=Counter)  # PHRASE_LABELS
    codes: Counter = field(default_factory=Counter)  # READ_CODES: the top 5 as a reader codes it
    single_rejected: int = 0  # one word, not accepted
    contained: int = 0  # inside another of the paper's first keyphrases
    listed_all: int = 0  # every keyphrase listed, judged
    accepted_all: int = 0
    bins: list[list[float]] = field(
        default_factory=lambda: [[0, 0.0, 0] for _ in range(CALIBRATION_BINS)]
    )
    by_source: dict[str, Counter] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)  # label -> a few phrases
    in_sample: bool = False  # the keyphrase model was fitted on these judgments
    keyword_papers: int = 0  # papers with their authors' keywords
    f1_sum: float = 0.0  # of F1@5 against them

    def count(self, record: TaggedPaper, judgment: PhraseJudgment) -> None:
        from .evaluate import keyphrase_f1, stem_phrase

        self.papers += 1
        if record.paper.keywords:
            self.keyword_papers += 1
            texts = [kp.text for kp in record.keyphrases]
            self.f1_sum += keyphrase_f1(texts, record.paper.keywords, TOP_PHRASES)
        top = record.keyphrases[:TOP_PHRASES]
        stems = [f" {stem_phrase(kp.text)} " for kp in top]
        by = self.by_source.setdefault(source_of(record.paper), Counter())
        by["papers"] += 1
        for n, keyphrase in enumerate(record.keyphrases):
            label = judgment.phrase_label(keyphrase.text)
            if label is None:
                if n < TOP_PHRASES:
                    self.unjudged += 1
                continue
            self.listed_all += 1
            self.accepted_all += label == "accept"
            add_to_bin(self.bins, keyphrase.score, label == "accept")
            if n >= TOP_PHRASES:
                continue
            self.listed += 1
            self.labels[label] += 1
            by["listed"] += 1
            by["accept"] += label == "accept"
            if label != "accept":
                self.examples.setdefault(label, []).append(keyphrase.text)
            self.single_rejected += len(keyphrase.text.split()) == 1 and label != "accept"
        for n, stem in enumerate(stems):
            self.contained += any(stem in other for k, other in enumerate(stems) if k != n)
        for code in read_codes(top, judgment):
            if code is not None:
                self.codes[code] += 1

    def share(self, count: int) -> float:
        return count / self.listed if self.listed else 0.0

    def largest_gap(self, min_phrases: int = 10) -> float:
        return largest_gap(self.bins, min_phrases)

    def as_dict(self) -> dict[str, Any]:
        return {
            "papers": self.papers,
            "judged": self.listed,
            "unjudged": self.unjudged,
            "acceptance": round(self.share(self.labels["accept"]), 4),
            "labels": {label: self.labels[label] for label in PHRASE_LABELS},
            "fragments": round(self.share(self.labels["fragment"]), 4),
            "single_words_rejected": round(self.share(self.single_rejected), 4),
            "contained_in_another": round(self.contained / (self.listed + self.unjudged), 4)
            if self.listed + self.unjudged
            else 0.0,
            "noise": round(self.share(self.labels["noise"]), 4),
            "read_as_readers": {c: round(self.share(self.codes[c]), 4) for c in READ_CODES},
            "acceptance_all_listed": round(self.accepted_all / self.listed_all, 4)
            if self.listed_all
            else 0.0,
            "largest_calibration_gap": round(self.largest_gap(), 4),
            "keyword_papers": self.keyword_papers,
            "f1_at_5": round(self.f1_sum / self.keyword_papers, 4) if self.keyword_papers else None,
            "by_source": {name: dict(counts) for name, counts in sorted(self.by_source.items())},
            "in_sample": self.in_sample,
        }


def read_codes(top: Sequence[Keyphrase], judgment: PhraseJudgment) -> list[str | None]:
    """Each keyphrase of a top 5 coded as a reader codes it (READ_CODES), from its judged label
    and the phrases beside it; None where it is unjudged."""
    from .evaluate import stem_phrase

    labels = [judgment.phrase_label(kp.text) for kp in top]
    accepted = [f" {stem_phrase(kp.text)} " if label == "accept" else None
                for kp, label in zip(top, labels, strict=True)]  # fmt: skip
    codes: list[str | None] = []
    for n, (keyphrase, label) in enumerate(zip(top, labels, strict=True)):
        if label is None or label != "accept":
            codes.append(None if label is None else CODE_OF[label])
            continue
        inside = any(
            other is not None and other != accepted[n] and accepted[n] in other
            for other in accepted
        )
        named = any(
            accepted[k] is not None and judgment.same_thing(top[k].text, keyphrase.text)
            for k in range(n)
        )
        codes.append("RED" if inside or named else "ACCEPT")
    return codes


def render_phrases(report: PhraseReport, source: str) -> str:
    """The keyphrase part of a judged report."""
    k = report.as_dict()
    lines = [
        f"## {source}: the first {TOP_PHRASES} keyphrases of {k['papers']} judged papers",
        "",
        *(
            [
                "The keyphrase model that ranked these was fitted on these very judgments, so the "
                "figures are optimistic; `python -m tagger.fitting.keyphrases` measures "
                "each source held out (docs/keyphrase-calibration.md), and `python -m "
                "tagger.fitting.keyphrase_ranking` the readers' ranking "
                "(docs/keyphrase-ranking.md).",
                "",
            ]
            if report.in_sample
            else []
        ),
        "| acceptance | fragments | single words not accepted | contained in another | noise "
        "| unjudged | acceptance of all listed | largest calibration gap |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| {k['acceptance']:.3f} | {k['fragments']:.3f} | {k['single_words_rejected']:.3f} | "
        f"{k['contained_in_another']:.3f} | {k['noise']:.3f} | {k['unjudged']} | "
        f"{k['acceptance_all_listed']:.3f} | {k['largest_calibration_gap']:.3f} |",
        "",
        *(
            [
                f"Against the authors' keywords of the {k['keyword_papers']} papers that have "
                f"them (Porter-stemmed exact match): F1@5 {k['f1_at_5']:.3f}.",
                "",
            ]
            if k["keyword_papers"]
            else []
        ),
        "As a reader codes the judged top 5 (../shared/READING.md: a phrase accepted alone is "
        "RED beside an accepted one that holds it or names the same thing higher up): "
        + ", ".join(f"{code} {k['read_as_readers'][code]:.3f}" for code in READ_CODES)
        + ".",
        "",
        f"Judged keyphrases: {k['judged']} ("
        + ", ".join(f"{k['labels'][label]} {label}" for label in PHRASE_LABELS)
        + f"); {k['unjudged']} not in the judged pool.",
        "",
        "Calibration (judged keyphrases listed, by score):",
        "",
        "| score | keyphrases | mean score | accepted |",
        "| --- | --- | --- | --- |",
        *(
            f"| {k / CALIBRATION_BINS:.1f}-{(k + 1) / CALIBRATION_BINS:.1f} | {int(n)} | "
            f"{total / n:.2f} | {right / n:.2f} |"
            for k, (n, total, right) in enumerate(report.bins)
            if n
        ),
        "",
        "| source | papers | judged | acceptance |",
        "| --- | --- | --- | --- |",
    ]
    for name, c in sorted(report.by_source.items()):
        share = c["accept"] / c["listed"] if c["listed"] else 0.0
        lines.append(f"| {name} | {c['papers']} | {c['listed']} | {share:.3f} |")
    return "\n".join(lines) + "\n"
