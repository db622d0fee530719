"""tag_files, the library run behind `tagger tag`: what a Python caller gets is what the command
line gets (rejected records reported, repeated ids warned of, resume, a summary), and the
workers it starts: one per core, no more than the cores, and none the memory cannot hold."""

from __future__ import annotations

import io
import json
import os
import warnings

import pytest

from tagger import RunSummary, Tagger, TaggerError, tag_files
from tagger.runs.local import RunWarning

from ..conftest import MINI, MINI_TAXONOMY, HashEmbedder, error_line, papers, run

PAPERS = (
    '{"id": "a", "abstract": "Reinforcement learning with policy gradient."}\n'
    '{"id": "b", "abstract": ""}\n'
    '{"id": "c", "abstract": "Graph neural networks (GNNs) for molecules."}\n'
    '{"id": "a", "abstract": "Multi-agent reinforcement learning (MARL) again."}\n'
)


@pytest.fixture
def fast_tagger():
    with Tagger.from_taxonomy(MINI_TAXONOMY) as tagger:  # the lane's embedder
        yield tagger


def test_a_run_from_python_reports_rejects_and_repeated_ids(fast_tagger, tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(PAPERS)
    out, errors = tmp_path / "out.jsonl", tmp_path / "errors.jsonl"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = tag_files(fast_tagger, [papers], out, errors=errors)
    assert summary == RunSummary(
        tagged=3, rejected=1, duplicates=1, output=str(out), errors=str(errors)
    )
    assert str(summary) == (
        f"tagged 3 papers to {out} (1 with an id seen before), 1 rejected: see {errors}"
    )
    assert [r["paper"]["id"] for r in map(json.loads, out.read_text().splitlines())] == [
        "a",
        "c",
        "a",
    ]
    assert [json.loads(line) for line in errors.read_text().splitlines()] == [
        {
            "source": str(papers),
            "line": 2,
            "record": None,
            "id": "b",
            "reason": "the abstract is empty",
        }
    ]
    assert [(w.category, str(w.message)) for w in caught] == [
        (RunWarning, f"skipped {papers} line 2: the abstract is empty"),
        (
            RunWarning,
            "paper id 'a' appears again; both records are tagged and kept, in input order",
        ),
    ]


def test_a_run_writes_to_a_stream_and_passes_warnings_to_a_callback(fast_tagger, tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(PAPERS)
    stream, said = io.BytesIO(), []
    summary = tag_files(fast_tagger, [papers], stream, warn=said.append)
    assert (summary.tagged, summary.output, len(said)) == (3, None, 2)
    assert stream.getvalue().count(b"\n") == 3
    with pytest.raises(ValueError, match="resume=True needs an output file"):
        tag_files(fast_tagger, [papers], io.BytesIO(), resume=True)


def test_resume_from_python_finishes_the_file_as_one_run_would(fast_tagger, tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(PAPERS)
    clean, partial = tmp_path / "clean.jsonl", tmp_path / "partial.jsonl"
    tag_files(fast_tagger, [papers], clean, warn=lambda message: None)
    lines = clean.read_bytes().splitlines(keepends=True)
    partial.write_bytes(lines[0] + lines[1][:40])  # one whole line and half of the next
    summary = tag_files(fast_tagger, [papers], partial, resume=True, warn=lambda message: None)
    assert (summary.resumed, summary.tagged) == (1, 2)
    assert partial.read_bytes() == clean.read_bytes()
    assert str(summary).startswith(f"tagged 2 papers to {partial} after the 1 already there")


def test_venue_and_year_are_given_to_the_papers_that_lack_them(fast_tagger, tmp_path):
    papers = tmp_path / "papers.txt"
    papers.write_text("Graph neural networks for molecules.\n\nPolicy gradients for robots.\n")
    stream = io.BytesIO()
    tag_files(fast_tagger, [papers], stream, venue="CoRL", year=2024)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["paper"]["venue"], r["paper"]["year"]) for r in lines] == [("CoRL", 2024)] * 2
    with pytest.raises(ValueError, match="The 'year' parameter must be an int from 1900"):
        tag_files(fast_tagger, [papers], io.BytesIO(), year=24)


def _complete_run(tagger, tmp_path, lines):
    """Papers and this configuration's complete output of them, ``lines`` long: the lines of a
    real run over a few papers, repeated with new ids (a resume needs no model for them)."""
    from tagger.io.jsonl import dumps

    few = tmp_path / "few.jsonl"
    few.write_text(PAPERS.replace('"a", "abstract": "Multi', '"d", "abstract": "Multi'))
    tagged = tmp_path / "few-tagged.jsonl"
    tag_files(tagger, [few], tagged, warn=lambda message: None)
    records = [json.loads(line) for line in tagged.read_text().splitlines()]
    papers, out = tmp_path / f"papers-{lines}.jsonl", tmp_path / f"out-{lines}.jsonl"
    with papers.open("w") as inputs, out.open("wb") as output:
        for k in range(lines):
            record = records[k % len(records)]
            record["paper"]["id"] = f"q{k}"
            inputs.write(json.dumps({"id": f"q{k}", "abstract": record["paper"]["abstract"]}))
            inputs.write("\n")
            output.write(dumps(record))
    return papers, out


def test_resume_over_a_complete_output_keeps_no_line_in_memory(fast_tagger, tmp_path):
    """`tag --resume` reads the output in step with the inputs and holds no kept line in
    memory (held, they took 296 MB at 5,000 lines and 982 MB at 50,000): the peak does not grow
    with the lines kept."""
    import tracemalloc

    peaks = {}
    for lines in (100, 2000):
        papers, out = _complete_run(fast_tagger, tmp_path, lines)
        before = out.read_bytes()
        tracemalloc.start()
        summary = tag_files(fast_tagger, [papers], out, resume=True)
        peaks[lines] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (summary.resumed, summary.tagged) == (lines, 0)
        assert out.read_bytes() == before
    assert len(before) > 2 * 2**20  # 2,000 lines of over a KB each: held, they would show
    assert peaks[2000] < peaks[100] + 2**20, peaks


def test_a_missing_input_fails_before_the_models_load(tmp_path):
    tagger = Tagger.from_taxonomy(MINI_TAXONOMY)
    with pytest.raises(TaggerError, match="nope.jsonl: no such file"):
        tag_files(tagger, [tmp_path / "nope.jsonl"], tmp_path / "out.jsonl")
    assert "embedder" not in vars(tagger) and "nlp" not in vars(tagger)
    assert not (tmp_path / "out.jsonl").exists()


def test_an_output_that_cannot_be_opened_is_a_clear_error(fast_tagger, tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(PAPERS)
    with pytest.raises(TaggerError, match="cannot write .*/no/such/dir/out.jsonl: No such file"):
        tag_files(fast_tagger, [papers], tmp_path / "no" / "such" / "dir" / "out.jsonl")


def test_a_run_from_python_takes_the_commands_workers_but_an_embedder_object_stays_here(
    fast_tagger, tmp_path, monkeypatch
):
    """tag_files starts one worker per core by default, as `tagger tag` does (config.TAG_WORKERS);
    a Tagger given an embedder object, which workers cannot have, tags in this process."""
    import tagger.runs.local

    monkeypatch.setattr(tagger.runs.local, "usable_cores", lambda: 4)
    papers = tmp_path / "papers.jsonl"
    papers.write_text(PAPERS)
    asked = []

    def counted(tag_many):
        def tag_many_counted(papers, *, workers):
            asked.append(workers)
            return tag_many(papers)  # here: three papers are one batch, whatever the workers

        return tag_many_counted

    for each in (fast_tagger, Tagger.from_taxonomy(MINI_TAXONOMY, embedder=HashEmbedder())):
        monkeypatch.setattr(each, "tag_many", counted(each.tag_many))
        summary = tag_files(each, [papers], tmp_path / "out.jsonl", warn=lambda message: None)
        assert summary.tagged == 3
    assert asked == [4, 1]


def test_more_workers_than_cores_are_capped_and_too_many_for_memory_refused(tmp_path, monkeypatch):
    import tagger.tagging.workers

    cores = len(os.sched_getaffinity(0))
    petabyte = dict.fromkeys(tagger.tagging.workers.WORKER_MEMORY, 2**50)
    monkeypatch.setattr(tagger.tagging.workers, "WORKER_MEMORY", petabyte)  # each
    # two batches: input that fits in one is tagged without workers
    result = run("tag", papers(tmp_path / "p.jsonl"), "--workers", "64", "--batch-size", "1", *MINI)
    assert result.stderr.splitlines()[0] == (
        f"Warning: 64 workers asked for, but tagger may use {cores} cores here: using {cores}"
    )
    if cores > 1:
        assert "workers need about" in error_line(result) and "use fewer workers" in result.stderr
