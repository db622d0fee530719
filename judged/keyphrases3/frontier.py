"""Where the readers' codes and the authors' keywords pull apart: the rankings tried for issue 46,
each measured on the 850 open papers (ACCEPT and the other codes, F1@5 against the authors'
keywords of the 349 that have them) and on ICLR 2026 dev (F1@5, single words).

    python judged/keyphrases3/frontier.py [--cache DIR] [--plot judged/keyphrases3/frontier.png]

Every candidate of every paper is described once (the features the keyphrase model reads, its
embedding, its judged label; cached in DIR), then each ranking scores the candidates and a
simulation of language.keyphrases._choose picks five: the best 40, MMR at the default diversity,
an acronym never beside the words it spells, and one of three rules for a phrase inside another:
``house`` (0.11.0's: both kept when both are likely), ``strict`` (one term once: the later one
is left out) and ``whole`` (the longer one replaces the shorter unless it only adds a generic
head). The simulation embeds every candidate, where tagger shortlists 20 before embedding: on
0.11.0's model it gives ACCEPT 0.640 where `tagger eval --judged` gives 0.659.

The rankings: 0.11.0's model; the model fitted to these codes (held out by source: each of the
22 sources ranked by a model fitted on the others), alone and with a logistic regression over the
phrase's embedding as one more feature (itself fitted out of fold); and that model blended with
an author-listing model, ``p_accept ** a * p_listed ** (1 - a)``, where p_listed is the same
kind of trees fitted to whether the authors list the phrase, over the 3,279 papers of data/
that have keywords and were not drawn for this set (ICLR 2026 dev is in neither fit). Two oracles
bound what any ranking of these candidates can do: the readers' accepted phrases first, and the
accepted phrases the authors list first. None of it is shipped; the sealed papers are not read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DEV = ROOT / "data" / "iclr2026-dev.jsonl"
LISTED = ("iclr2024-topics", "iclr2025-keywords", "corpus-2020-2023")
CODE = {"accept": "ACCEPT", "generic": "GEN", "fragment": "FRAG", "noise": "NOISE"}
CODES = ("ACCEPT", "GEN", "RED", "FRAG", "NOISE")


def describe(path: Path, cache: Path) -> list[dict]:
    """Every candidate of every paper in ``path``: key, text, features, embedding, judged label."""
    from tagger.config import TaggerConfig
    from tagger.corpus.judged import Judgment
    from tagger.io.readers import read_papers
    from tagger.records import source_of
    from tagger.tagging.reading import Reader
    from tagger.taxonomy.loading import load_taxonomy

    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    cached = cache / f"{path.stem}-{digest}.pkl"
    if cached.exists():
        return pickle.loads(cached.read_bytes())
    papers = list(read_papers(path))
    wide = Reader(load_taxonomy(), replace(TaggerConfig(), max_candidates=1_000_000))
    described = []
    for start in range(0, len(papers), 32):
        batch = papers[start : start + 32]
        texts, analyses = wide.analyse(batch)
        for paper, read in zip(batch, wide.keyphrases.described(texts, analyses), strict=True):
            judged = Judgment.of_paper(paper)
            candidates = []
            for key, features in read.features.items():
                text = read.shown[key]
                label = judged.phrase_label(text) if judged else None
                candidates.append(
                    dict(key=key, text=text, f=features, vec=read.vectors[key], label=label)
                )
            described.append(
                dict(
                    source=source_of(paper),
                    keywords=paper.keywords or [],
                    same=[sorted(group) for group in judged.same] if judged else [],
                    cands=candidates,
                )
            )
        print(f"{path.name}: {start + len(batch)} of {len(papers)}", file=sys.stderr, end="\r")
    cache.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(pickle.dumps(described))
    return described


def listed_papers(cache: Path) -> list[dict]:
    """The papers of data/ with authors' keywords, none drawn for this set nor of ICLR 2026 dev."""
    drawn = {json.loads(line)["id"] for line in (HERE / "draw.jsonl").open(encoding="utf-8")}
    out = cache / "listed.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        for name in LISTED:
            for line in (ROOT / "data" / f"{name}.jsonl").open(encoding="utf-8"):
                paper = json.loads(line)
                if paper.get("keywords") and paper["id"] not in drawn:
                    handle.write(line)
    return describe(out, cache)


