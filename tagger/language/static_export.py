"""Distil a static embedding from the packaged all-MiniLM-L6-v2, offline, the way Model2Vec
does, with the fp32 ONNX export of the same weights for the forward pass (no
``model2vec[distill]``, which would downgrade transformers). Needs the ``export`` extra.

    python -m tagger.language.static_export OUT_DIR              # from the packaged weights
    python -m tagger.language.static_export OUT_DIR --onnx DIR   # from an ONNX export made before

tagger ships the table this makes in ``tagger/data/static`` (the ``static`` backend reads it);
the command makes its own ONNX export first (about 10 s, with torch) unless given one, so that it
reproduces the whole chain from the weights.

The method is model2vec 0.10.0's ``distill`` with its defaults (model2vec/distill/
distillation.py ``distill_from_model``; inference.py ``create_embeddings``, ``apply_pca``,
``_pca_fit_transform``, ``compute_weights``; tokenizer/tokenizer.py
``clean_and_create_vocabulary``, ``turn_tokens_into_ids``):

1. The vocabulary is the tokenizer's, in id order, less the added tokens that nothing adds to a
   text once the post-processor is gone (skeletoken's ``prune_added_tokens`` keeps [UNK] and
   [PAD]: [CLS], [SEP] and [MASK] go) and the tokens matching ``[unused\\d+]``: 29,525 of
   30,522.
2. Each token's vector is the transformer's last hidden state for ``[CLS] token [SEP]``, averaged
   over the three positions (mean pooling), in blocks of 256 tokens.
3. PCA to ``pca_dims`` by the eigendecomposition of the covariance matrix (each component's
   sign chosen so that its largest score is positive; in float64, where model2vec works in
   float32, so that the table is the same whatever BLAS kernels a CPU runs: the two differ in
   a few float16 values), then each row times its SIF weight
   a / (a + p), p the token's probability under Zipf's law by its rank in the vocabulary and
   a = 1e-4: frequent (low-id) tokens count for less in a mean.
4. Rows stored as float16.

The output is Model2Vec's on-disk format (``model2vec.StaticModel.from_pretrained(OUT_DIR)``
loads it): ``model.safetensors`` (the table, as "embeddings"), ``tokenizer.json`` (the source's
less the removed tokens, with no [CLS]/[SEP] added and truncation at 512 tokens),
``config.json``, ``modules.json``, ``README.md`` (the source model's Apache-2.0 licence), and
``provenance.json``: the source package, its version and weights' sha256, the ONNX file the
forward pass ran, this script's sha256, the tool versions, the settings and each file's sha256.

Reproducible: one ONNX Runtime thread, one BLAS thread for the PCA, no randomness; the same
tools give the same bytes (tests/language/test_static.py remakes it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np

from ..io.files import sha256, write_directory
from . import onnx_export
from .vectors import pooled

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
PCA_DIMS = 256  # measured against 128 and 384: see docs/static-embeddings.md
SIF_COEFFICIENT = 1e-4
TOKEN_REMOVE_PATTERN = r"\[unused\d+\]"
BLOCK = 256  # tokens per forward pass (model2vec's _DEFAULT_BATCH_SIZE)
MAX_LENGTH = 512  # tokens a text is truncated to (model2vec's DEFAULT_MAX_LENGTH)
FILES = ("model.safetensors", "tokenizer.json", "config.json", "modules.json", "README.md")
TOOLS = ("numpy", "onnxruntime", "tokenizers", "safetensors")


def vocabulary(tokenizer: dict) -> tuple[list[str], list[str], list[str]]:
    """The tokens of the static model, in the order of their ids in ``tokenizer`` (the source's
    tokenizer.json, parsed); the added tokens left out; and the tokens left out by
    TOKEN_REMOVE_PATTERN. model2vec drops the post-processor and then every added token but
    [UNK] and the padding token (skeletoken's ``prune_added_tokens``): [CLS], [SEP] and [MASK]
    have no row, as nothing adds them to a text."""
    model = tokenizer["model"]
    kept = {model.get("unk_token"), (tokenizer.get("padding") or {}).get("pad_token")}
    added = [t["content"] for t in tokenizer["added_tokens"] if t["content"] not in kept]
    ordered = sorted(model["vocab"], key=model["vocab"].__getitem__)
    unused = [token for token in ordered if re.match(TOKEN_REMOVE_PATTERN, token)]
    gone = set(added) | set(unused)
    return [token for token in ordered if token not in gone], added, unused


def forward_ids(tokenizer: dict, tokens: list[str]) -> np.ndarray:
    """Each token's input to the transformer, in the source's ids: [CLS] token [SEP]."""
    special = tokenizer["post_processor"]["special_tokens"]
    single = tokenizer["post_processor"]["single"]
    first, last = single[0]["SpecialToken"]["id"], single[-1]["SpecialToken"]["id"]
    (cls,), (sep,) = special[first]["ids"], special[last]["ids"]
    vocab = tokenizer["model"]["vocab"]
    return np.array([[cls, vocab[token], sep] for token in tokens], dtype=np.int64)


def token_vectors(onnx_file: Path, ids: np.ndarray) -> np.ndarray:
    """The transformer's mean-pooled last hidden state of each row of ``ids``, fp32, in blocks
    of ``BLOCK`` rows on one thread (no padding: every row has three real tokens)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # the graph as written: no fused kernels, whose arithmetic depends on the CPU
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        str(onnx_file), options, providers=["CPUExecutionProvider"]
    )
    out = np.zeros((len(ids), 384), dtype=np.float32)
    for start in range(0, len(ids), BLOCK):
        block = ids[start : start + BLOCK]
        (hidden,) = session.run(None, {"input_ids": block, "attention_mask": np.ones_like(block)})
        out[start : start + len(block)] = pooled(hidden)
    return np.nan_to_num(out)


