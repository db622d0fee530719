"""Shared fixtures, and the two lanes of the suite.

Tests that need the real embedding model (all-MiniLM-L6-v2 from its PyPI package, loaded once per
session) are marked ``models``: by hand, or because they use the ``embedder``, ``tagger`` or
``mini_tagger`` fixture. Every other test runs with :class:`HashEmbedder`, a small deterministic
stand-in, so ``pytest -m "not models"`` is quick; spaCy (en_core_web_sm) is real in both lanes.
An unmarked test that reaches for the real model fails and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# embeddings kept across runs go to a directory of this test session, not the user's cache
os.environ["TAGGER_CACHE_DIR"] = tempfile.mkdtemp(prefix="tagger-test-cache-")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples"
MINI_TAXONOMY = DATA / "mini-taxonomy.yaml"
MINI = ["--taxonomy", str(MINI_TAXONOMY)]
# three clear-cut abstracts the mini taxonomy tags: papers for the tests that run a command
ABSTRACTS = [
    "Multi-agent reinforcement learning (MARL) with graph neural networks.",
    "Graph neural networks (GNNs) with message passing for molecules.",
    "Policy gradient methods for reinforcement learning in robotics.",
]


def docs_pages() -> list[Path]:
    """The documentation site's pages (mkdocs.yml's nav), in the order a reader meets them."""
    import yaml

    def leaves(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                yield from leaves(value)
            else:
                yield ROOT / "docs" / value

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return list(leaves(config["nav"]))


def run(*args, input=None):
    """The CLI on ``args``: never a traceback, only a clean exit (whatever its code)."""
    from click.testing import CliRunner

    from tagger.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args], input=input)
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def papers(path, abstracts=ABSTRACTS):
    """A JSON Lines file of papers p0, p1, ... with these abstracts; returns the path."""
    path.write_text(
        "".join(json.dumps({"id": f"p{i}", "abstract": a}) + "\n" for i, a in enumerate(abstracts))
    )
    return path


def error_line(result, code=1):
    """The one line a failed command prints: its last, starting 'Error: '."""
    assert result.exit_code == code, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: ") and result.stderr.count("Error: ") == 1, result.stderr
    return last


# one area of a taxonomy's YAML (format it with id, name and the lines that follow)
AREA_YAML = "  - id: {id}\n    name: {name}\n{more}"


def write_taxonomy(tmp_path, text, name="t.yaml"):
    """A taxonomy file of ``text`` (str or bytes) in ``tmp_path``; returns its path."""
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def model_dir(where, taxonomy, config=None, **parts):
    """A model directory at ``where`` for ``taxonomy`` (a path), holding the files ``parts``
    names (tagging.model.FILES keys: paths to copy) and the packaged model's weighers where not
    given, its features made with ``config``'s settings (the defaults if None): what `tagger
    fit` would write, made by hand for a test."""
    import shutil

    from tagger.config import TaggerConfig
    from tagger.fitting.modeldir import save_model
    from tagger.tagging.model import FILES, FittedModel
    from tagger.taxonomy.loading import load_taxonomy

    class Copy:
        def __init__(self, path):
            self.path = path

        def save(self, path):
            shutil.copy(self.path, path)

    shipped = FittedModel.load().where
    given = {"weigher": shipped / FILES["weigher"], "rules": shipped / FILES["rules"], **parts}
    save_model(
        where,
        {part: Copy(path) for part, path in given.items()},
        taxonomy=load_taxonomy(taxonomy),
        fitted_on={"judged": ["by hand"], "papers": 0},
        config=config or TaggerConfig(),
    )
    return where


MODEL_FIXTURES = {"embedder", "torch_embedder", "tagger", "mini_tagger"}
BROWSER_FIXTURES = {"chromium_path"}


class HashEmbedder:
    """Deterministic, model-free vectors: each word (lower-cased) hashed to a few of 64 signed
    dimensions, the sum L2-normalised. Texts that share words are similar; nothing is learned."""

    name = "test/hash-64"

    def embed(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                for k in range(0, 8, 2):
                    out[row, digest[k] % 64] += 1.0 if digest[k + 1] % 2 else -1.0
            norm = np.linalg.norm(out[row])
            out[row] /= norm if norm else 1.0
        return out


def pytest_collection_modifyitems(items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if MODEL_FIXTURES & fixtures:
            item.add_marker(pytest.mark.models)
        if BROWSER_FIXTURES & fixtures:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def _embedder_for_the_lane(request, monkeypatch):
    """Unmarked tests get HashEmbedder wherever tagger would make its default embedder."""
    if request.node.get_closest_marker("models"):
        return
    import tagger.language.embedders

    def refuse(*args, **kwargs):
        raise AssertionError(
            "this test loads the real embedding model: mark it "
            "@pytest.mark.models (or use the embedder fixture)"
        )

    monkeypatch.setattr(tagger.language.embedders, "make_embedder", lambda *a, **k: HashEmbedder())
    monkeypatch.setattr(tagger.language.embedders, "_load_sentence_transformer", refuse)
    monkeypatch.setattr(tagger.language.embedders, "_load_onnx", refuse)
    monkeypatch.setattr(tagger.language.embedders, "_load_static", refuse)


@pytest.fixture(scope="session")
def embedder():
    """The default embedder, as users run it: all-MiniLM-L6-v2 on ONNX Runtime, int8."""
    from tagger.language.embedders import make_embedder

    return make_embedder()


@pytest.fixture(scope="session")
def torch_embedder():
    """The same model on torch through sentence-transformers (the reference backend)."""
    from tagger.language.embedders import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def tagger(embedder):
    """A Tagger over the shipped taxonomy and the real default model."""
    from tagger import Tagger

    return Tagger.from_taxonomy(None, embedder=embedder)


@pytest.fixture(scope="session")
def mini_tagger(embedder):
    """A Tagger over the small test taxonomy, so rule tests do not move with taxonomy.yaml."""
    from tagger import Tagger

    return Tagger.from_taxonomy(MINI_TAXONOMY, embedder=embedder)


@pytest.fixture(scope="session")
def hash_tagger():
    """A Tagger over the small test taxonomy with HashEmbedder: rules and scoring, no model."""
    from tagger import Tagger

    return Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder())


@pytest.fixture(scope="session")
def nlp():
    from tagger.language.text import load_spacy

    return load_spacy()


def _provenance():
    """As if tagged with the small test taxonomy (so that commands given it do not warn)."""
    from tagger.records import Provenance
    from tagger.taxonomy.loading import load_taxonomy

    mini = load_taxonomy(MINI_TAXONOMY)
    return Provenance(
        tagger_version="9.9",
        taxonomy_version=mini.version,
        taxonomy_sha256=mini.sha256,
        embedding_model="m",
        spacy_model="s",
    )


PROVENANCE = _provenance()


def tagged_record(
    paper_id,
    paths=(),
    *,
    score=0.5,
    title=None,
    abstract="x",
    venue=None,
    year=None,
    keyphrases=(),
    evidence=(),
    facets=(),
    **paper_fields,
):
    """A valid line of tagged output, made by hand: tags from ``paths`` (root to area, each with
    ``score``, or (path, score) pairs), keyphrases from their texts (or (text, normalized)
    pairs), evidence on the first characters of the abstract: (area, rule) for the tag of that
    area, or (tag, area, rule); and facet tags (contribution types) from ``facets``, paths like
    ``paths``."""
    from tagger.records import AreaTag, Evidence, Keyphrase, Paper, TaggedPaper

    def plain(item):
        path, tag_score = item if isinstance(item[-1], float) else (item, score)
        return AreaTag(id=path[-1], name=path[-1], path=list(path), score=tag_score, evidence=[])

    tags = []
    for item in paths:
        path, tag_score = item if isinstance(item[-1], float) else (item, score)
        tags.append(
            AreaTag(
                id=path[-1],
                name=path[-1],
                path=list(path),
                score=tag_score,
                evidence=[
                    Evidence(
                        area=spec[-2],
                        kind="alias",
                        rule=spec[-1],
                        text=abstract[:5],
                        field="abstract",
                        start=0,
                        end=min(5, len(abstract)),
                        weight=1.0,
                    )
                    for spec in evidence
                    if spec[0] == path[-1]
                ],
            )
        )
    return TaggedPaper(
        paper=Paper(
            id=paper_id, title=title, abstract=abstract, venue=venue, year=year, **paper_fields
        ),
        keyphrases=[
            Keyphrase(text=k, normalized=k.lower(), score=0.5, spans=[])
            if isinstance(k, str)
            else Keyphrase(text=k[0], normalized=k[1], score=0.5, spans=[])
            for k in keyphrases
        ],
        tags=tags,
        facets=[plain(item) for item in facets],
        provenance=PROVENANCE,
    )


def write_tagged(path, records):
    """Write hand-made records as tagger writes them; returns the path."""
    from tagger.io.jsonl import dumps

    path.write_bytes(b"".join(dumps(record) for record in records))
    return path


def candidates(tagger, papers):
    """Every candidate area of each paper, with its features, as ``tagger`` proposes it (what
    its weigher scores)."""
    from tagger.tagging.proposing import propose_paper

    readings = tagger.reader.read(list(papers))
    votes = tagger.learned.votes(readings)
    return [
        propose_paper(reading, vote, tagger.taxonomy, tagger.config).candidates
        for reading, vote in zip(readings, votes, strict=True)
    ]


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
