"""`tagger retag`: tagged papers scored again with another taxonomy, without the embedding
model, giving the bytes `tagger tag` gives for the same papers with that taxonomy.

The fast lane runs it with HashEmbedder over the small test taxonomy; the models lane with the
real model over the shipped taxonomy and the examples.
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from tagger import Tagger
from tagger.cli import main
from tagger.io.tagged import read_tagged
from tagger.runs.local import retag_files, tag_files
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import EXAMPLES, MINI_TAXONOMY

INPUTS = [EXAMPLES / "icml2025-abstracts.txt", EXAMPLES / "iclr2025-sample.jsonl"]

# Over the mini taxonomy: a new area, an alias replaced, a cue and an exclusion added, an area
# moved and one dropped: every kind of change an overlay makes.
MINI_OVERLAY = """\
extends: base.yaml
version: retag-test
areas:
  - id: rl.offline
    name: Offline RL
    parent: rl
    description: Learning a policy from logged data, without interacting.
    aliases: [offline reinforcement learning, offline RL, batch reinforcement learning]
  - id: llm
    name: Language models
    description: Large language models.
    aliases: [large language model, language model]
    acronyms: [LLM]
edit:
  rl:
    remove: {aliases: [q-learning]}
    add: {cues: [policy, agent], exclude: [policy makers]}
  graphs.gnn:
    set: {parent: null, name: GNNs}
