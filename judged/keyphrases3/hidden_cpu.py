"""Whether the shipped 7-bit model's last hidden states over paper openings, and a phrase's
context vector made of them (context.py's, in language.vectors' integer codes), are the same
bytes on this CPU and on an emulated AVX2-only one. Prints a line per paper: the sha256 of the
hidden states and of the context vector of its tokens 1-3.

    python judged/keyphrases3/hidden_cpu.py > here.txt
    qemu-x86_64 -cpu Haswell .venv/bin/python judged/keyphrases3/hidden_cpu.py > haswell.txt
    diff here.txt haswell.txt
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tagger.language.embedders import OnnxEmbedder  # noqa: E402
from tagger.language.keyphrases import _opening  # noqa: E402
from tagger.language.vectors import fixed, unit_rows  # noqa: E402


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def main(papers: int = 8) -> None:
    tokenizer, session = OnnxEmbedder()._load()
    lines = (ROOT / "data" / "iclr2026-dev.jsonl").read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines[:papers]):
        paper = json.loads(line)
        text = _opening(f"{paper['title']}. {paper['abstract']}", 96)
        ids = np.array([tokenizer.encode(text).ids[:256]], dtype=np.int64)
        (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})
        context = hidden[0][[1, 2, 3]].sum(0, keepdims=True) / 3
        print(n, digest(hidden), digest(fixed(unit_rows(context))), flush=True)


if __name__ == "__main__":
    main()
