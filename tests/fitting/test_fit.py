"""`tagger fit` end to end: a model fitted to a user's own taxonomy and labels, measured held
out, written, and then tagged with; what --exclude names reaches no index; and what a fit
reports of a fold held out is what `tagger tag` writes with that fold's model."""

from __future__ import annotations

import json

import pytest

from tagger import Tagger, TaggerConfig
from tagger.corpus.judged import evaluate_judged, render_judged
from tagger.fitting import folds as cv
from tagger.fitting.fit import MIN_JUDGED, fit_model
from tagger.fitting.modeldir import save_model
from tagger.tagging.model import RECORD
from tagger.tagging.neighbours import NeighbourIndex, abstract_key
from tagger.taxonomy.loading import load_taxonomy

from ..conftest import EXAMPLES, ROOT, run

AREAS = EXAMPLES / "iclr-areas.yaml"


def papers(tmp_path, count=90, sealed=12):
    """ICLR 2026 papers with their primary area (data/iclr2026-dev.jsonl): ``count`` to fit on,
    ``sealed`` others to index and exclude, and the rest to find neighbours among."""
    lines = (ROOT / "data" / "iclr2026-dev.jsonl").read_text().splitlines()
    fit, index, out = tmp_path / "fit.jsonl", tmp_path / "index.jsonl", tmp_path / "sealed.jsonl"
    fit.write_text("\n".join(lines[:count]) + "\n")
    out.write_text("\n".join(lines[count : count + sealed]) + "\n")
    index.write_text("\n".join(lines[count : count + sealed + 40]) + "\n")
    return fit, index, out


def fit(tmp_path, *args):
    fit_on, index, sealed = papers(tmp_path)
    model = tmp_path / "model"
    result = run(
        "fit",
        "--taxonomy",
        str(AREAS),
        "--judged",
        str(fit_on),
        "--labels",
        "primary_area",
        "--papers",
        str(index),
        "--exclude",
        str(sealed),
        "--folds",
        "2",
        "-o",
        str(model),
        "-w",
        "1",
        *args,
    )
    return result, model, sealed


def test_a_model_fitted_to_an_own_taxonomy_is_measured_written_and_used(tmp_path):
    report = tmp_path / "fit.md"
    result, model, sealed = fit(tmp_path, "--report", str(report))
    assert result.exit_code == 0, result.stderr
    record = json.loads((model / RECORD).read_text())
    assert record["fitted_on"]["papers"] == 90 and record["fitted_on"]["labels"] == "primary_area"
    assert record["fitted_on"]["excluded"] == ["sealed.jsonl"]
    assert set(record["files"]) >= {"weigher.json", "neighbours.npz", "neighbours-judged.npz"}
    held, text = record["held_out"], report.read_text()
    # the record's held-out figures are the report's
    assert f"| {held['tag_precision']:.3f} | {held['papers_with_a_wrong_tag']:.3f} |" in text
    assert "held out" in text and str(model) in result.stderr

    # what --exclude names reaches neither index; the judged papers reach only their own
    excluded = {abstract_key(json.loads(line)["abstract"]) for line in sealed.open()}
    index = NeighbourIndex.load(model / "neighbours.npz")
    judged = NeighbourIndex.load(model / "neighbours-judged.npz")
    assert len(index.keys) == 40 and not excluded & set(index.keys.tolist())
    assert len(judged.keys) == 90 and not excluded & set(judged.keys.tolist())

    tagged = run(
        "tag",
        str(EXAMPLES / "icml2025-abstracts.txt"),
        "--taxonomy",
        str(AREAS),
        "--model",
        str(model),
    )
    assert tagged.exit_code == 0, tagged.stderr
    records = [json.loads(line) for line in tagged.stdout.splitlines()]
    assert records and all(r["provenance"]["model"].startswith("fitted ") for r in records), (
        records[0]["provenance"]
    )
    assert "has no fitted model" not in tagged.stderr


def test_too_few_judged_papers_is_an_error_not_a_traceback(tmp_path):
    lines = (ROOT / "data" / "iclr2026-dev.jsonl").read_text().splitlines()
    few = tmp_path / "few.jsonl"
    few.write_text("\n".join(lines[: MIN_JUDGED - 1]) + "\n")
    result = run(
        "fit",
        "--taxonomy",
        str(AREAS),
        "--judged",
        str(few),
        "--labels",
        "primary_area",
        "-o",
        str(tmp_path / "model"),
    )
    assert result.exit_code == 1 and "\nError: few.jsonl: 29 judged papers" in result.stderr
    assert not (tmp_path / "model").exists()


@pytest.mark.parametrize("field", ["no_such_field", "title"])
def test_labels_that_are_no_area_are_an_error_naming_the_field(tmp_path, field):
    fit_on, _, _ = papers(tmp_path)
    result = run("fit", "--taxonomy", str(AREAS), "--judged", str(fit_on), "--labels", field)
    assert result.exit_code == 1, result.stderr
    assert "Error: " in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_fit_with_the_real_model_learns_the_labels(tmp_path, embedder):
    """The same fit as users run it (the real MiniLM and spaCy): held out (two folds of 45
    papers), the fitted tags name the authors' primary area of a third of the papers or more
    (one of 21 areas by chance: 0.05)."""
    result, model, _ = fit(tmp_path)
    assert result.exit_code == 0, result.stderr
    record = json.loads((model / RECORD).read_text())
    assert record["held_out"]["area_recall"] > 0.3, record["held_out"]


