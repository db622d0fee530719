"""A model directory (tagging.model): it records the settings and constants its features were
made with, and a tagger that would make them otherwise is refused, naming the setting; a model
of the former format is read as it was fitted; one of a newer format is refused; and a model
refitted into the same directory in the same process is read anew, not served from a cache."""

from __future__ import annotations

import json
import shutil

import pytest

from tagger import Paper, Tagger, TaggerConfig
from tagger.errors import TaggerError
from tagger.tagging.model import FILES, FORMAT, FORMER, RECORD, FittedModel, feature_constants

from ..conftest import ABSTRACTS, MINI_TAXONOMY, HashEmbedder, model_dir

PAPER = Paper(abstract="Multi-agent reinforcement learning (MARL) with graph neural networks.")


@pytest.mark.parametrize(
    ("setting", "value"),
    [("neighbours", 5), ("judged_neighbours", 0), ("title_factor", 3.0), ("top_n", 5)],
)
def test_a_setting_the_packaged_model_was_not_fitted_with_is_refused_naming_it(setting, value):
    tagger = Tagger.from_taxonomy(None, TaggerConfig(**{setting: value}), embedder=HashEmbedder())
    fitted = FittedModel.load().features["settings"][setting]
    with pytest.raises(TaggerError) as refused:
        tagger.tag(PAPER)
    message = str(refused.value)
    assert message.startswith("the packaged model (fitted on 3,900 judged papers")
    assert f"was fitted with {setting}={fitted!r}" in message and "\n" not in message
    assert f"fit a model with {setting}={value!r}" in message


def test_with_another_taxonomy_only_the_first_stages_settings_count(tmp_path):
    """The first stage reads no neighbours: a tagger of another taxonomy may read any number."""
    config = TaggerConfig(neighbours=5, judged_neighbours=0)
    [tagged] = Tagger.from_taxonomy(MINI_TAXONOMY, config, embedder=HashEmbedder()).tag_batch(
        [PAPER]
    )
    assert tagged.provenance.model.endswith("(first stage)") and tagged.tags
    refused = Tagger.from_taxonomy(
        MINI_TAXONOMY, TaggerConfig(cue_weight=1.0), embedder=HashEmbedder()
    )
    with pytest.raises(TaggerError, match="was fitted with cue_weight=0.35"):
        refused.tag(PAPER)


def test_a_model_records_what_its_features_were_made_with(tmp_path):
    config = TaggerConfig(neighbours=2, judged_neighbours=0)
    model = FittedModel.load(model_dir(tmp_path / "m", MINI_TAXONOMY, config))
    assert model.record["format"] == FORMAT
    assert model.features["settings"] == config.shaping("evidence", "votes")
    assert model.features["constants"] == feature_constants()
    tagged = Tagger.from_taxonomy(
        MINI_TAXONOMY,
        TaggerConfig(model=str(model.where), neighbours=2, judged_neighbours=0),
        embedder=HashEmbedder(),
    ).tag(PAPER)
    assert tagged.provenance.model == model.identity
    with pytest.raises(TaggerError, match="was fitted with neighbours=2"):
        Tagger.from_taxonomy(
            MINI_TAXONOMY, TaggerConfig(model=str(model.where)), embedder=HashEmbedder()
        ).tag(PAPER)


def _former(tmp_path):
    """The packaged model as tagger 0.7 wrote it: no format, no feature record, the neighbour
    features named nb_* and jn_*."""
    shipped = FittedModel.load()
    where = tmp_path / "former"
    shutil.copytree(shipped.where, where)
    record = json.loads((where / RECORD).read_text())
    for name in ("weigher.json", "weigher-rules.json"):
        text = (where / name).read_text().replace('"corpus_', '"nb_').replace('"judged_', '"jn_')
        (where / name).write_text(text)
    import hashlib

    record = {k: v for k, v in record.items() if k not in ("format", "features")}
    record["files"] = {
        name: hashlib.sha256((where / name).read_bytes()).hexdigest() for name in record["files"]
    }
    (where / RECORD).write_text(json.dumps(record))
    return where


