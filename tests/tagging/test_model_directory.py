"""A model directory is checked whole before a tagger uses it, and refused by name ("cannot use
the model DIR: ..." and the fix), never with a traceback nor with silently wrong tags: a record
of the wrong shape, a file missing, changed or not a model's, a part whose arrays disagree, an
npz that would unpack to far more than its size, a model written by a newer tagger, or one fitted
in another embedding space than the embedder's in use. The packaged models pass."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tagger import Paper, Tagger, TaggerConfig
from tagger.config import tagger_version
from tagger.errors import TaggerError
from tagger.language import vectors
from tagger.tagging.areas import AreaModel
from tagger.tagging.model import FILES, RECORD, FittedModel
from tagger.tagging.neighbours import NeighbourIndex
from tagger.tagging.pipeline import learned_for
from tagger.tagging.weigher import Weigher
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import MINI, MINI_TAXONOMY, HashEmbedder, error_line, model_dir, papers, run

PAPER = Paper(abstract="Multi-agent reinforcement learning (MARL) with graph neural networks.")
STATIC = "sentence-transformers/all-MiniLM-L6-v2 (static)"


def _rewrite(where, **changes):
    record = json.loads((where / RECORD).read_text())
    (where / RECORD).write_text(json.dumps(record | changes))
    return where


def _relist(where):
    """The record listing each file's present sha256 again (a part spoiled on purpose)."""
    record = json.loads((where / RECORD).read_text())
    files = {
        name: hashlib.sha256((where / name).read_bytes()).hexdigest() for name in record["files"]
    }
    return _rewrite(where, files=files)


def _tagger(where, **settings):
    config = TaggerConfig(model=str(where), **settings)
    return Tagger.from_taxonomy(MINI_TAXONOMY, config, embedder=HashEmbedder())


def _index(path, about=None, spoiled=None):
    """A neighbour index of three papers (HashEmbedder's vectors) at ``path``, its arrays
    replaced by ``spoiled``'s."""
    texts = ["graph neural networks over molecules", "graphs of atoms", "agents and reward"]
    codes = [vectors.encode(v) for v in HashEmbedder().embed(texts)]
    index = NeighbourIndex.build(
        [
            (f"n{k}", None, text, code)
            for k, (text, code) in enumerate(zip(texts, codes, strict=True))
        ],
        [{"graphs.gnn": 0.95}, {"graphs": 0.9}, {"rl": 0.92}],
        about=about or {"model": HashEmbedder().name},
    )
    arrays = {
        "codes": index.codes,
        "keys": index.keys,
        "ids": np.array(index.ids),
        "titles": np.array(index.titles),
        "areas": np.array(index.areas),
        "tag_start": index.tag_start,
        "tag_area": index.tag_area,
        "tag_score": index.tag_score,
        "about": np.array(json.dumps(index.about)),
    }
    np.savez_compressed(path, **(arrays | (spoiled or {})))
    return path


def _area_model(path, width=64, about=None):
    areas = [area.id for area in load_taxonomy(MINI_TAXONOMY).areas]
    weights = np.linspace(-1, 1, len(areas) * width).reshape(len(areas), width)
    about = about or {"model": HashEmbedder().name, "combine": "logit"}
    AreaModel.from_floats(areas, weights, np.zeros(len(areas)), about).save(path)
    return path


# --- the record --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("taxonomy", None, "taxonomy"),
        ("taxonomy", {"sha256": 5, "areas": 3}, "taxonomy.sha256"),
        ("fitted_on", ["a.jsonl"], "fitted_on"),
        ("files", {"weigher.json": 12}, "files.weigher.json"),
        ("features", {"settings": [], "constants": {}}, "features.settings"),
        ("tagger_version", 11, "tagger_version"),
        ("space", ["x"], "space"),
    ],
)
def test_a_record_of_the_wrong_shape_is_refused_at_load_naming_the_field(
    tmp_path, field, value, said
):
    where = _rewrite(model_dir(tmp_path / "m", MINI_TAXONOMY), **{field: value})
    with pytest.raises(TaggerError) as refused:
        FittedModel.load(where)
    message = str(refused.value)
    assert message.startswith(f"cannot use the model {where}: {RECORD}: '{said}'"), message
    assert message.endswith(f"fit it again with tagger fit -o {where}") and "\n" not in message


