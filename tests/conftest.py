"""Shared fixtures. The models are real (all-MiniLM-L6-v2 from its PyPI package, en_core_web_sm);
they load once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = ROOT / "examples"
MINI_TAXONOMY = DATA / "mini-taxonomy.yaml"


@pytest.fixture(scope="session")
def embedder():
    from tagger.embedders import MiniLMEmbedder

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
def nlp():
    from tagger.text import load_spacy

    return load_spacy()