def test_a_model_of_the_former_format_tags_as_it_was_fitted(tmp_path, embedder):
    """With the real embedder: a model given by name is used in its own space alone."""
    where = _former(tmp_path)
    former = FittedModel.load(where)
    assert former.features == FORMER[1]
    config = TaggerConfig(min_score=0.3)
    papers = [PAPER, Paper(abstract="We study offline reinforcement learning from logged data.")]
    now = Tagger.from_taxonomy(None, config, embedder=embedder).tag_batch(papers)
    then = Tagger.from_taxonomy(
        None, TaggerConfig(min_score=0.3, model=str(where)), embedder=embedder
    ).tag_batch(papers)
    for a, b in zip(now, then, strict=True):
        assert a.tags == b.tags and a.facets == b.facets


def test_a_model_of_a_newer_format_or_other_constants_is_refused(tmp_path):
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    record = json.loads((where / RECORD).read_text())
    (where / RECORD).write_text(json.dumps(record | {"format": FORMAT + 1}))
    with pytest.raises(TaggerError, match=f"a model directory of format {FORMAT + 1}"):
        FittedModel.load(where)
    constants = record["features"]["constants"] | {"neighbour_agree": 0.6}
    other = record | {"features": record["features"] | {"constants": constants}}
    (where / RECORD).write_text(json.dumps(other))
    tagger = Tagger.from_taxonomy(
        MINI_TAXONOMY, TaggerConfig(model=str(where)), embedder=HashEmbedder()
    )
    with pytest.raises(TaggerError, match="fitted with neighbour_agree 0.6, and this version"):
        tagger.tag(PAPER)


def test_a_model_refitted_into_the_same_directory_is_read_anew(tmp_path):
    """A notebook that fits, tags, fits again into the same directory and tags again gets the
    second model: parts are kept by their bytes, not by their path."""
    shipped = FittedModel.load().where
    where = model_dir(tmp_path / "m", MINI_TAXONOMY)
    first = FittedModel.load(where)
    before = first.part("weigher")
    # the same directory, written again with another weigher (the first stage's)
    model_dir(where, MINI_TAXONOMY, weigher=shipped / FILES["rules"])
    second = FittedModel.load(where)
    assert second.digest != first.digest
    after = second.part("weigher")
    assert after is not before and after.right.names != before.right.names
    assert after.right.names == FittedModel.load().part("rules").right.names


NEW_AREA = """\
extends: base.yaml
version: new-area
areas:
  - id: graphs.molecules
    name: Molecular graphs
    parent: graphs
    description: Learning on the graphs of molecules.
    aliases: [molecular graph, molecule generation]
"""


def test_an_overlays_new_area_is_weighed_by_the_first_stage_and_listed(tmp_path):
    """The fitted weigher never saw an area an overlay adds (no neighbour placed a paper there,
    the area model has no head for it): the first stage, which reads its rule evidence, weighs
    it; the areas the model was fitted for are weighed as without the overlay."""
    shutil.copy(MINI_TAXONOMY, tmp_path / "base.yaml")
    (tmp_path / "overlay.yaml").write_text(NEW_AREA)
    model = model_dir(tmp_path / "m", MINI_TAXONOMY)
    config = TaggerConfig(model=str(model))
    paper = Paper(
        abstract="Molecular graph generation with graph learning: molecule generation by message "
        "passing over molecular graphs, with reinforcement learning as a baseline."
    )
    tagger = Tagger.from_taxonomy(tmp_path / "overlay.yaml", config, embedder=HashEmbedder())
    assert tagger.learned.new_areas == {"graphs.molecules"}
    assert "graphs.molecules: 1 area the model" in tagger.learned.note()
    [tagged] = tagger.tag_batch([paper])
    scores = {tag.id: tag.score for tag in tagged.tags}
    assert "graphs.molecules" in scores  # listed (here first, the root's likeliest child)

    from tagger.tagging.proposing import propose_paper

    [reading] = tagger.reader.read([paper])
    [votes] = tagger.learned.votes([reading])
    found = {c.area: c for c in propose_paper(reading, votes, tagger.taxonomy, config).candidates}
    first, fitted = FittedModel.load(model).part("rules"), FittedModel.load(model).part("weigher")
    assert scores["graphs.molecules"] == round(first.right(found["graphs.molecules"].features), 4)
    for area in set(scores) - {"graphs.molecules"}:
        assert scores[area] == round(fitted.right(found[area].features), 4)

    base = Tagger.from_taxonomy(MINI_TAXONOMY, config, embedder=HashEmbedder())
    assert base.learned.new_areas == set() and base.learned.note() is None


