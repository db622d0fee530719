"""What `tagger fit` cannot learn from or measure itself on, it refuses in one line that says
what to add, before any work; what it must keep out of a fit (--exclude, a copy of a held-out
paper), it keeps out of every step; what it writes, it never writes over what it reads."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tagger.fitting import folds as cv
from tagger.fitting.fit import fit_model
from tagger.fitting.papers import JudgedPaper
from tagger.records import Paper
from tagger.tagging.model import RECORD
from tagger.tagging.neighbours import NeighbourIndex, abstract_key

from ..conftest import EXAMPLES, ROOT, error_line, run

AREAS = EXAMPLES / "iclr-areas.yaml"
DEV = (ROOT / "data" / "iclr2026-dev.jsonl").read_text().splitlines()


def lines(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def dev(count=40, start=0, **changes):
    """ICLR 2026 dev papers (each a group of its own: they name no source), changed."""
    return [json.loads(line) | changes for line in DEV[start : start + count]]


def fit_args(judged, *more):
    return ["fit", "--taxonomy", AREAS, "--judged", judged, "--labels", "primary_area",
            "--folds", "2", "-w", "1", *more]  # fmt: skip


def test_a_report_over_the_judged_file_is_refused_before_the_fit(tmp_path):
    judged = lines(tmp_path / "judged.jsonl", dev())
    before = judged.read_bytes()
    line = error_line(run(*fit_args(judged, "--report", judged)))
    assert line == (
        f"Error: --report {judged} is the input {judged}: writing it would destroy what is read "
        "or written there; choose another file"
    )
    assert judged.read_bytes() == before


@pytest.mark.parametrize("option", ["--report", "--curve"])
def test_no_output_of_a_fit_is_another_of_its_inputs(tmp_path, option):
    judged = lines(tmp_path / "judged.jsonl", dev())
    sealed = lines(tmp_path / "sealed.jsonl", dev(5, start=100))
    before = sealed.read_bytes()
    line = error_line(run(*fit_args(judged, "--exclude", sealed, option, sealed)))
    assert f"{option} {sealed} is the input {sealed}" in line
    assert sealed.read_bytes() == before


def test_judged_papers_in_exclude_reach_no_step_of_the_fit(tmp_path):
    """A sealed split whose papers are also in --judged: they are left out of the fit (said),
    its record says how many, and no index of the model holds them."""
    judged = lines(tmp_path / "judged.jsonl", dev(50))
    sealed = lines(tmp_path / "sealed.jsonl", dev(10, start=20))
    model = tmp_path / "model"
    result = run(*fit_args(judged, "--exclude", sealed, "-o", model))
    assert result.exit_code == 0, result.stderr
    assert "Note: 10 of the papers of judged.jsonl are in --exclude (sealed.jsonl)" in (
        result.stderr
    )
    record = json.loads((model / RECORD).read_text())
    assert record["fitted_on"]["papers"] == 40 and record["fitted_on"]["judged_excluded"] == 10
    held = {abstract_key(row["abstract"]) for row in dev(10, start=20)}
    fitted = NeighbourIndex.load(model / "neighbours-judged.npz").keys.tolist()
    assert len(fitted) == 40 and not held & set(fitted)


@pytest.mark.parametrize(
    ("second", "said"),
    [("cs.LG", "judged differently"), (None, "judged alike")],
)
def test_a_paper_id_twice_is_refused_with_both_places(tmp_path, second, said):
    rows = dev()
    twice = dict(rows[3])
    if second:
        twice["primary_area"] = "reinforcement learning"
    rows.insert(30, twice)
    judged = lines(tmp_path / "judged.jsonl", rows)
    line = error_line(run(*fit_args(judged)))
    assert line == (
        f"Error: judged.jsonl record 31: paper id {rows[3]['id']!r} comes again (first in "
        f"judged.jsonl record 4), {said}: a fit learns each paper once; keep one of them"
    )


def test_every_paper_of_one_label_is_refused(tmp_path):
    judged = lines(tmp_path / "judged.jsonl", dev(primary_area="reinforcement learning"))
    line = error_line(run(*fit_args(judged)))
    assert line.startswith(
        "Error: judged.jsonl: every judged paper is judged 'rl' alone: a fit "
        "learns to tell areas apart and needs judgments of at least 2 areas"
    ), line


def test_judged_papers_of_one_source_are_refused(tmp_path):
    """One review's judgments: every line names the review's source, one group, one fold."""
    judged = lines(tmp_path / "judged.jsonl", dev(source="icml2025-abstracts"))
    line = error_line(run(*fit_args(judged)))
    assert line.startswith(
        "Error: judged.jsonl: every judged paper is of one source ('icml2025-abstracts'): a fit "
        "measures itself on sources it never saw"
    ), line


@pytest.mark.parametrize("count", [1, 2])
def test_a_taxonomy_of_one_or_two_areas_is_refused(tmp_path, count):
    taxonomy = tmp_path / "small.yaml"
    areas = "".join(
        f"  - id: a{k}\n    name: Area {k}\n    aliases: [learning {k}]\n" for k in range(count)
    )
    taxonomy.write_text(f"version: '1'\nareas:\n{areas}")
    judged = lines(tmp_path / "judged.jsonl", dev(primary_area="a0"))
    line = error_line(run("fit", "--taxonomy", taxonomy, "--judged", judged, "--labels",
                          "primary_area", "-w", "1"))  # fmt: skip
    assert f"has {count} topic area" in line and "needs at least 3" in line, line


def test_a_curve_without_matplotlib_is_refused_before_the_fit(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    judged = lines(tmp_path / "judged.jsonl", dev())
    line = error_line(run(*fit_args(judged, "--curve", tmp_path / "c.png", "-o", tmp_path / "m")))
    assert "--curve draws with matplotlib, which is not installed" in line
    assert not (tmp_path / "m").exists()


def judged_paper(paper_id, source, abstract):
    from tagger.corpus.judged import Judgment

    paper = Paper(id=paper_id, abstract=abstract, source=source)
    return JudgedPaper(paper, Judgment(areas=("a",), main=("a",)), None, None)  # type: ignore[arg-type]


def test_copies_of_a_paper_in_two_groups_are_held_out_together():
    """The same paper judged in two files (two sources): wherever its copies sit, they are in
    one fold, and so is every paper of both their groups."""
    judged = [
        judged_paper("x1", "iclr2024", "A paper on graphs."),
        judged_paper("x2", "iclr2024", "Another on vision."),
        judged_paper("y1", "neurips2023", "A third on speech."),
        judged_paper("z1", "icml2025", "A fourth on robots."),
        judged_paper("copy", "icml2025", "A  paper on graphs."),  # x1, spaced otherwise
    ]
    assert cv.held_together(judged) == ["iclr2024", "iclr2024", "neurips2023"] + ["iclr2024"] * 2
    folds = cv.split(judged, 3)
    assert sorted(folds) == [[0, 1, 3, 4], [2]]


def test_before_figures_of_the_models_own_papers_are_said_in_sample(tmp_path):
    """Judged papers the packaged model was fitted on: its 'before' row is in sample."""
    own = (ROOT / "judged" / "judged.jsonl").read_text().splitlines()[::100][:36]
    judged = tmp_path / "own.jsonl"
    judged.write_text("\n".join(own) + "\n")
    done = fit_model([judged], folds=2, workers=1)
    assert done.before_label.endswith(
        "; in sample: 36 of the 36 judged papers are papers it was fitted on"
    ), done.before_label
    assert "in sample: 36 of the 36" in "\n".join(done.before_and_after())


def test_a_stopped_fit_says_what_became_of_its_model(tmp_path, monkeypatch):
    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("tagger.fitting.fit.fit_model", stopped)
    judged = lines(tmp_path / "judged.jsonl", dev())
    result = run(*fit_args(judged, "-o", tmp_path / "model"))
    assert result.exit_code == 130
    assert result.stderr.strip() == (
        "Interrupted. The fit stopped; a model directory given with -o holds a whole model: the "
        "one it held before, unless the new one was written already."
    )


def test_judged_papers_of_two_sources_are_fitted(tmp_path):
    """Two sources, two folds: each fold is fitted on one source, whose area model's inner
    folds cannot be of sources (one) and are of papers."""
    rows = [row | {"source": ("iclr2026/a", "iclr2026/b")[k % 2]} for k, row in enumerate(dev(80))]
    judged = lines(tmp_path / "judged.jsonl", rows)
    result = run(*fit_args(judged))
    assert result.exit_code == 0, result.stderr
    assert "| after, held out |" in result.stdout


@pytest.mark.parametrize("inside", ["model.json", "figures.md"])
def test_figures_inside_the_model_directory_are_refused(tmp_path, inside):
    """The fit replaces -o whole: a report there would be written over its model.json, or block
    the next refit into it."""
    judged = lines(tmp_path / "judged.jsonl", dev())
    model = tmp_path / "model"
    result = run(*fit_args(judged, "-o", model, "--report", model / inside))
    assert result.exit_code == 2, result.stderr
    assert f"--report {model / inside} lies inside -o {model}" in result.stderr
    assert not model.exists()


def test_no_output_of_a_fit_lies_inside_the_installed_package(tmp_path):
    import tagger

    weigher = Path(tagger.__file__).parent / "data" / "model" / "weigher.json"
    before = weigher.read_bytes()
    judged = lines(tmp_path / "judged.jsonl", dev())
    try:
        line = error_line(run(*fit_args(judged, "--report", weigher)))
    finally:  # were it written, the packaged model is put back for the other tests
        changed = weigher.read_bytes() != before
        if changed:
            weigher.write_bytes(before)
    assert "lies inside tagger's installed package" in line and not changed


def test_a_model_written_through_a_symlink_is_written_where_it_points(tmp_path):
    judged = lines(tmp_path / "judged.jsonl", dev())
    target, link = tmp_path / "target", tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    result = run(*fit_args(judged, "-o", link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and (target / RECORD).is_file()
    beside = sorted(p.name for p in tmp_path.iterdir())  # the fit's lock beside what it wrote
    assert beside == [".target.lock", "judged.jsonl", "link", "target"]


@pytest.mark.parametrize("option", ["--judged", "--exclude"])
def test_a_fifo_given_a_fit_is_refused_not_waited_on(tmp_path, option):
    fifo = tmp_path / "papers.fifo"
    os.mkfifo(fifo)
    judged = lines(tmp_path / "judged.jsonl", dev())
    args = fit_args(fifo) if option == "--judged" else fit_args(judged, "--exclude", fifo)
    line = error_line(run(*args))
    assert f"{option} {fifo} is not a file (a pipe, a FIFO or a device)" in line


def test_a_second_fit_into_the_same_directory_is_refused_at_once(tmp_path):
    """Two fits into one directory would replace each other's model: the second is refused
    while the first holds the directory's lock (io.files.lock_beside), before it reads a paper."""
    from tagger.io.files import lock_beside

    judged = lines(tmp_path / "judged.jsonl", dev())
    model = tmp_path / "model"
    held = lock_beside(model, held_by="another `tagger fit`")
    try:
        line = error_line(run(*fit_args(judged, "-o", model)))
    finally:
        held.close()
    assert line.startswith(f"Error: {model} is being written by another `tagger fit`"), line
    assert not model.exists()