drop: [type.dataset]
"""

# Over the shipped taxonomy: an area it does not have, and a cue added.
BUILTIN_OVERLAY = """\
extends: builtin
version: retag-test
areas:
  - id: health.neuro
    name: Neurological disorders
    parent: health
    description: Diagnosis and monitoring of neurodegenerative and other neurological disease.
    aliases: [neurodegenerative disorder, neurodegenerative disease, Parkinson's disease]
edit:
  rl:
    add: {cues: [agent]}
"""


def _overlay(tmp_path, text, base=MINI_TAXONOMY):
    shutil.copy(base, tmp_path / "base.yaml")
    path = tmp_path / "overlay.yaml"
    path.write_text(text)
    return path


def _tag(taxonomy_path, output, *, workers=1):
    with Tagger.from_taxonomy(taxonomy_path) as tagger:
        summary = tag_files(tagger, INPUTS, output, workers=workers)
    assert summary.rejected == 0
    return output.read_bytes()


def test_retag_writes_what_tag_writes_with_the_new_taxonomy(tmp_path):
    overlay = _overlay(tmp_path, MINI_OVERLAY)
    before = _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    after = _tag(overlay, tmp_path / "after.jsonl")
    summary = retag_files(
        load_taxonomy(overlay), [tmp_path / "before.jsonl"], tmp_path / "re.jsonl"
    )
    retagged = (tmp_path / "re.jsonl").read_bytes()
    assert summary.tagged == len(after.splitlines()) == 31 and summary.rejected == 0
    assert retagged == after
    assert before != after  # the overlay changes tags, not only the provenance
    changed = [
        (json.loads(a)["tags"], json.loads(b)["tags"])
        for a, b in zip(before.splitlines(), after.splitlines(), strict=True)
    ]
    assert sum(a != b for a, b in changed) >= 5


def test_retag_back_to_the_old_taxonomy_gives_the_old_bytes(tmp_path):
    overlay = _overlay(tmp_path, MINI_OVERLAY)
    before = _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    retag_files(load_taxonomy(overlay), [tmp_path / "before.jsonl"], tmp_path / "re.jsonl")
    retag_files(load_taxonomy(MINI_TAXONOMY), [tmp_path / "re.jsonl"], tmp_path / "back.jsonl")
    assert (tmp_path / "back.jsonl").read_bytes() == before


def test_lines_that_cannot_be_retagged_are_reported_and_the_rest_written(tmp_path):
    _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    lines = (tmp_path / "before.jsonl").read_bytes().splitlines(keepends=True)
    old = json.loads(lines[1])
    old["provenance"]["tagger_version"] = "0.5.0"
    bare = json.loads(lines[2])
    del bare["vector"]
    other = json.loads(lines[3])
    other["provenance"]["settings"] = {"min_score": 0.5}
    broken = json.loads(lines[4])
    broken["vector"] = "not base64!"
    short = json.loads(lines[5])
    short["vector"] = "AAECAwQFBgcICQ=="  # 10 values, the model's vectors have more
    mixed = [lines[0], *(json.dumps(r).encode() + b"\n" for r in (old, bare, other, broken, short))]
    mixed += [b'{"paper": "not a tagged line"}\n', *lines[6:]]
    (tmp_path / "mixed.jsonl").write_bytes(b"".join(mixed))
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "retag",
            str(tmp_path / "mixed.jsonl"),
            "--taxonomy",
            str(MINI_TAXONOMY),
            "-o",
            str(tmp_path / "re.jsonl"),
            "--errors",
            str(tmp_path / "errors.jsonl"),
        ],
    )
    assert result.exit_code == 1
    errors = [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()]
    assert [(e["line"], e["reason"].split(":")[0]) for e in errors] == [
        (2, "cannot retag"),
        (3, "cannot retag"),
        (4, "cannot retag"),
        (5, "cannot retag"),
        (6, "cannot retag"),
        (7, "not a line of tagged JSONL (run `tagger tag` first)"),
    ]
    reasons = [e["reason"] for e in errors]
    assert "it was tagged by tagger 0.5.0" in reasons[0]
    assert reasons[1] == "cannot retag: it holds no paper vector; tag the papers again"
    assert "min_score=0.5 (the first line: default)" in reasons[2]
    assert reasons[3] == "cannot retag: 'vector': the vector is not base64"
    assert reasons[4] == "cannot retag: 'vector': it has 10 values, and the model's vectors 64"
    assert all(e["source"] == str(tmp_path / "mixed.jsonl") for e in errors)
    kept = (tmp_path / "re.jsonl").read_bytes().splitlines(keepends=True)
    assert kept == [lines[0], *lines[6:]]  # the same taxonomy: the same bytes
    assert result.stderr.splitlines()[-1] == (
        f"retagged {len(kept)} papers to {tmp_path / 're.jsonl'}, 6 rejected: "
        f"see {tmp_path / 'errors.jsonl'}"
    )


def test_retag_refuses_to_write_over_its_input(tmp_path):
    _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    before = (tmp_path / "before.jsonl").read_bytes()
    result = CliRunner().invoke(
        main, ["retag", str(tmp_path / "before.jsonl"), "-o", str(tmp_path / "before.jsonl")]
    )
    assert result.exit_code == 1 and "Error:" in result.stderr
    assert (tmp_path / "before.jsonl").read_bytes() == before


def test_retag_reads_stdin_and_writes_parquet(tmp_path):
    overlay = _overlay(tmp_path, MINI_OVERLAY)
    _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    after = _tag(overlay, tmp_path / "after.jsonl")
    result = CliRunner().invoke(
        main,
        ["retag", "-", "--taxonomy", str(overlay), "-o", str(tmp_path / "re.parquet")],
        input=(tmp_path / "before.jsonl").read_bytes(),
    )
    assert result.exit_code == 0, result.stderr
    import pyarrow.parquet as pq

    records = pq.read_table(tmp_path / "re.parquet", columns=["record"]).column(0).to_pylist()
    assert [r.encode() + b"\n" for r in records] == after.splitlines(keepends=True)


@pytest.mark.models
def test_retag_with_the_real_models_writes_what_tag_writes(tmp_path, monkeypatch):
    """The shipped taxonomy and an overlay of it, the default model: identical bytes, with one
    worker and with two, and the embedding model never loaded (the new area's description was
    embedded by the tag run; retag reads it from the cache)."""
    import tagger.language.embedders

    overlay = _overlay(tmp_path, BUILTIN_OVERLAY)
    before = _tag(None, tmp_path / "before.jsonl", workers=2)
    after = _tag(overlay, tmp_path / "after.jsonl", workers=1)
    assert before != after

    def refuse(*args, **kwargs):
        raise AssertionError("retag loaded the embedding model")

    monkeypatch.setattr(tagger.language.embedders, "_load_onnx", refuse)
    monkeypatch.setattr("tagger.tagging.retag.RETAG_BATCH", 8)  # batches enough for two workers
    for workers in (1, 2):
        output = tmp_path / f"re-{workers}.jsonl"
        retag_files(load_taxonomy(overlay), [tmp_path / "before.jsonl"], output, workers=workers)
        assert output.read_bytes() == after, workers
    # the overlay changed some paper's tags (not only the provenance), so retag had work to do
    changed = [
        json.loads(old)["tags"] != json.loads(new)["tags"]
        for old, new in zip(before.splitlines(), after.splitlines(), strict=True)
    ]
    assert any(changed)


# One change each, of every kind an overlay makes, over the mini taxonomy: retag reads again only
# the papers the change can touch (tagger.tagging.untouched.Untouched) and must still write what
# tag writes.
CHANGES = {
    "alias added": "edit:\n  graphs:\n    add: {aliases: [graph structure, message]}\n",
    "alias removed": "edit:\n  rl:\n    remove: {aliases: [reinforcement learning]}\n",
    "cue added": "edit:\n  rl:\n    add: {cues: [agent, policy]}\n",
    "acronym removed": "edit:\n  graphs.gnn:\n    remove: {acronyms: [GNN]}\n",
    "pattern added": "edit:\n  rl:\n    add: {patterns: ['(?i)\\bpolic(?:y|ies)\\b']}\n",
    "exclusion added": "edit:\n  rl:\n    add: {exclude: [multi-agent reinforcement learning]}\n",
    "requirement set": "edit:\n  rl.multi-agent:\n    add: {requires: [agents]}\n",
    "renamed": "edit:\n  graphs:\n    set: {name: Learning on graphs}\n",
    "described": "edit:\n  rl:\n    set: {description: Sequential decisions from reward.}\n",
    "moved": "edit:\n  rl.multi-agent:\n    set: {parent: graphs}\n",
    "crosswalk": "edit:\n  rl:\n    set: {crosswalk: {iclr: [learning theory]}}\n",
    "dropped": "drop: [graphs.gnn]\n",
    "new leaf": "areas:\n  - id: graphs.gnn.gcn\n    name: GCNs\n    parent: graphs.gnn\n"
    "    aliases: [graph convolutional network]\n",
}


def _counting_cleared(monkeypatch) -> list[bool]:
    """What Untouched.cleared says of each line, as retag asks it, kept in the list returned."""
    from tagger.tagging.untouched import Untouched

    cleared: list[bool] = []
    judge = Untouched.cleared
    monkeypatch.setattr(
        Untouched,
        "cleared",
        lambda self, records: cleared.extend(judge(self, records)) or cleared[-len(records) :],
    )
    return cleared


@pytest.mark.parametrize("change", CHANGES)
def test_each_kind_of_change_retags_to_what_tag_writes(tmp_path, change, monkeypatch):
    overlay = _overlay(tmp_path, "extends: base.yaml\n" + CHANGES[change])
    _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    after = _tag(overlay, tmp_path / "after.jsonl")
    cleared = _counting_cleared(monkeypatch)
    retag_files(load_taxonomy(overlay), [tmp_path / "before.jsonl"], tmp_path / "re.jsonl")
    assert (tmp_path / "re.jsonl").read_bytes() == after
    assert len(cleared) == 31 and 0 < sum(cleared) < 31  # both ways taken


def test_papers_tagged_with_an_unknown_taxonomy_are_all_read_again(tmp_path, monkeypatch):
    """Without the old taxonomy (not in the cache, not the shipped one) nothing is cleared;
    the output is the same."""
    overlay = _overlay(tmp_path, MINI_OVERLAY)
    _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    after = _tag(overlay, tmp_path / "after.jsonl")
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(tmp_path / "empty-cache"))
    retag_files(load_taxonomy(overlay), [tmp_path / "before.jsonl"], tmp_path / "re.jsonl")
    assert (tmp_path / "re.jsonl").read_bytes() == after


def test_a_first_line_with_unreadable_settings_is_rejected_and_the_next_leads(tmp_path):
    _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    lines = (tmp_path / "before.jsonl").read_bytes().splitlines(keepends=True)
    odd = json.loads(lines[0])
    odd["provenance"]["settings"] = {"bogus": 1}
    (tmp_path / "odd.jsonl").write_bytes(json.dumps(odd).encode() + b"\n" + b"".join(lines[1:]))
    summary = retag_files(
        load_taxonomy(MINI_TAXONOMY),
        [tmp_path / "odd.jsonl"],
        tmp_path / "re.jsonl",
        errors=tmp_path / "errors.jsonl",
        warn=lambda message: None,
    )
    assert (summary.tagged, summary.rejected) == (len(lines) - 1, 1)
    [error] = [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()]
    assert error["line"] == 1 and "unexpected keyword argument 'bogus'" in error["reason"]
    assert (tmp_path / "re.jsonl").read_bytes() == b"".join(lines[1:])


@pytest.mark.parametrize("output", ["re.jsonl", "re.parquet"])
def test_nothing_to_retag_still_writes_an_empty_output(tmp_path, output):
    """An output left from an earlier run must not pass for this run's."""
    (tmp_path / output).write_text("an earlier run's output\n")
    (tmp_path / "empty.jsonl").write_text("")
    summary = retag_files(
        load_taxonomy(MINI_TAXONOMY), [tmp_path / "empty.jsonl"], tmp_path / output
    )
    assert summary.tagged == 0
    assert not list(read_tagged(tmp_path / output))


def test_a_device_is_not_a_taxonomy(tmp_path):
    from tagger.errors import TaxonomyError

    with pytest.raises(TaxonomyError, match="is not a regular file"):
        load_taxonomy("/dev/zero")


def test_an_area_found_by_its_description_alone_reads_every_paper_again(tmp_path, monkeypatch):
    """An area with no rule is a candidate of any paper near its description: no line can be
    cleared without reading it, and retag still writes what tag writes."""
    described = "areas:\n  - id: graphs.spectral\n    name: Spectral graph methods\n"
    described += "    parent: graphs\n    description: Graph Laplacians and their eigenvectors.\n"
    overlay = _overlay(tmp_path, "extends: base.yaml\n" + described)
    assert load_taxonomy(overlay).described_only == ("graphs.spectral",)
    _tag(MINI_TAXONOMY, tmp_path / "before.jsonl")
    after = _tag(overlay, tmp_path / "after.jsonl")
    cleared = _counting_cleared(monkeypatch)
    retag_files(load_taxonomy(overlay), [tmp_path / "before.jsonl"], tmp_path / "re.jsonl")
    assert (tmp_path / "re.jsonl").read_bytes() == after
    assert len(cleared) == 31 and not any(cleared)
    assert any('"graphs.spectral"' in line for line in after.decode().splitlines())
