"""Where a model directory may be written (fitting.modeldir.check_target): never over a user's
file (a model directory holding a NOTES.txt is refused, not deleted with the old model), never
inside tagger's own package (the packaged model is not replaced by a user's fit, through a
symlink either), and `tagger fit -o` says so before it fits anything."""

from __future__ import annotations

import json
import shutil
import uuid

import pytest

from tagger.errors import TaggerError
from tagger.fitting.modeldir import check_target
from tagger.io import packaged
from tagger.tagging.model import RECORD, FittedModel

from ..conftest import DATA, MINI_TAXONOMY, error_line, model_dir, run


def test_a_model_directory_holding_a_users_file_is_refused_naming_it(tmp_path):
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    (where / "NOTES.txt").write_text("what I tried\n")
    (where / "plots").mkdir()
    with pytest.raises(TaggerError) as refused:
        check_target(where)
    message = str(refused.value)
    assert message.startswith(f"cannot write a model to {where}: ")
    assert "NOTES.txt, plots" in message and "move them" in message and "\n" not in message
    check_target(tmp_path / "new")  # a directory that does not exist is fine
    check_target(model_dir(tmp_path / "other", MINI_TAXONOMY))  # and so is a model's alone


def test_a_fit_over_a_model_directory_holding_a_users_file_keeps_both(tmp_path):
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    record = (where / RECORD).read_bytes()
    (where / "NOTES.txt").write_text("what I tried\n")
    with pytest.raises(TaggerError, match="NOTES.txt"):
        model_dir(where, MINI_TAXONOMY)  # save_model, as a fit ends
    assert (where / "NOTES.txt").read_text() == "what I tried\n"
    assert (where / RECORD).read_bytes() == record
    FittedModel.load(where)


def test_tagger_fit_refuses_the_directory_before_it_fits(tmp_path):
    """The judged file is too small to fit on: the directory is refused first, so no fit's
    work is done before the refusal."""
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    (where / "NOTES.txt").write_text("mine\n")
    judged = tmp_path / "judged.jsonl"
    judged.write_text(json.dumps({"id": "p0", "abstract": "Graphs.", "areas": ["graphs"]}) + "\n")
    result = run(
        "fit", "--taxonomy", MINI_TAXONOMY, "--judged", judged, "--labels", "areas", "-o", where
    )
    line = error_line(result)
    assert line.startswith(f"Error: cannot write a model to {where}: ") and "NOTES.txt" in line
    assert (where / "NOTES.txt").exists()


def test_no_model_is_written_inside_the_installed_package(tmp_path):
    """Not over the packaged model, nor anywhere else in the package, through a symlink either:
    the message says to write it to a directory of one's own and tag with --model."""
    package = packaged.data_dir("model").parent.parent  # tagger/
    (tmp_path / "link").symlink_to(package / "data")
    for target in (packaged.data_dir("model"), tmp_path / "link" / "model", package / "fresh"):
        with pytest.raises(TaggerError) as refused:
            check_target(target)
        message = str(refused.value)
        assert "inside tagger's installed package" in message and "--model" in message
    shipped = FittedModel.load()
    inside = tmp_path / "link" / f"model-test-{uuid.uuid4().hex[:8]}"  # tagger/data/model-test-…
    try:
        with pytest.raises(TaggerError, match="inside tagger's installed package"):
            model_dir(inside, MINI_TAXONOMY)
        assert not inside.exists()
    finally:
        shutil.rmtree(inside, ignore_errors=True)
    assert FittedModel.load().digest == shipped.digest


def test_tagger_fit_into_the_packaged_model_is_an_error(tmp_path):
    judged = DATA / "mini-taxonomy.yaml"  # never read: the directory is refused first
    result = run("fit", "--judged", judged, "-o", packaged.data_dir("model"))
    line = error_line(result)
    assert "inside tagger's installed package" in line and "tag with --model" in line