def pca(x: np.ndarray, dims: int) -> tuple[np.ndarray, float]:
    """``x`` projected on its ``dims`` principal components, by model2vec's
    ``_pca_fit_transform`` (in float64), and the share of the variance they explain."""
    from threadpoolctl import threadpool_limits

    x = np.asarray(x, dtype=np.float64)
    with threadpool_limits(1):  # one BLAS thread: the same bits on any number of cores
        centred = x - x.mean(axis=0)
        covariance = (centred.T @ centred) / (len(x) - 1)
        values, vectors = np.linalg.eigh(covariance)
        values, vectors = np.clip(values[::-1], 0, None), vectors[:, ::-1]
        scores = centred @ vectors[:, :dims]
    signs = np.sign(scores[np.abs(scores).argmax(axis=0), np.arange(dims)])
    return scores * signs, float(values[:dims].sum() / values.sum())


def sif_weights(n: int, coefficient: float = SIF_COEFFICIENT) -> np.ndarray:
    """model2vec's ``compute_weights``: a / (a + p), p of the token at each rank by Zipf's law."""
    inverse_rank = 1 / np.arange(2, n + 2)
    return coefficient / (coefficient + inverse_rank / inverse_rank.sum())


def static_tokenizer(tokenizer: dict, removed: list[str]) -> str:
    """The source tokenizer less ``removed`` (ids renumbered in order), encoding without
    [CLS]/[SEP] or padding and truncating at MAX_LENGTH, serialised by the tokenizers library."""
    from tokenizers import Tokenizer

    made = json.loads(json.dumps(tokenizer))
    gone = set(removed)
    ordered = sorted(made["model"]["vocab"], key=made["model"]["vocab"].__getitem__)
    made["model"]["vocab"] = {t: i for i, t in enumerate(t for t in ordered if t not in gone)}
    made["added_tokens"] = [
        {**t, "id": made["model"]["vocab"][t["content"]]}
        for t in made["added_tokens"]
        if t["content"] not in gone
    ]
    made["post_processor"] = None
    made["padding"] = None
    made["truncation"] = None
    loaded = Tokenizer.from_str(json.dumps(made))
    loaded.enable_truncation(MAX_LENGTH)
    return loaded.to_str(pretty=False)


