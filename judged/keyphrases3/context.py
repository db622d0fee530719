"""The frontier, second round: what a paper's own words around a phrase, and its neighbours in
the corpus, add to the rankings of frontier.py, and a ranking that combines the readers' model,
0.11.0's model and the authors' model. Measured as frontier.py measures (the same simulation of
the choice, open papers held out by source, ICLR 2026 dev held out by source, sealed not read).

    python judged/keyphrases3/context.py --neighbours --plot judged/keyphrases3/context.png \
        --table judged/keyphrases3/context.md [--cache DIR]

What is added to each candidate, beside the features the keyphrase model reads:

- **its context**: the shipped 7-bit model's last hidden states over the paper's tokens (title
  and abstract, the first 256 tokens; or only the first ``doc_words`` words, the passage tagger
  already embeds for KeyBERT's similarity), averaged over the tokens of the phrase's first
  occurrence, with a flag for a phrase found there. A logistic regression over that vector and
  the phrase's own embedding (out of fold: each source's papers scored by one fitted on the
  others) becomes one feature of the trees.
- **its neighbourhood** (``--neighbours``): over 13,066 abstracts of data/ (none drawn for this
  set, none of ICLR 2026 dev), the cosine of the phrase to the corpus's mean and to the paper's
  nearest of 32 k-means centroids, its mean and best cosine to the paper's 20 nearest abstracts,
  and the share of those 20 that write it.

The combined ranking is ``old ** t * readers ** (1 - t) * (1 + w * authors) * s``: 0.11.0's
model, the readers' model (the trees above, fitted to the codes, held out by source) and the
authors' model (the same trees fitted to whether the authors list the phrase, over the 3,279
papers of data/ with keywords not drawn here), with ``s`` < 1 for a single word; every phrase
listed once (frontier.py's ``strict``). The grid of ``t``, ``w`` is chosen on these same open
papers and dev: its best points are in-sample for the choice of ``t`` and ``w``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import frontier  # noqa: E402
from frontier import CODES, DEV, choose, measure  # noqa: E402
from models import scores, unit  # noqa: E402

ROOT = HERE.parent.parent
CORPUS = ("corpus-2020-2023", "iclr2024-topics", "iclr2025-keywords")
GRID = dict(t=(1.0, 0.8, 0.7, 0.6, 0.5), w=(2, 4, 8, 16), s=(0.6,))


def read(path: Path) -> list[tuple[str, str]]:
    """Each paper's id and its text as tagger reads it (title and abstract), in file order."""
    from tagger.io.readers import read_papers
    from tagger.language.text import paper_text

    return [(p.id, paper_text(p.title, p.abstract)) for p in read_papers(path)]


def described(cache: Path) -> tuple[list[dict], list[dict], list[dict]]:
    """frontier.py's open papers, dev and listed papers, each with its id, its text and each
    candidate's stemmed words (``stem``); the papers without candidates left out."""
    from tagger.corpus.evaluate import stem_phrase

    judged = frontier.describe(HERE / "judged.jsonl", cache)
    dev = frontier.describe(DEV, cache)
    listed = frontier.listed_papers(cache)
    groups = ((judged, HERE / "judged.jsonl"), (dev, DEV), (listed, cache / "listed.jsonl"))
    for papers, path in groups:
        for paper, (paper_id, text) in zip(papers, read(path), strict=True):
            paper["id"], paper["text"] = paper_id, text
            for c in paper["cands"]:
                c["stem"] = stem_phrase(c["text"])
    return tuple([p for p in papers if p["cands"]] for papers, _ in groups)


def first_tokens(text: str, cand: dict, offsets: list[tuple[int, int]]) -> list[int]:
    """The tokens (by their character ``offsets`` in ``text``) of the candidate's first
    occurrence, as written or as its normalised form; none if it is not found."""
    low = text.lower()
    for written in (cand["text"].lower(), cand["key"]):
        found = re.search(r"\b" + re.escape(written) + r"\b", low)
        if found:
            return [
                i
                for i, (a, b) in enumerate(offsets)
                if b > a and a < found.end() and b > found.start()
            ]
    return []