def contains(short: str, long: str) -> bool:
    return short != long and f" {short} " in f" {long} "


def choose(cands: list[dict], scores, rule: str, top: int = 5, diversity: float = 0.2) -> list[int]:
    """Five candidates as language.keyphrases._choose picks them, with ``rule`` for nesting."""
    from tagger.language.candidates import _GENERIC_HEADS
    from tagger.language.keyphrases import _spelled
    from tagger.language.vectors import fixed, similarities

    order = sorted(range(len(cands)), key=lambda k: (-scores[k], cands[k]["key"]))[:40]
    if not order:
        return []
    matrix = fixed(np.stack([cands[k]["vec"] for k in order]))
    similarity = similarities(matrix, matrix)
    chosen: list[int] = []
    closest = np.zeros(len(order))
    left = set(range(len(order)))
    while left and len(chosen) < top:
        best = max(
            left, key=lambda j: ((1 - diversity) * scores[order[j]] - diversity * closest[j], -j)
        )
        left.discard(best)
        key, text = cands[order[best]]["key"], cands[order[best]]["text"]
        others = [(j, cands[order[j]]) for j in chosen]
        if any(_spelled(text, other["text"]) for _, other in others):
            continue
        inner = [j for j, other in others if contains(other["key"], key)]
        outer = [j for j, other in others if contains(key, other["key"])]
        if rule == "house":
            if any(min(scores[order[best]], scores[order[j]]) < 0.8 for j in inner + outer):
                continue
        elif outer or (inner and rule == "strict"):
            continue
        elif inner:  # whole: the longer name replaces the shorter, unless it adds a generic head
            if key.rsplit(" ", 1)[-1] in _GENERIC_HEADS:
                continue
            chosen = [j for j in chosen if j not in inner]
            closest = np.max([similarity[j] for j in chosen], axis=0) if chosen else closest * 0
        chosen.append(best)
        closest = np.maximum(closest, similarity[best])
    return sorted((order[j] for j in chosen), key=lambda k: (-scores[k], cands[k]["key"]))


def measure(papers: list[dict], picks: list[list[int]]) -> dict[str, float]:
    """The codes of the picks as corpus.judged_phrases.read_codes reads them; F1@5; shapes."""
    from tagger.corpus.evaluate import keyphrase_f1, stem_phrase

    counts = dict.fromkeys(CODES, 0)
    f1, single, inside, listed = [], 0, 0, 0
    for paper, top in zip(papers, picks, strict=True):
        texts = [paper["cands"][k]["text"] for k in top]
        keys = [paper["cands"][k]["key"] for k in top]
        labels = [paper["cands"][k]["label"] for k in top]
        stems = [
            f" {stem_phrase(t)} " if label == "accept" else None
            for t, label in zip(texts, labels, strict=True)
        ]
        for n, label in enumerate(labels):
            if label is None:
                continue
            if label != "accept":
                counts[CODE[label]] += 1
                continue
            nested = any(s is not None and s != stems[n] and stems[n] in s for s in stems)
            named = any(stems[k] is not None and same(paper, texts[k], texts[n]) for k in range(n))
            counts["RED" if nested or named else "ACCEPT"] += 1
        if paper["keywords"]:
            f1.append(keyphrase_f1(texts, paper["keywords"], 5))
        listed += len(keys)
        single += sum(" " not in key for key in keys)
        inside += sum(any(contains(key, other) for other in keys) for key in keys)
    judged = sum(counts.values())
    shares = {code: counts[code] / judged if judged else None for code in CODES}
    return shares | {
        "F1@5": float(np.mean(f1)),
        "single": single / listed,
        "contained": inside / listed,
    }