def test_tagger_tag_with_a_record_whose_taxonomy_is_null_is_an_error_not_a_traceback(tmp_path):
    where = _rewrite(model_dir(tmp_path / "m", MINI_TAXONOMY), taxonomy=None)
    result = run("tag", papers(tmp_path / "p.jsonl"), "--model", where, *MINI)
    assert error_line(result).startswith(f"Error: cannot use the model {where}: {RECORD}: ")


def test_a_listed_file_missing_or_a_file_no_model_has_is_refused_at_load(tmp_path):
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    (where / FILES["rules"]).unlink()
    with pytest.raises(TaggerError, match="weigher-rules.json, which it lists, is missing"):
        FittedModel.load(where)
    other = model_dir(tmp_path / "other", MINI_TAXONOMY)
    record = json.loads((other / RECORD).read_text())
    _rewrite(other, files=record["files"] | {"extra.bin": "0" * 64})
    with pytest.raises(TaggerError, match="'extra.bin', which is no part of a model"):
        FittedModel.load(other)


def test_a_changed_part_is_refused_before_tagging_even_one_not_read_yet(tmp_path):
    """The first stage's weigher is read only for an area the model was not fitted for: changed,
    it is refused all the same, when the tagger first uses the model."""
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    with open(where / FILES["rules"], "a") as file:
        file.write(" ")
    tagger = _tagger(where)
    with pytest.raises(TaggerError) as refused:
        tagger.tag(PAPER)
    assert str(refused.value).startswith(
        f"cannot use the model {where}: its weigher-rules.json is not the file its record"
    )


def test_a_part_that_is_not_its_file_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    """A weigher.json grown to 300 MB (a sparse file here; 2 GB took 2 GB of memory): its
    digest is read in blocks and refused, and the file is never held whole."""
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    with open(where / FILES["weigher"], "r+b") as file:
        file.truncate(300 * 2**20)
    read_whole = Path.read_bytes

    def read_bytes(self):
        assert self.name != FILES["weigher"], "read whole"
        return read_whole(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(TaggerError, match="its weigher.json is not the file its record"):
        FittedModel.load(where).part("weigher")


def test_the_record_of_a_killed_fit_left_aside_is_named(tmp_path):
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    aside = tmp_path / f".m.old.{dead}"
    where.rename(aside)
    with pytest.raises(TaggerError) as refused:
        FittedModel.load(where)
    assert str(aside) in str(refused.value) and f"mv {aside} {where}" in str(refused.value)


# --- the parts' shapes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spoiled", "said"),
    [
        ({"keys": np.zeros(2, dtype=np.int64)}, "keys"),
        ({"ids": np.array(["a", "b"])}, "ids"),
        ({"tag_start": np.array([0, 1, 2, 7])}, "tag_start"),
        ({"tag_area": np.array([0, 1, 9], dtype=np.int32)}, "tag_area"),
        ({"codes": np.zeros(3, dtype=np.int8)}, "codes"),
        ({"about": np.array("[1, 2]")}, "about"),
    ],
)
def test_a_neighbour_index_whose_arrays_disagree_is_refused_naming_the_file(
    tmp_path, spoiled, said
):
    path = _index(tmp_path / "index.npz", spoiled=spoiled)
    with pytest.raises(TaggerError) as refused:
        NeighbourIndex.load(path)
    assert str(refused.value).startswith(f"cannot read the neighbour index {path}: ")
    assert said in str(refused.value)


def test_an_area_model_of_another_width_is_refused_not_a_numpy_error(tmp_path):
    where = model_dir(tmp_path / "m", MINI_TAXONOMY, areas=_area_model(tmp_path / "a.npz", 32))
    with pytest.raises(TaggerError) as refused:
        _tagger(where).tag(PAPER)
    message = str(refused.value)
    assert message.startswith(f"cannot use the model {where}: ") and "areas.npz" in message
    assert "32" in message and "64" in message