def contextual(papers: list[dict], words: int | None) -> None:
    """Each candidate's ``ctx``: its first occurrence's mean last hidden state (unit), or zeros."""
    from tagger.language.embedders import OnnxEmbedder

    tokenizer, session = OnnxEmbedder()._load()
    for paper in papers:
        text = paper["text"]
        if words is not None:
            text = " ".join(text.split()[:words])
        encoding = tokenizer.encode(text)
        ids = np.array([encoding.ids[:256]], dtype=np.int64)
        (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        out = np.zeros((len(paper["cands"]), 385), np.float32)
        for k, cand in enumerate(paper["cands"]):
            tokens = first_tokens(text, cand, encoding.offsets[:256])
            if tokens:
                mean = hidden[0][tokens].mean(0)
                out[k, :384], out[k, 384] = mean / np.linalg.norm(mean), 1.0
        paper["ctx"] = out


def neighbourhood(groups: list[list[dict]], cache: Path) -> None:
    """Each candidate's ``near``: the five neighbourhood columns of the module's docstring."""
    from sklearn.cluster import KMeans

    from tagger.config import TaggerConfig
    from tagger.io.readers import read_papers
    from tagger.language.text import paper_text
    from tagger.tagging.reading import Reader
    from tagger.taxonomy.loading import load_taxonomy

    drawn = {json.loads(line)["id"] for line in (HERE / "draw.jsonl").open(encoding="utf-8")}
    left_out = drawn | {paper_id for paper_id, _ in read(DEV)}
    corpus_path = cache / "neighbour-corpus.jsonl"
    with corpus_path.open("w", encoding="utf-8") as handle:
        for name in CORPUS:
            for line in (ROOT / "data" / f"{name}.jsonl").open(encoding="utf-8"):
                if json.loads(line)["id"] not in left_out:
                    handle.write(line)
    keyphrases = Reader(load_taxonomy(), TaggerConfig()).keyphrases
    corpus = list(read_papers(corpus_path))
    texts = [paper_text(p.title, p.abstract).lower() for p in corpus]
    embedded = cache / "neighbour-corpus.npy"
    if not embedded.exists():
        np.save(
            embedded, keyphrases.embed_papers([paper_text(p.title, p.abstract) for p in corpus])
        )
    vectors = unit(np.load(embedded))
    row_of = {p.id: n for n, p in enumerate(corpus)}
    mean = unit(vectors.mean(0))
    centroids = unit(KMeans(32, random_state=0, n_init=3).fit(vectors).cluster_centers_)
    for papers in groups:
        opening = keyphrases.embed_papers([p["text"] for p in papers])
        for paper, doc in zip(papers, unit(opening), strict=True):
            phrases = unit(np.stack([c["vec"] for c in paper["cands"]]))
            close = vectors @ doc
            if paper["id"] in row_of:
                close[row_of[paper["id"]]] = -1.0
            nearest = np.argsort(-close)[:20]
            cosines = phrases @ vectors[nearest].T
            written = [
                np.mean(
                    [
                        bool(re.search(r"\b" + re.escape(c["text"].lower()) + r"\b", texts[j]))
                        for j in nearest
                    ]
                )
                for c in paper["cands"]
            ]
            paper["near"] = np.column_stack(
                [
                    phrases @ mean,
                    phrases @ centroids[np.argmax(centroids @ doc)],
                    cosines.mean(1),
                    cosines.max(1),
                    written,
                ]
            )


def measured(judged, dev, picked_judged, picked_dev) -> dict:
    got = measure(judged, picked_judged)
    on = measure(dev, picked_dev)
    return got | {
        "dev F1@5": on["F1@5"],
        "dev single": on["single"],
        "dev contained": on["contained"],
    }


def line(name: str, got: dict) -> str:
    cells = [got[c] for c in CODES] + [
        got[k] for k in ("F1@5", "dev F1@5", "dev single", "dev contained")
    ]
    return f"| {name} | " + " | ".join(f"{c:.3f}" for c in cells) + " |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/keyphrases3-frontier"))
    parser.add_argument("--plot", type=Path, help="Draw ACCEPT against dev F1@5 here (PNG).")
    parser.add_argument("--neighbours", action="store_true", help="Also the neighbourhood rows.")
    parser.add_argument("--table", type=Path, help="Write the whole table here (Markdown).")
    args = parser.parse_args()
    from tagger.language.keyphrases import AcceptanceModel

    judged, dev, listed = described(args.cache)
    if args.neighbours:
        neighbourhood([judged, dev, listed], args.cache)
    shipped = AcceptanceModel.load().accept
    old = lambda p: np.array(shipped.predict([c["f"] for c in p["cands"]]))  # noqa: E731
    single = lambda p: np.array([" " not in c["key"] for c in p["cands"]], float)  # noqa: E731

    def picks(papers, ranked, rule="strict"):
        return [choose(p["cands"], s.tolist(), rule) for p, s in zip(papers, ranked, strict=True)]

    header = (
        "| ranking | ACCEPT | GEN | RED | FRAG | NOISE | F1@5 (349) | dev F1@5 | dev single words "
        "| dev contained |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    print(header)
    table, points = [], {}
    base = measured(
        judged, dev, picks(judged, map(old, judged), "house"), picks(dev, map(old, dev), "house")
    )
    table.append(line("0.11.0's model, house", base))
    print(table[-1], flush=True)
    variants = [("features", False, False, None)]
    if args.neighbours:
        variants.append(("features + neighbourhood", False, True, None))
    variants += [
        ("features + context (256 tokens)", True, False, None),
        ("features + context (the opening)", True, False, 96),
    ]
    for name, context, near, words in variants:
        if context:
            for papers in (judged, dev, listed):
                contextual(papers, words)
        (readers_j, readers_d), (authors_j, authors_d) = scores(
            judged, dev, listed, context=context, near=near
        )
        got = measured(judged, dev, picks(judged, readers_j), picks(dev, readers_d))
        table.append(line(f"readers' model, {name}, strict", got))
        print(table[-1], flush=True)
        points[name] = []
        for t, w, s in itertools.product(*GRID.values()):

            def combined(papers, readers, authors, t=t, w=w, s=s):
                return [
                    old(p) ** t * r ** (1 - t) * (1 + w * a) * (1 - (1 - s) * single(p))
                    for p, r, a in zip(papers, readers, authors, strict=True)
                ]

            got = measured(
                judged,
                dev,
                picks(judged, combined(judged, readers_j, authors_j)),
                picks(dev, combined(dev, readers_d, authors_d)),
            )
            points[name].append((t, w, got))
            table.append(line(f"combined ({name}): t {t}, w {w}, s {s}", got))
            print(table[-1], flush=True)
    print("\n".join([header, *table]))
    if args.table:
        args.table.write_text("\n".join([header, *table]) + "\n", encoding="utf-8")
    if args.plot:
        plot(base, points, args.plot)
    return 0


def plot(base: dict, points: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.5), dpi=120)
    for n, (name, grid) in enumerate(points.items()):
        for axis, key in zip(axes, ("dev F1@5", "GEN"), strict=True):
            axis.scatter(
                [got[key] for _, _, got in grid],
                [got["ACCEPT"] for _, _, got in grid],
                color=f"C{n}",
                s=14,
                label=f"combined, {name}",
            )
    for axis, key in zip(axes, ("dev F1@5", "GEN"), strict=True):
        axis.scatter([base[key]], [base["ACCEPT"]], color="black", marker="*", s=90, label="0.11.0")
        axis.axhline(0.93, color="grey", linestyle="--", linewidth=0.8)
        axis.set_ylabel("top 5 coded ACCEPT (850 open papers)")
    axes[0].axvline(0.24, color="grey", linestyle=":", linewidth=0.8)
    axes[0].set_xlabel("F1@5 against the authors' keywords, ICLR 2026 dev")
    axes[1].axvline(0.02, color="grey", linestyle=":", linewidth=0.8)
    axes[1].set_xlabel("top 5 coded GEN (850 open papers)")
    axes[0].legend(fontsize=7, loc="upper right")
    figure.suptitle("Combined rankings over t and w (issue 46): what context and neighbours add")
    figure.savefig(path, bbox_inches="tight")


if __name__ == "__main__":
    sys.exit(main())
