"""The cache directory, made hostile (io.cache): a FIFO where a cache file belongs is never
opened (it would hang the run), and a cache directory another user filled is not used: the run
goes on without it and says so once. What each cache holds, damaged, is made again: see
tests/taxonomy/test_rules_cache.py, tests/language/test_embedders.py and test_onnx_cache below."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import tracemalloc

import pytest

from tagger.errors import ModelError
from tagger.io import packaged
from tagger.io.cache import MAX_BYTES
from tagger.io.files import read_regular
from tagger.language.embedding_cache import lasting_embed
from tagger.language.model_files import checked
from tagger.taxonomy.loading import load_taxonomy
from tagger.taxonomy.rules import RuleSet
from tagger.taxonomy.store import recall, remember

from ..conftest import ABSTRACTS, MINI, MINI_TAXONOMY, HashEmbedder


def _within(seconds, work):
    """``work()``'s result, or a failure if it has not returned within ``seconds`` (a read of a
    FIFO blocks until a writer comes: the finally of the caller lets it go)."""
    done = {}

    def run():
        try:
            done["result"] = work()
        except BaseException as exc:  # handed to the test
            done["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "it opened the FIFO and waits on it"
    if "error" in done:
        raise done["error"]
    return done["result"]


@contextlib.contextmanager
def fifo_at(path):
    """A FIFO in place of the file at ``path``; after the test, a reader it blocked is let go."""
    path.unlink()
    os.mkfifo(path)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):  # ENXIO: nobody reads it, as it should be
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    where = tmp_path / "cache"
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(where))
    return where


def _rules(cache):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    first = RuleSet(taxonomy).phrases
    return cache.glob("rules/*.json"), lambda: RuleSet(taxonomy).phrases, first


def _vectors(cache):
    embedder = HashEmbedder()
    first = lasting_embed(embedder, ABSTRACTS, fingerprint="m1").tobytes()
    return (
        cache.glob("vectors-*.npz"),
        lambda: lasting_embed(embedder, ABSTRACTS, fingerprint="m1").tobytes(),
        first,
    )


def _taxonomies(cache):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    remember(taxonomy)

    def again():  # not read from the FIFO, then kept again in its place
        return recall(taxonomy.sha256), remember(taxonomy), recall(taxonomy.sha256).sha256

    return cache.glob("taxonomies/*.json"), again, (None, None, taxonomy.sha256)


@pytest.mark.parametrize("kind", [_rules, _vectors, _taxonomies], ids=lambda k: k.__name__[1:])
def test_a_fifo_in_place_of_a_cache_file_is_never_opened(cache, kind):
    entries, again, first = kind(cache)
    (entry,) = list(entries)
    with fifo_at(entry):
        assert _within(30, again) == first
        assert entry.is_file()  # made again in its place, whole


def test_a_model_directory_with_a_fifo_is_refused_not_waited_on(tmp_path):
    """A model's provenance record, or one of its files, a FIFO: an error that names it."""
    where = tmp_path / "static"
    shutil.copytree(packaged.data_dir("static"), where)
    names = ("model.safetensors", "tokenizer.json")
    refused = pytest.raises(ModelError, match="model.safetensors is not the file its provenance")
    with fifo_at(where / "model.safetensors"), refused:
        _within(30, lambda: checked(where, names))
    (where / "model.safetensors").unlink()
    shutil.copy(packaged.data_dir("static") / "model.safetensors", where)
    refused = pytest.raises(ModelError, match="cannot read the provenance record")
    with fifo_at(where / "provenance.json"), refused:
        _within(30, lambda: checked(where, names))


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("static", "model.safetensors"),
        ("static", "tokenizer.json"),
        ("minilm", "model-int8.onnx"),
        ("minilm", "tokenizer.json"),
    ],
)
def test_a_model_file_cut_short_is_refused_by_name(tmp_path, model, name):
    """A shipped model's table, ONNX file or tokenizer cut short (a copy that ran out of disk):
    refused with an error that names it, never read (a SafetensorError, a wrong vector)."""
    where = tmp_path / model
    shutil.copytree(packaged.data_dir(model), where)
    names = [p.name for p in where.iterdir() if p.name != "provenance.json"]
    checked(where, names)  # intact
    (where / name).write_bytes((where / name).read_bytes()[:1000])
    with pytest.raises(ModelError, match=f"{name} is not the file its provenance"):
        checked(where, names)


def _not_ours(directory):
    """Run a command as a user who cannot read or write ``directory``: as root, without the
    capabilities that let root into another user's directory (setpriv), the directory given to
    nobody; as anyone else, the directory made unreadable."""
    if os.geteuid() != 0:
        directory.chmod(0o000)
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a directory root cannot use")
    for path in [directory, *directory.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    directory.chmod(0o700)
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


@pytest.mark.models
def test_a_cache_directory_another_user_filled_is_not_used_and_said_once(tmp_path):
    """A cache another user made (mode 700): "Permission denied" once stopped every run. The
    run goes on without a cache, says so once, and writes what a run with a cache writes."""
    papers = tmp_path / "papers.jsonl"
    papers.write_text("".join(json.dumps({"abstract": a}) + "\n" for a in ABSTRACTS))
    theirs = tmp_path / "theirs"

    def tag(cache, out, prefix=()):
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "tagger", "tag", str(papers), "-o", str(out), *MINI,
             "--embedding-backend", "static"],
            capture_output=True, text=True, timeout=600,
            env={**os.environ, "TAGGER_CACHE_DIR": str(cache)}, cwd=tmp_path,
        )  # fmt: skip
        return done.returncode, done.stderr

    assert tag(theirs, tmp_path / "cached.jsonl")[0] == 0  # their cache, filled
    try:
        code, stderr = tag(theirs, tmp_path / "out.jsonl", _not_ours(theirs))
    finally:
        theirs.chmod(0o700)  # pytest may remove it again
    assert code == 0, stderr
    notes = [line for line in stderr.splitlines() if line.startswith("Note: the cache")]
    assert notes == [
        f"Note: the cache directory {theirs} cannot be used (permission denied: another "
        "user's?): running without a cache, so runs are slower; set TAGGER_CACHE_DIR to a "
        "directory of yours (empty: no cache)"
    ], stderr
    assert "Traceback" not in stderr and "Error" not in stderr
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "cached.jsonl").read_bytes()


def test_a_small_cache_file_is_read_without_allocating_the_largest_one_could_be(tmp_path):
    """read_regular reads a file's size and a byte more, not its limit: reading ``limit + 1``
    bytes allocates them all first (1 GiB for every cache entry read, cache.MAX_BYTES), which
    a worker with an address-space limit cannot. A file over the limit is still refused, and
    its bytes are the file's."""
    entry = tmp_path / "entry"
    entry.write_bytes(b"x" * 5000)
    tracemalloc.start()
    try:
        data = read_regular(entry, MAX_BYTES)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data == b"x" * 5000
    assert peak < 1 << 20, f"reading 5,000 bytes allocated {peak:,}"
    assert read_regular(entry, 4999) is None
    assert read_regular(entry, 5000) == data
