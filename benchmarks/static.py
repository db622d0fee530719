"""The static backend against the transformer it was distilled from: how well its similarities
agree with all-MiniLM-L6-v2's, at each PCA width, and how fast it embeds, one thread, beside
the default onnx-int8 backend.

    python benchmarks/static.py                     # 500 judged papers, widths 128, 256, 384
    python benchmarks/static.py --papers 100 --dims 256 --json out.json

Agreement is read where tagger reads similarities, not as the cosine between a static vector
and a MiniLM vector (the table is in its own PCA basis, so that cosine means nothing): per
paper, the ranking of its keyphrase candidates by cosine to the paper (top-5 overlap, Spearman);
over phrase pairs and abstract pairs, the correlation of the two models' cosines; and nearest
neighbours among phrases. onnx-int8 against fp32 is shown beside it as a yardstick.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def corpus(papers: int) -> tuple[list[str], list[list[str]], list[str]]:
    """Each paper's text as tagger embeds it (its opening words), its keyphrase candidates (the
    normalised forms tagger embeds), and its abstract cut to 150 words (for speed)."""
    from tagger.config import TaggerConfig
    from tagger.io.readers import read_papers
    from tagger.language.candidates import candidates
    from tagger.language.keyphrases import _opening
    from tagger.language.text import analyse, load_spacy, paper_text

    config = TaggerConfig()
    nlp = load_spacy()
    rows = list(read_papers(ROOT / "judged" / "judged.jsonl"))[:papers]
    docs, phrases, abstracts = [], [], []
    for paper in rows:
        text = paper_text(paper.title, paper.abstract)
        analysis = analyse(nlp(text), paper.title, paper.abstract)
        docs.append(_opening(text, config.doc_words))
        phrases.append(sorted(candidates(analysis, max_words=config.max_words)))
        abstracts.append(_opening(paper.abstract, 150))
    return docs, phrases, abstracts


def _rank(x: np.ndarray) -> np.ndarray:
    return np.argsort(np.argsort(x, kind="stable"), kind="stable").astype(np.float64)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(_rank(a), _rank(b))[0, 1])


def agreement(reference, candidate, docs, phrases) -> dict[str, float]:
    """How far ``candidate``'s similarities agree with ``reference``'s (two embedders)."""
    vocabulary = sorted({p for found in phrases for p in found})
    index = {p: i for i, p in enumerate(vocabulary)}
    ref_p, can_p = reference.embed(vocabulary), candidate.embed(vocabulary)
    ref_d, can_d = reference.embed(docs), candidate.embed(docs)
    overlap, spearman = [], []
    for k, found in enumerate(phrases):
        if len(found) < 6:
            continue
        rows = [index[p] for p in found]
        r, c = ref_p[rows] @ ref_d[k], can_p[rows] @ can_d[k]
        overlap.append(len(set(np.argsort(-r)[:5]) & set(np.argsort(-c)[:5])) / 5)
        spearman.append(_spearman(r, c))
    rng = np.random.default_rng(0)
    sample = rng.choice(len(vocabulary), size=min(3000, len(vocabulary)), replace=False)
    ref_s, can_s = ref_p[sample] @ ref_p[sample].T, can_p[sample] @ can_p[sample].T
    upper = np.triu_indices(len(sample), 1)
    np.fill_diagonal(ref_s, -2)
    np.fill_diagonal(can_s, -2)
    ref_nn, can_nn = np.argsort(-ref_s, axis=1)[:, :10], np.argsort(-can_s, axis=1)[:, :10]
    docs_ref, docs_can = ref_d @ ref_d.T, can_d @ can_d.T
    doc_upper = np.triu_indices(len(docs), 1)
    np.fill_diagonal(docs_ref, -2)
    np.fill_diagonal(docs_can, -2)
    return {
        "papers": len(overlap),
        "phrases": len(vocabulary),
        "top5_overlap": float(np.mean(overlap)),
        "rank_spearman_per_paper": float(np.mean(spearman)),
        "phrase_pairs_pearson": float(np.corrcoef(ref_s[upper], can_s[upper])[0, 1]),
        "phrase_pairs_spearman": _spearman(ref_s[upper], can_s[upper]),
        "phrase_nn1_same": float(np.mean(ref_nn[:, 0] == can_nn[:, 0])),
        "phrase_nn10_recall": float(
            np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ref_nn, can_nn, strict=True)])
        ),
        "paper_pairs_pearson": float(np.corrcoef(docs_ref[doc_upper], docs_can[doc_upper])[0, 1]),
        "paper_nn1_same": float(np.mean(docs_ref.argmax(1) == docs_can.argmax(1))),
    }


def speeds(embedders: dict, texts: list[str], *, batch: int = 64, repeat: int = 5) -> dict:
    """Texts embedded per second by each embedder (the best of ``repeat`` rounds, the embedders
    taking turns within a round, so that a busy machine slows them alike), in batches of
    ``batch`` (tagger's batch_size), after a warm-up."""
    best = dict.fromkeys(embedders, float("inf"))
    for embedder in embedders.values():
        embedder.embed(texts[:batch])
    for _ in range(repeat):
        for name, embedder in embedders.items():
            started = time.perf_counter()
            for start in range(0, len(texts), batch):
                embedder.embed(texts[start : start + batch])
            best[name] = min(best[name], time.perf_counter() - started)
    return {name: len(texts) / seconds for name, seconds in best.items()}


def loaded_memory(backend: str, directory: Path) -> dict:
    """Resident MB of a fresh process after importing tagger's embedders, and after loading the
    backend (from ``directory``) and embedding one text."""
    script = (
        "import os\n"
        "from pathlib import Path\n"
        "def rss():\n"
        "    pages = int(open('/proc/self/statm').read().split()[1])\n"
        "    return pages * os.sysconf('SC_PAGE_SIZE') / 2**20\n"
        "from tagger.language.embedders import make_embedder\n"
        "before = rss()\n"
        f"kept = make_embedder('all-MiniLM-L6-v2', {backend!r}, directory=Path({str(directory)!r}))"
        "\nkept.embed(['graph neural networks'])\n"
        "print(before, rss())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    before, after = map(float, done.stdout.split())
    return {"after_import_mb": round(before, 1), "loaded_mb": round(after - before, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=500)
    parser.add_argument("--dims", type=int, nargs="+", default=[128, 256, 384])
    parser.add_argument("--no-agreement", action="store_true", help="measure speed and size only")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)

    from tagger.language import static_export
    from tagger.language.embedders import OnnxEmbedder, StaticEmbedder
    from tagger.language.model_files import onnx_model_dir

    onnx = onnx_model_dir()
    docs, phrases, abstracts = corpus(args.papers)
    short = sorted({p for found in phrases for p in found})
    fp32, int8 = OnnxEmbedder(quantised=False), OnnxEmbedder()
    figures: dict = {"static": {}}
    figures["texts"] = {
        "phrases": len(short),
        "words_per_phrase": float(np.mean([len(p.split()) for p in short])),
        "abstracts": len(abstracts),
        "words_per_abstract": float(np.mean([len(a.split()) for a in abstracts])),
    }
    if not args.no_agreement:
        reference = _Frozen(fp32, short + docs)
        figures["int8_vs_fp32"] = agreement(reference, int8, docs, phrases)
    figures["onnx_int8_memory"] = loaded_memory("onnx-int8", onnx)
    with tempfile.TemporaryDirectory() as work:
        for dims in args.dims:
            where = Path(work) / str(dims)
            started = time.perf_counter()
            static_export.distil(where, onnx_dir=onnx, pca_dims=dims)
            seconds = time.perf_counter() - started
            embedder = StaticEmbedder(directory=where)
            rates = {
                kind: speeds({"static": embedder, "onnx-int8": int8}, texts)
                for kind, texts in (("phrases", short), ("abstracts", abstracts))
            }
            made = figures["static"][dims] = {
                "distil_seconds": round(seconds, 1),
                "table_bytes_on_disk": (where / "model.safetensors").stat().st_size,
                "tokenizer_bytes_on_disk": (where / "tokenizer.json").stat().st_size,
                "table_bytes_in_memory": int(embedder._load()[1].nbytes),
                "memory": loaded_memory("static", where),
                "texts_per_s": {kind: rate["static"] for kind, rate in rates.items()},
                "onnx_int8_texts_per_s": {kind: rate["onnx-int8"] for kind, rate in rates.items()},
                "speedup_over_onnx_int8": {
                    kind: rate["static"] / rate["onnx-int8"] for kind, rate in rates.items()
                },
            }
            if not args.no_agreement:
                made["agreement_with_fp32"] = agreement(reference, embedder, docs, phrases)
            print(f"{dims}: {json.dumps(made)}", file=sys.stderr)
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    text = json.dumps(figures, indent=2, default=float)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


class _Frozen:
    """An embedder's vectors of ``texts``, made once (the reference is read at every width)."""

    def __init__(self, embedder, texts: list[str]) -> None:
        unique = sorted(set(texts))
        self.rows = dict(zip(unique, embedder.embed(unique), strict=True))

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.rows[text] for text in texts])


if __name__ == "__main__":
    raise SystemExit(main())