def same(paper: dict, one: str, other: str) -> bool:
    """Whether the judges named the two phrases one thing (a ``same`` group holds both)."""
    from tagger.corpus.evaluate import stem_phrase

    pair = {stem_phrase(one), stem_phrase(other)}
    return len(pair) == 2 and any(pair <= set(group) for group in paper["same"])


def rows(paper: dict) -> np.ndarray:
    from tagger.language.keyphrases import PHRASE_FEATURES

    return np.array([[c["f"][name] for name in PHRASE_FEATURES] for c in paper["cands"]])


def vectors(paper: dict) -> np.ndarray:
    return np.stack([c["vec"] for c in paper["cands"]])


def accepted(paper: dict) -> np.ndarray:
    return np.array([int(c["label"] == "accept") for c in paper["cands"]])


def listed_by_authors(paper: dict) -> np.ndarray:
    from tagger.corpus.evaluate import stem_phrase

    gold = {stem_phrase(k) for k in paper["keywords"]}
    return np.array([int(stem_phrase(c["text"]) in gold) for c in paper["cands"]])


def trees(x: np.ndarray, y: np.ndarray):
    from sklearn.ensemble import HistGradientBoostingClassifier

    from tagger.language.trees import TREE_SETTINGS

    return HistGradientBoostingClassifier(
        **TREE_SETTINGS, early_stopping=False, random_state=0
    ).fit(x, y)