def test_an_area_model_and_an_index_of_different_widths_are_refused(tmp_path):
    where = model_dir(
        tmp_path / "m",
        MINI_TAXONOMY,
        areas=_area_model(tmp_path / "a.npz", 32),
        corpus=_index(tmp_path / "i.npz"),
    )
    with pytest.raises(TaggerError, match="areas.npz reads vectors of 32 dimensions"):
        _tagger(where).learned  # noqa: B018


def test_a_part_that_cannot_be_read_is_refused_naming_the_model_and_the_fix(tmp_path):
    where = model_dir(tmp_path / "m", MINI_TAXONOMY, corpus=_index(tmp_path / "i.npz"))
    _index(where / FILES["corpus"], spoiled={"keys": np.zeros(2, dtype=np.int64)})
    _relist(where)
    with pytest.raises(TaggerError) as refused:
        _tagger(where).tag(PAPER)
    message = str(refused.value)
    assert message.startswith(
        f"cannot use the model {where}: cannot read the neighbour index {where / FILES['corpus']}"
    )
    assert message.endswith(f"fit it again with tagger fit -o {where}")


def test_an_area_model_whose_text_block_disagrees_is_refused(tmp_path):
    areas = [area.id for area in load_taxonomy(MINI_TAXONOMY).areas]
    n = len(areas)
    text = (["graph", "agent"], np.ones(3), frozenset(), np.zeros((2, n)), np.zeros(n))
    path = tmp_path / "a.npz"
    AreaModel.from_floats(areas, np.ones((n, 64)), np.zeros(n), {"model": "m"}, text).save(path)
    with pytest.raises(TaggerError, match="text_idf"):
        AreaModel.load(path)


def test_a_weigher_whose_trees_read_features_it_does_not_name_is_refused(tmp_path):
    raw = json.loads((FittedModel.load().where / FILES["weigher"]).read_text())
    tree = raw["main"]["trees"][0]
    inner = tree["leaf"].index(0)
    tree["feature"][inner] = len(raw["main"]["names"]) + 5
    (tmp_path / "w.json").write_text(json.dumps(raw))
    with pytest.raises(TaggerError, match=f"cannot read the weigher {tmp_path / 'w.json'}: "):
        Weigher.load(tmp_path / "w.json")
    tree["feature"][inner] = 0
    tree["threshold"] = tree["threshold"][:-1]
    (tmp_path / "w.json").write_text(json.dumps(raw))
    with pytest.raises(TaggerError, match="threshold"):
        Weigher.load(tmp_path / "w.json")


# --- what an npz unpacks to -----------------------------------------------------------------