def test_the_areas_of_a_model_fitted_before_they_were_recorded_are_the_taxonomys(tmp_path):
    """A model whose record counts its taxonomy's areas without naming them (before 0.11.0,
    as the packaged model of 0.11.0 did) knows them from the taxonomy, when it is the packaged
    one or kept in the cache."""
    from tagger.taxonomy.loading import load_taxonomy

    old = tmp_path / "old"
    shutil.copytree(FittedModel.load().where, old)
    record = json.loads((old / RECORD).read_text())
    del record["taxonomy"]["ids"]
    (old / RECORD).write_text(json.dumps(record, indent=2))
    assert FittedModel.load(old).area_ids == {area.id for area in load_taxonomy().areas}
    assert FittedModel.load().area_ids == {area.id for area in load_taxonomy().areas}
    assert FittedModel.load(model_dir(tmp_path / "m", MINI_TAXONOMY)).area_ids == {
        area.id for area in load_taxonomy(MINI_TAXONOMY).areas
    }


def test_a_taxonomy_of_names_and_descriptions_alone_tags_every_paper(tmp_path):
    """No rule can find its areas: the ones nearest a paper by description are its candidates,
    and its likeliest is listed."""
    from tagger.taxonomy.loading import load_taxonomy

    path = tmp_path / "described.yaml"
    path.write_text(
        'version: "1"\nareas:\n'
        "  - {id: rl, name: Reinforcement learning, description: 'Agents that learn to act "
        "from reward in an environment.'}\n"
        "  - {id: graphs, name: Graphs, description: 'Learning on graphs and networks of nodes "
        "and edges.'}\n"
        "  - {id: vision, name: Vision, description: 'Images, video and visual recognition.'}\n"
        "  - {id: theory, name: Theory, description: 'Proofs and bounds.'}\n"
        "  - {id: theory.pac, name: PAC learning, parent: theory, cues: [pac]}\n"
    )
    taxonomy = load_taxonomy(path)
    assert taxonomy.described_only == ("rl", "graphs", "vision")  # theory has a rule below it
    tagger = Tagger(taxonomy, embedder=HashEmbedder())
    papers = [Paper(abstract=text) for text in ABSTRACTS]
    tagged = tagger.tag_batch(papers)
    assert all(paper.tags for paper in tagged)
    [reading] = tagger.reader.read([papers[0]])
    nearest = sorted(taxonomy.described_only, key=lambda a: -reading.similarity[a])
    assert tagged[0].tags[0].id in nearest[:3]


def test_the_iclr_areas_by_name_and_description_alone_tag_with_the_real_models(tmp_path, embedder):
    """examples/iclr-areas.yaml without its rules: every paper gets a tag, and the first three
    hold the authors' area more often than a guess would (3 of 21)."""
    import yaml

    from tagger.io.readers import read_papers
    from tagger.taxonomy.loading import load_taxonomy

    from ..conftest import EXAMPLES, ROOT

    raw = yaml.safe_load((EXAMPLES / "iclr-areas.yaml").read_text())
    keep = ("id", "name", "description", "crosswalk")
    raw["areas"] = [{k: area[k] for k in keep if k in area} for area in raw["areas"]]
    (tmp_path / "names.yaml").write_text(yaml.safe_dump(raw))
    taxonomy = load_taxonomy(tmp_path / "names.yaml")
    assert len(taxonomy.described_only) == 21
    papers = list(read_papers(ROOT / "data" / "iclr2026-dev.jsonl"))[:40]
    tagger = Tagger(taxonomy, TaggerConfig(min_tags=3, max_tags=3), embedder=embedder)
    tagged = tagger.tag_batch(papers)
    assert all(len(paper.tags) == 3 for paper in tagged)
    wanted = {area.name: area.id for area in taxonomy.areas}
    hits = sum(
        wanted[(paper.model_extra or {})["primary_area"]] in {tag.id for tag in record.tags}
        for paper, record in zip(papers, tagged, strict=True)
    )
    assert hits / len(papers) > 0.3
