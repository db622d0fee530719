"""A taxonomy of one's own, end to end: tagged with it, the papers read back with it. The
commands that read tagged output (filter, stats, report, suggest) take the taxonomy the lines
were tagged with when --taxonomy is not given (their provenance's taxonomy_sha256, which
taxonomy.store recalls), and say so when it cannot be found; `tag` says, once, that the packaged
model does not serve such a taxonomy, and its neighbours vote for none of its areas, however
their ids collide with the packaged taxonomy's."""

from __future__ import annotations

import json

import pytest

from tagger.io.display import short_path
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import run

OWN = """\
version: "own-1"
areas:
  - id: theory
    name: Learning theory
    aliases: [generalization bound, sample complexity]
  - id: rl
    name: Reinforcement learning
    aliases: [reinforcement learning]
  - id: vision
    name: Computer vision
    aliases: [image classification]
"""
PAPERS = {
    # the packaged taxonomy's theory and rl, in words none of this taxonomy's rules has
    "a": "We prove regret bounds and PAC guarantees for online convex optimization with "
    "adversarial losses, with a new analysis of mirror descent.",
    "b": "We study policy optimization for agents that learn to act from rewards in Markov "
    "decision processes.",
    "c": "Image classification with convolutional networks.",
    "d": "Reinforcement learning from human feedback.",
}


def _own(tmp_path):
    own = tmp_path / "own.yaml"
    own.write_text(OWN)
    papers = tmp_path / "papers.jsonl"
    papers.write_text(
        "".join(json.dumps({"id": k, "abstract": v}) + "\n" for k, v in PAPERS.items())
    )
    return own, papers


@pytest.fixture
def own_tagged(tmp_path):
    own, papers = _own(tmp_path)
    tagged = tmp_path / "tagged.jsonl"
    result = run("tag", papers, "--taxonomy", own, "-o", tagged)
    assert result.exit_code == 0, result.stderr
    return tagged


def test_filter_takes_the_area_ids_of_the_taxonomy_the_papers_were_tagged_with(own_tagged):
    result = run("filter", own_tagged, "--area", "vision", "--output-format", "ids")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "c\n", "")
    result = run("filter", own_tagged, "--area", "cv")  # the packaged taxonomy's, not this one's
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: unknown area 'cv'; `tagger taxonomy check` lists them"
    )


@pytest.mark.parametrize("command", ["stats", "report", "suggest"])
def test_commands_read_the_papers_with_their_own_taxonomy_without_a_word(own_tagged, command):
    result = run(command, own_tagged)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""


def test_stats_counts_the_areas_of_ones_own_taxonomy_from_a_file_or_stdin(own_tagged):
    for source, given in ((own_tagged, None), ("-", own_tagged.read_bytes())):
        result = run("stats", source, "--json", input=given)
        assert (result.exit_code, result.stderr) == (0, "")
        counted = {area["id"]: area["papers"] for area in json.loads(result.stdout)["areas"]}
        assert counted["vision"] == 1 and set(counted) <= {"theory", "rl", "vision"}


def test_a_taxonomy_that_cannot_be_found_is_said_and_the_packaged_one_read(
    own_tagged, tmp_path, monkeypatch
):
    elsewhere = tmp_path / "another-cache"
    monkeypatch.setenv("TAGGER_CACHE_DIR", str(elsewhere))
    sha256 = load_taxonomy(tmp_path / "own.yaml").sha256
    result = run("filter", own_tagged, "--area", "vision")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        f"Note: {own_tagged}: the taxonomy it was tagged with (version own-1, sha256 "
        f"{sha256[:12]}) is neither the packaged one nor one tagger kept when it tagged with it "
        f"(in {elsewhere / 'taxonomies'}): it is read with the packaged taxonomy"
    )
    assert "Error: unknown area 'vision' (did you mean cv" in result.stderr
    # --taxonomy says which
    result = run("filter", own_tagged, "--area", "vision", "--taxonomy", tmp_path / "own.yaml")
    assert (result.exit_code, result.stderr) == (0, "")


def test_an_overlay_suggested_for_ones_own_taxonomy_needs_its_file(own_tagged, tmp_path):
    result = run("suggest", own_tagged, "--overlay")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: --overlay writes an overlay that extends a taxonomy file, and {own_tagged} was "
        "tagged with taxonomy version own-1, not the packaged taxonomy: pass the file of the "
        "taxonomy it was tagged with (--taxonomy FILE)"
    )
    result = run("suggest", own_tagged, "--overlay", "--taxonomy", tmp_path / "own.yaml")
    assert result.exit_code == 0, result.stderr


@pytest.mark.models
@pytest.mark.parametrize("workers", ["1", "2"])
def test_tagging_with_ones_own_taxonomy_uses_no_packaged_neighbours_and_says_so_once(
    tmp_path, workers
):
    """Its ids `theory` and `rl` are the packaged taxonomy's too: the packaged model's neighbours
    would vote for them. They do not: a paper with no rule evidence gets no tag."""
    own, papers = _own(tmp_path)
    tagged = tmp_path / "tagged.jsonl"
    result = run(
        "tag", papers, "--taxonomy", own, "-o", tagged, "--workers", workers, "--batch-size", "1"
    )
    assert result.exit_code == 0, result.stderr
    label = f"{short_path(own)} (version own-1)"
    assert result.stderr.splitlines() == [
        f"Note: tagging with {label}",
        f"Note: {label} has no fitted model: its tags are weighed by rule evidence and "
        "similarity alone (no neighbours, no learned areas); tagger fit fits one to judged papers",
        f"tagged 4 papers to {tagged}",
    ]
    lines = [json.loads(line) for line in tagged.read_text().splitlines()]
    tags = {line["paper"]["id"]: [tag["id"] for tag in line["tags"]] for line in lines}
    assert tags == {"a": [], "b": [], "c": ["vision"], "d": ["rl"]}
    assert all(tag["evidence"] for line in lines for tag in line["tags"])