def _npz(members):
    """The bytes of an npz whose members are (name, header dict, bytes of data or a count of
    zero bytes written a MB at a time)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, header, data in members:
            with zf.open(name, "w", force_zip64=True) as member:
                np.lib.format.write_array_header_1_0(member, header)
                if isinstance(data, int):
                    for _ in range(data // 2**20):
                        member.write(bytes(2**20))
                else:
                    member.write(data)
    return buffer.getvalue()


def _header(array):
    return {"descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False,
            "shape": array.shape}  # fmt: skip


def _area_members(weights):
    small = {"areas": np.array(["rl", "graphs", "theory"]), "scales": np.ones(3),
             "biases": np.zeros(3), "about": np.array(json.dumps({"model": "m"}))}  # fmt: skip
    members = [(f"{k}.npy", _header(v), v.tobytes()) for k, v in small.items()]
    return [*members, weights]


def test_an_area_model_that_unpacks_to_far_more_than_its_size_is_refused_before_it_is(tmp_path):
    big = 72 * 2**20  # 72 MB of zeros, compressed to some 70 KB
    shape = (3, big // 6)
    weights = ("weights.npy", {"descr": "<i2", "fortran_order": False, "shape": shape}, big)
    path = tmp_path / "areas.npz"
    path.write_bytes(_npz(_area_members(weights)))
    assert path.stat().st_size < 2**20
    with pytest.raises(TaggerError) as refused:
        AreaModel.load(path)
    message = str(refused.value)
    assert message.startswith(f"cannot read the area model {path}: ")
    assert "unpacks to 72 MB" in message


def test_an_npz_member_declaring_more_than_it_holds_is_refused(tmp_path):
    weights = ("weights.npy", {"descr": "<i2", "fortran_order": False, "shape": (3, 2**31)}, b"")
    path = tmp_path / "areas.npz"
    path.write_bytes(_npz(_area_members(weights)))
    with pytest.raises(TaggerError, match="weights.npy declares"):
        AreaModel.load(path)


def test_an_npz_holding_a_pickle_is_refused(tmp_path):
    path = tmp_path / "index.npz"
    np.savez(path, codes=np.array([{"a": 1}], dtype=object))
    with pytest.raises(TaggerError, match=f"cannot read the neighbour index {path}: "):
        NeighbourIndex.load(path)


# --- the version and the space ------------------------------------------------------------------


def test_a_model_written_by_a_newer_tagger_is_refused(tmp_path):
    where = _rewrite(model_dir(tmp_path / "m", MINI_TAXONOMY), tagger_version="99.0.0")
    with pytest.raises(TaggerError) as refused:
        FittedModel.load(where)
    assert str(refused.value) == (
        f"cannot use the model {where}: it was written by tagger 99.0.0, newer than this one "
        f"({tagger_version()}): upgrade tagger (pip install -U tagger) or fit it again"
    )
    major, minor, *_ = tagger_version().split(".")
    for version in (f"{major}.{minor}.99", "0.9.0", f"{major}.{minor}.0rc1"):
        FittedModel.load(_rewrite(where, tagger_version=version))
    with pytest.raises(TaggerError, match="newer than this one"):
        FittedModel.load(_rewrite(where, tagger_version=f"{major}.{int(minor) + 1}.0"))


def test_a_model_fitted_in_another_space_is_refused_naming_the_backend(tmp_path):
    """A model of the static backend's space with another embedder: its neighbours and area
    model would be dropped in silence, and its scores no longer probabilities."""
    where = model_dir(tmp_path / "m", MINI_TAXONOMY, corpus=_index(tmp_path / "i.npz"))
    _rewrite(where, space=STATIC)
    with pytest.raises(TaggerError) as refused:
        _tagger(where).tag(PAPER)
    message = str(refused.value)
    assert message.startswith(
        f"cannot use the model {where}: it was fitted with the static backend (space '{STATIC}')"
    )
    assert "tag with --embedding-backend static, or fit a model with this one" in message
    result = run("tag", papers(tmp_path / "p.jsonl"), "--model", where, *MINI)
    assert "--embedding-backend static" in error_line(result)
    # a record that says no space: its parts' are read
    parts = model_dir(
        tmp_path / "parts", MINI_TAXONOMY, corpus=_index(tmp_path / "s.npz", {"space": STATIC})
    )
    with pytest.raises(TaggerError, match="fitted with the static backend"):
        _tagger(parts).tag(PAPER)


def test_eval_with_a_model_of_another_space_is_an_error(tmp_path):
    where = _rewrite(model_dir(tmp_path / "m", MINI_TAXONOMY), space=STATIC)
    judged = tmp_path / "judged.jsonl"
    judged.write_text(
        json.dumps({"id": "p0", "abstract": PAPER.abstract, "primary_area": "rl"}) + "\n"
    )
    result = run("eval", judged, "--scheme", "iclr", "--model", where, *MINI)
    assert "fitted with the static backend" in error_line(result)


@pytest.mark.parametrize("backend", ["onnx-int8", "static"])
def test_the_packaged_models_pass_every_check(backend):
    model = FittedModel.load(backend=backend)
    model.check_whole()
    name = f"sentence-transformers/all-MiniLM-L6-v2 ({backend})"
    learned = learned_for(load_taxonomy(), TaggerConfig(embedding_backend=backend), name)
    assert learned.serving and learned.area_model is not None and learned.neighbour_indexes


def test_a_copy_of_the_static_model_is_refused_with_the_default_backend(tmp_path):
    shutil.copytree(FittedModel.load(backend="static").where, tmp_path / "fast")
    config = TaggerConfig(model=str(tmp_path / "fast"))
    with pytest.raises(TaggerError, match="tag with --embedding-backend static"):
        learned_for(load_taxonomy(), config, "sentence-transformers/all-MiniLM-L6-v2 (onnx-int8)")
    static = TaggerConfig(model=str(tmp_path / "fast"), embedding_backend="static")
    assert learned_for(load_taxonomy(), static, STATIC).area_model is not None