def folds_tagged_alike(tmp_path):
    """Fit on 90 labelled papers in two folds, write the first fold's model (every part fitted
    without its papers), tag its papers with it, and compare with what the fit reported."""
    fit_on, index, _ = papers(tmp_path)
    taxonomy = load_taxonomy(AREAS)
    config = TaggerConfig()
    done = fit_model(
        [fit_on],
        taxonomy=AREAS,
        labels="primary_area",
        index_paths=[index],
        folds=2,
        before=False,
        workers=1,
        log=lambda _: None,
    )
    fold = done.folds[0]
    where = tmp_path / "fold-model"
    save_model(where, fold.fitted.parts(), taxonomy=taxonomy, fitted_on={}, config=config)
    papers_held = [done.judged[i].paper for i in fold.test]
    tagger = Tagger(taxonomy, TaggerConfig(model=str(where)))
    tagged = tagger.tag_batch(papers_held)
    reported = cv.held_out([fold], taxonomy, config)
    assert len(tagged) == len(reported) == len(fold.test) > 10
    for by_tag, by_fit in zip(tagged, reported, strict=True):
        assert by_tag.paper == by_fit.paper
        assert by_tag.tags == by_fit.tags and by_tag.facets == by_fit.facets
    judgments = {item.paper.id: item.judgment for item in done.judged}
    measured = [evaluate_judged(r, taxonomy, judgments=judgments) for r in (tagged, reported)]
    assert render_judged(measured[0]) == render_judged(measured[1])
    return tagged


def test_a_folds_reported_tags_are_what_tag_writes_with_its_model(tmp_path):
    tagged = folds_tagged_alike(tmp_path)
    assert any(tag.neighbours for paper in tagged for tag in paper.tags)  # votes were read


@pytest.mark.slow
def test_a_folds_reported_tags_are_what_tag_writes_with_the_real_models(tmp_path, embedder):
    folds_tagged_alike(tmp_path)


def test_the_figures_before_a_fit_are_what_tag_writes_with_the_model_in_use(tmp_path):
    """The fit lists the papers it read as the model in use lists them, without reading them
    again: the same tags as `tagger tag` writes, at the threshold and with every candidate."""
    fit_on, _, _ = papers(tmp_path, count=40)
    done = fit_model([fit_on], taxonomy=AREAS, labels="primary_area", folds=2, workers=1)
    taxonomy = load_taxonomy(AREAS)
    judgments = {item.paper.id: item.judgment for item in done.judged}
    with Tagger.from_taxonomy(AREAS) as tagger:
        tagged = tagger.tag_batch([item.paper for item in done.judged])
    now = evaluate_judged(tagged, taxonomy, source="before", judgments=judgments)
    assert render_judged(now) == render_judged(done.before)
    with Tagger.from_taxonomy(AREAS, TaggerConfig(min_score=0.0)) as tagger:
        ranked = tagger.tag_batch([item.paper for item in done.judged])
    assert [(r.paper, r.tags, r.facets) for r in ranked] == [
        (r.paper, r.tags, r.facets) for r in done.before_ranked
    ]


def test_a_fit_says_which_areas_no_judgment_names(tmp_path):
    """Judgments made before an overlay added an area never name it: the fit says so, since
    it would learn that no paper is there."""
    fit_on, _, _ = papers(tmp_path, count=40)
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(
        f"extends: {AREAS}\nversion: x\nareas:\n  - id: rl.offline\n    name: Offline RL\n"
        "    parent: rl\n    aliases: [offline reinforcement learning]\n"
    )
    args = ["fit", "--judged", str(fit_on), "--labels", "primary_area", "--folds", "2", "-w", "1"]
    before = run(*args, "--taxonomy", str(AREAS))
    after = run(*args, "--taxonomy", str(overlay))
    assert before.exit_code == after.exit_code == 0, after.stderr
    unjudged = int(before.stderr.split("Note: ")[1].split(" area")[0])  # ICLR areas: few labels
    assert f"Note: {unjudged + 1} areas of {overlay}" in after.stderr
    assert "rl.offline" in after.stderr and "rl.offline" not in before.stderr


def test_folds_fitted_in_parallel_make_the_same_model(tmp_path):
    """Folds fitted two at a time, each in a process of its own, give the model and figures
    one process gives, byte for byte. (No --papers: two processes would read them with the
    real embedding model, the judged papers being read here with the test's.)"""
    fit_on, _, _ = papers(tmp_path, count=60)
    made = {}
    for workers in (1, 2):
        out = tmp_path / f"model-{workers}"
        done = fit_model(
            [fit_on],
            taxonomy=AREAS,
            labels="primary_area",
            folds=3,
            workers=workers,
            before=False,
            out=out,
        )
        files = sorted(p.name for p in out.iterdir() if p.name != RECORD)
        made[workers] = (
            {name: (out / name).read_bytes() for name in files},
            render_judged(done.held_out),
        )
    assert made[1] == made[2]
