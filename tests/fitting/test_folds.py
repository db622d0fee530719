"""A held-out group reaches no part of the fit that measures it (fitting.folds), and the papers
neighbours are found among are each read once, none of those skipped (fitting.papers)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tagger.config import TaggerConfig
from tagger.fitting import folds
from tagger.fitting.papers import group_of, read_index_papers
from tagger.records import Paper
from tagger.tagging.neighbours import abstract_key

from ..conftest import ABSTRACTS, MINI_TAXONOMY


def judged(groups: dict[str, int]) -> list[SimpleNamespace]:
    """Stand-ins for fitting.papers.JudgedPaper: a group and a paper id are all a split reads."""
    return [
        SimpleNamespace(
            group=group,
            paper=SimpleNamespace(id=f"{group}-{k}", abstract=f"Paper {k} of {group}."),
            rules=SimpleNamespace(candidates=[]),
        )
        for group, size in groups.items()
        for k in range(size)
    ]


SIZES = {"iclr2021": 7, "icml2022": 5, "neurips2020": 4, "paper list": 3, "paper 17": 1}


@pytest.mark.parametrize("count", [2, 3, 5, 9])
def test_folds_hold_whole_groups_each_paper_once_the_same_every_time(count):
    papers = judged(SIZES)
    split = folds.split(papers, count)
    assert len(split) == min(count, len(SIZES))
    assert sorted(i for fold in split for i in fold) == list(range(len(papers)))
    owner = {papers[i].group: k for k, fold in enumerate(split) for i in fold}
    assert all(owner[papers[i].group] == k for k, fold in enumerate(split) for i in fold)
    assert split == folds.split(papers, count)  # the same every time
    # and the same groups together whatever order the papers come in
    reordered = list(reversed(papers))
    together = {frozenset(papers[i].group for i in fold) for fold in split}
    assert {
        frozenset(reordered[i].group for i in fold) for fold in folds.split(reordered, count)
    } == together


def test_a_held_out_group_reaches_no_part_of_its_fit(monkeypatch):
    """Every step of fit_stages (both stages of the weigher, the judged-paper index, the area
    model and the candidates the second stage is fitted on) sees the training papers alone;
    the held-out papers are only proposed and weighed, by what the others made."""
    papers = judged(SIZES)
    seen: list[tuple[str, set[str]]] = []

    def spy(step, result=...):
        def record(items, *args, **kwargs):
            seen.append((step, {item.paper.id for item in items}))
            return SimpleNamespace(step=step) if result is ... else result

        return record

    monkeypatch.setattr(folds, "fit_weigher", spy("weigher"))
    monkeypatch.setattr(folds, "judged_index_of", spy("judged index"))
    monkeypatch.setattr(folds, "second_stage", spy("second stage", result=[]))
    monkeypatch.setattr(folds.area_fit, "fit_blocks", spy("area model", result=None))
    monkeypatch.setattr(folds, "index_of", lambda *a, **k: SimpleNamespace(step="index"))
    calibrated: list[set[str]] = []

    def pairs(items, proposals, weigher, taxonomy):  # calibration reads a fold's own papers
        assert weigher.step == "weigher"
        calibrated.append({item.paper.id for item in items})
        return np.empty((0, 2))

    monkeypatch.setattr(folds.calibration, "pairs_of", pairs)
    done = folds.cross_validate(
        papers,
        [object()],
        None,
        folds.Settings(),
        TaggerConfig(),
        about={},
        folds=3,
        log=lambda _: None,
        workers=1,
    )
    assert len(done) == 3
    steps = iter(seen)
    for fold in done:
        held = {papers[i].paper.id for i in fold.test}
        train = {p.paper.id for p in papers} - held
        assert {papers[i].group for i in fold.test} == set(fold.groups)
        made = [next(steps) for _ in range(5)]  # first stage, index, area model, second, weigher
        assert [step for step, _ in made] == [
            "weigher",
            "judged index",
            "area model",
            "second stage",
            "weigher",
        ]
        assert all(ids == train for _, ids in made), made
        assert next(steps) == ("second stage", held)  # the held-out papers, proposed
    assert next(steps, None) is None
    # each fold's verdicts are read once, scored by its own weigher; a fold is calibrated by
    # the others' (calibration.cross_fitted, tests/fitting/test_calibration.py)
    assert calibrated == [{papers[i].paper.id for i in fold.test} for fold in done]


def test_index_papers_are_read_once_each_none_that_is_skipped():
    """The papers neighbours are found among: an abstract given twice is read once, and one
    whose key is skipped (a judged or sealed paper) is not read at all."""
    papers = [Paper(id=f"p{k}", abstract=text) for k, text in enumerate(ABSTRACTS)]
    doubled = papers + [Paper(id="again", title="Title", abstract=f"  {ABSTRACTS[0]} ")]
    import json
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / "papers.jsonl"
        path.write_text(
            "".join(json.dumps(p.model_dump(exclude_none=True)) + "\n" for p in doubled)
        )
        skip = frozenset({abstract_key(ABSTRACTS[1])})
        found = read_index_papers([path], TaggerConfig(), taxonomy=str(MINI_TAXONOMY), skip=skip)
    assert [p.id for p in found] == ["p0", "p2"]
    assert all(p.source == "papers.jsonl" and p.vector and p.topics for p in found)


def test_a_paper_is_held_out_with_its_venue_and_year():
    assert group_of(Paper(id="a", abstract="x", source="corpus/icml2021/untitled")) == (
        "corpus/icml2021"
    )
    assert group_of(Paper(id="a", abstract="x")) == "paper a"