def distil(out: Path, *, onnx_dir: Path, pca_dims: int = PCA_DIMS, replace: bool = False) -> dict:
    """Write the static model and provenance.json into ``out``, from the fp32 model of the ONNX
    export in ``onnx_dir`` and the packaged tokenizer (created whole in a temporary directory
    beside ``out``, then renamed: a reader never sees half of it). An existing ``out`` is
    replaced with ``replace``; otherwise, if another process finished it first, that one is kept
    and this one dropped."""
    from safetensors.numpy import save_file

    source = onnx_export.source_dir()
    onnx_file = onnx_dir / onnx_export.FILES["fp32"]
    tokenizer = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    tokens, added, unused = vocabulary(tokenizer)
    vectors = token_vectors(onnx_file, forward_ids(tokenizer, tokens))
    projected, explained = pca(vectors, pca_dims)
    table = (projected * sif_weights(len(tokens))[:, None]).astype(np.float16)

    def fill(work: Path) -> dict:
        save_file({"embeddings": np.ascontiguousarray(table)}, str(work / "model.safetensors"))
        (work / "tokenizer.json").write_text(static_tokenizer(tokenizer, added + unused), "utf-8")
        config = {
            "model_type": "model2vec",
            "architectures": ["StaticModel"],
            "tokenizer_name": MODEL_NAME,
            "apply_pca": pca_dims,
            "sif_coefficient": SIF_COEFFICIENT,
            "hidden_dim": pca_dims,
            "seq_length": 1000000,
            "normalize": True,
            "pooling": "mean",
            "max_length": MAX_LENGTH,
            "embedding_dtype": "float16",
        }
        (work / "config.json").write_text(json.dumps(config, indent=4) + "\n")
        modules = [
            {
                "idx": 0,
                "name": "0",
                "path": ".",
                "type": "sentence_transformers.models.StaticEmbedding",
            },
            {
                "idx": 1,
                "name": "1",
                "path": "1_Normalize",
                "type": "sentence_transformers.models.Normalize",
            },
        ]
        (work / "modules.json").write_text(json.dumps(modules, indent=4) + "\n")
        (work / "README.md").write_text(_card(pca_dims, len(tokens)), "utf-8")
        return {
            "model": MODEL_NAME,
            "method": "model2vec 0.10.0 distill, default settings, forward pass on ONNX Runtime",
            "source": {
                "package": onnx_export.SOURCE_PACKAGE,
                "version": version(onnx_export.SOURCE_PACKAGE),
                "weights_sha256": sha256(source / "model.safetensors"),
                "tokenizer_sha256": sha256(source / "tokenizer.json"),
            },
            "onnx": {"file": onnx_file.name, "sha256": sha256(onnx_file)},
            "script": {"module": "tagger.language.static_export", "sha256": sha256(Path(__file__))},
            "made_with": {p: version(p) for p in TOOLS},
            "settings": {
                "pca_dims": pca_dims,
                "explained_variance": round(explained, 6),
                "weighting": f"SIF over Zipf ranks, a={SIF_COEFFICIENT}",
                "pooling": "mean of [CLS] token [SEP]",
                "normalize": True,
                "dtype": "float16",
                "vocabulary": len(tokens),
                "removed": {"added tokens": added, TOKEN_REMOVE_PATTERN: len(unused)},
                "block": BLOCK,
                "threads": 1,
                "max_length": MAX_LENGTH,
            },
            "files": {name: sha256(work / name) for name in FILES},
        }

    return write_directory(out, fill, record="provenance.json", replace=replace)


def _card(pca_dims: int, tokens: int) -> str:
    return f"""---
base_model: {MODEL_NAME}
library_name: model2vec
license: apache-2.0
language: en
tags:
- embeddings
- static-embeddings
---

# all-MiniLM-L6-v2, distilled to a static table

{tokens} token vectors of {pca_dims} dimensions, distilled from {MODEL_NAME} (the weights of the
`{onnx_export.SOURCE_PACKAGE}` package) by `python -m tagger.language.static_export`, the way
Model2Vec 0.10.0 distils a model; `provenance.json` says what it was made from and with.
Load it with `model2vec.StaticModel.from_pretrained(path)`; a text's vector is the mean of its
tokens' rows.

all-MiniLM-L6-v2 is licensed under the Apache License, Version 2.0
(https://www.apache.org/licenses/LICENSE-2.0); this table is derived from its weights and is
distributed under the same licence. The model was made by the sentence-transformers
contributors (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write (replaced if it exists)")
    parser.add_argument(
        "--onnx",
        type=Path,
        help="an export made by python -m tagger.language.onnx_export (default: made first)",
    )
    parser.add_argument("--pca-dims", type=int, default=PCA_DIMS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.onnx is not None:
        provenance = distil(args.out, onnx_dir=args.onnx, pca_dims=args.pca_dims, replace=True)
    else:
        with tempfile.TemporaryDirectory(prefix="tagger-onnx-") as made:
            onnx_export.export(Path(made) / "model")
            provenance = distil(
                args.out, onnx_dir=Path(made) / "model", pca_dims=args.pca_dims, replace=True
            )
    json.dump(provenance, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