def linear(papers: list[dict]):
    from sklearn.linear_model import LogisticRegression

    x = np.vstack([vectors(p) for p in papers])
    return LogisticRegression(max_iter=2000).fit(x, np.concatenate([accepted(p) for p in papers]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/keyphrases3-frontier"))
    parser.add_argument("--plot", type=Path, help="Draw ACCEPT against F1@5 here (PNG).")
    args = parser.parse_args()
    from tagger.language.keyphrases import AcceptanceModel

    judged = [p for p in describe(HERE / "judged.jsonl", args.cache) if p["cands"]]
    dev = [p for p in describe(DEV, args.cache) if p["cands"]]
    listed = [p for p in listed_papers(args.cache) if p["cands"]]
    shipped = AcceptanceModel.load().accept
    sources = sorted({p["source"] for p in judged})

    # the codes' model, each source held out; the embedding's regression out of fold within it
    held = {"features": {}, "features + embedding": {}}
    out_of_fold = {}
    for source in sources:
        train = [p for p in judged if p["source"] != source]
        regression = linear(train)
        for i, p in enumerate(judged):
            if p["source"] == source:
                out_of_fold[i] = regression.predict_proba(vectors(p))[:, 1]
    with_embedding = lambda p, e: np.column_stack([rows(p), e])  # noqa: E731
    for source in sources:
        train = [i for i, p in enumerate(judged) if p["source"] != source]
        y = np.concatenate([accepted(judged[i]) for i in train])
        plain = trees(np.vstack([rows(judged[i]) for i in train]), y)
        richer = trees(np.vstack([with_embedding(judged[i], out_of_fold[i]) for i in train]), y)
        for i, p in enumerate(judged):
            if p["source"] == source:
                held["features"][i] = plain.predict_proba(rows(p))[:, 1]
                held["features + embedding"][i] = richer.predict_proba(
                    with_embedding(p, out_of_fold[i])
                )[:, 1]
    y_all = np.concatenate([accepted(p) for p in judged])
    plain_all = trees(np.vstack([rows(p) for p in judged]), y_all)
    regression_all = linear(judged)
    richer_all = trees(
        np.vstack([with_embedding(p, out_of_fold[i]) for i, p in enumerate(judged)]), y_all
    )
    on_dev = {
        "features": [plain_all.predict_proba(rows(p))[:, 1] for p in dev],
        "features + embedding": [
            richer_all.predict_proba(
                with_embedding(p, regression_all.predict_proba(vectors(p))[:, 1])
            )[:, 1]
            for p in dev
        ],
    }
    authors = trees(
        np.vstack([rows(p) for p in listed]), np.concatenate([listed_by_authors(p) for p in listed])
    )
    listing = lambda p: authors.predict_proba(rows(p))[:, 1]  # noqa: E731

    rankings = []  # (name, rule, scores of the judged papers, scores of dev)
    old = lambda p: np.array(shipped.predict([c["f"] for c in p["cands"]]))  # noqa: E731
    for rule in ("house", "strict", "whole"):
        rankings.append(
            (f"0.11.0's model, {rule}", rule, [old(p) for p in judged], [old(p) for p in dev])
        )
    for name in held:
        scores = [held[name][i] for i in range(len(judged))]
        rankings.append((f"fitted to the codes ({name}), strict", "strict", scores, on_dev[name]))
    for a in (0.8, 0.65, 0.5, 0.35):
        scores = [
            held["features + embedding"][i] ** a * listing(p) ** (1 - a)
            for i, p in enumerate(judged)
        ]
        on = [
            s**a * listing(p) ** (1 - a)
            for s, p in zip(on_dev["features + embedding"], dev, strict=True)
        ]
        rankings.append(
            (
                f"codes' model (+ embedding) ** {a} x authors' ** {1 - a:.2g}, strict",
                "strict",
                scores,
                on,
            )
        )
    tie = lambda p: np.array([c["f"]["similarity"] for c in p["cands"]]) * 1e-3  # noqa: E731
    rankings.append(
        ("oracle: accepted first", "strict", [accepted(p) + tie(p) for p in judged], None)
    )
    rankings.append(
        (
            "oracle: accepted and listed by the authors first",
            "strict",
            [accepted(p) * (1 + 2 * listed_by_authors(p)) + tie(p) for p in judged],
            None,
        )
    )

    lines = [
        "| ranking | ACCEPT | GEN | RED | FRAG | NOISE | F1@5 (349) | dev F1@5 | dev single words "
        "| dev contained |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    points = []
    for name, rule, scores, dev_scores in rankings:
        got = measure(
            judged,
            [choose(p["cands"], s.tolist(), rule) for p, s in zip(judged, scores, strict=True)],
        )
        cells = [f"{got[c]:.3f}" for c in CODES] + [f"{got['F1@5']:.3f}"]
        if dev_scores is not None:
            on = measure(
                dev,
                [
                    choose(p["cands"], s.tolist(), rule)
                    for p, s in zip(dev, dev_scores, strict=True)
                ],
            )
            cells += [f"{on['F1@5']:.3f}", f"{on['single']:.3f}", f"{on['contained']:.3f}"]
        else:
            cells += ["", "", ""]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        points.append((name, got["ACCEPT"], got["F1@5"]))
        print(lines[-1], flush=True)
    print("\n".join(lines))
    if args.plot:
        plot(points, args.plot)
    return 0


def plot(points: list[tuple[str, float, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.5, 5), dpi=120)
    for n, (name, accept, f1) in enumerate(points):
        axes.scatter(f1, accept, color="black" if "oracle" in name else f"C{n % 10}")
        axes.annotate(
            str(n + 1), (f1, accept), textcoords="offset points", xytext=(4, 3), fontsize=8
        )
    axes.axhline(0.93, color="grey", linestyle="--", linewidth=0.8)
    axes.axvline(0.24, color="grey", linestyle=":", linewidth=0.8)
    axes.set_xlabel("F1@5 against the authors' keywords (349 of the 850 open papers)")
    axes.set_ylabel("top 5 coded ACCEPT (850 open papers)")
    axes.set_title("Readers' codes against authors' keywords: each ranking tried (issue 46)")
    legend = "\n".join(f"{n + 1}. {name}" for n, (name, _, _) in enumerate(points))
    axes.text(1.02, 1.0, legend, transform=axes.transAxes, fontsize=6.5, va="top")
    figure.savefig(path, bbox_inches="tight")


if __name__ == "__main__":
    sys.exit(main())
