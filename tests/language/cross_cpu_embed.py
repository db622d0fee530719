"""What tests/language/test_cross_cpu.py runs twice, natively and under qemu-x86_64 -cpu Haswell:
the shipped embedders on real texts as tagger embeds them, and the integer cosines tagger reads
of their vectors. Prints one line per text and measure: a name and the sha256 of the bytes.

    python tests/language/cross_cpu_embed.py DATA_DIR N

Imports only what an embedding needs (numpy, onnxruntime, tokenizers, safetensors): spaCy and
the CLI are not what differs between CPUs, and under emulation they cost minutes.
"""

import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np

from tagger.language.embedders import OnnxEmbedder, StaticEmbedder
from tagger.language.keyphrases import AcceptanceModel, _opening, keybert_similarities
from tagger.language.readers import opening_contexts
from tagger.language.vectors import area_codes, cosines, encode, similarities

PHRASES = [
    "graph neural networks", "GNNs", "reinforcement learning from human feedback", "diffusion",
    "large language models", "Wasserstein distance", "zero-shot", "test-time scaling",
    "offline reinforcement learning", "contrastive learning", "vision transformers",
    "federated learning", "differential privacy", "neural operators", "protein design",
    "uncertainty quantification", "in-context learning", "mixture of experts", "knowledge graph",
    "causal discovery",
]  # fmt: skip


def main(data: str, n: int) -> None:
    lines = (Path(data) / "iclr2026-dev.jsonl").read_text(encoding="utf-8").splitlines()
    papers = [json.loads(line) for line in lines[:n]]
    texts = [_opening(f"{p['title']}. {p['abstract']}", 96) for p in papers]

    def show(name: str, value: np.ndarray) -> None:
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()[:16]
        print(f"{name} {digest}", flush=True)

    states = []
    for embedder in (StaticEmbedder(), OnnxEmbedder()):
        kind = embedder.backend
        if isinstance(embedder, OnnxEmbedder):  # its hidden states too, from the same run
            papers_v, states = embedder.embed_with_states(texts)
        else:
            papers_v = embedder.embed(texts)
        phrases_v = embedder.embed(PHRASES)
        for k, row in enumerate(papers_v):
            show(f"{kind} paper {k}", row)
        for k, row in enumerate(phrases_v):
            show(f"{kind} phrase {k}", row)
        show(f"{kind} keybert", np.array(keybert_similarities(papers_v, phrases_v)))
        show(f"{kind} phrase-phrase", similarities(phrases_v, phrases_v))
        stored = [encode(v) for v in papers_v]
        show(f"{kind} stored", np.array([s.encode() for s in stored]))
        show(f"{kind} area cosines", cosines(stored, area_codes(phrases_v)))
    # the readers' ranking's reading of each phrase in each opening: the hidden states, each
    # phrase's context in the opening, and the two regressions over it and the phrase's vector
    # (``embedder``, ``phrases_v``, ``states``: the ONNX model's, the loop's last)
    ranking = AcceptanceModel.load().ranking
    for k, (text, state) in enumerate(zip(texts, states, strict=True)):
        show(f"hidden states {k}", state.hidden)
        own = re.findall(r"[A-Za-z]{4,}", text)[3]  # a word of the opening: found there
        forms = [(own,)] + [(phrase,) for phrase in PHRASES]
        around = opening_contexts(state.hidden, state.offsets, text, forms)
        embedded = np.column_stack([around, np.vstack([embedder.embed([own]), phrases_v])])
        show(f"contexts {k}", around)
        show(f"reading {k}", np.array(ranking.reading.probability(embedded)))
        show(f"listing {k}", np.array(ranking.listing.probability(embedded)))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
