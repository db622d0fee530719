"""The table of where names start (names.py): what it counts, and the shipped one's provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tagger.errors import TaggerError
from tagger.io.files import sha256
from tagger.language.names import MIN_PAPERS, Names, build, clauses, main

ROOT = Path(__file__).resolve().parents[2]


def _records(n: int = MIN_PAPERS) -> list[dict]:
    named = [{"abstract": "We sample with Markov chain Monte Carlo."} for _ in range(n)]
    loose = [
        {"abstract": "Offline reinforcement learning."},
        {"abstract": "Deep reinforcement learning."},
        {"abstract": "Reinforcement learning, at scale."},
        {"abstract": "Safe reinforcement learning."},
        {"title": "Reinforcement learning", "abstract": "Multi-agent reinforcement learning."},
    ]
    return named + loose


def test_a_phrase_nearly_always_written_after_one_word_keeps_it():
    names = build(_records(), about={}).before
    assert names["chain monte"] == "markov" and names["chain"] == "markov"
    assert names["monte carlo"] == "chain"
    assert "reinforcement learning" not in names  # after five words, none most of the time
    assert names["learning"] == "reinforcement"


def test_a_phrase_too_few_papers_write_says_nothing():
    assert "chain monte" not in build(_records(MIN_PAPERS - 1), about={}).before


def test_words_are_counted_within_a_clause_never_across_punctuation():
    assert clauses("Deep models, Markov chains (MCMC). Done") == [
        ["deep", "model"], ["markov", "chain"], ["mcmc"], ["done"],
    ]  # fmt: skip
    records = [{"abstract": f"We study {x}, chain Monte Carlo."} for x in "abcdefg"]
    assert "chain monte" not in build(records, about={}).before


def test_a_name_starts_at_the_word_before_its_first_word_or_its_first_two():
    names = Names(before={"chain monte": "markov", "vector": "support"}, about={})
    assert names.start(["chain", "monte", "carlo"], "markov")
    assert not names.start(["chain", "monte", "carlo"], "a")
    assert names.start(["vector", "machine"], "support")  # "vector machine" itself is rare
    assert not names.start(["machine"], "vector")


def test_the_table_round_trips_and_a_broken_one_is_a_user_error(tmp_path):
    table = build(_records(), about={"corpus": "test"})
    table.save(tmp_path / "names.json")
    again = Names.load(tmp_path / "names.json")
    assert again.before == table.before and again.about == table.about
    (tmp_path / "broken.json").write_text('{"before": {"a": 1}, "about": {}}', encoding="utf-8")
    with pytest.raises(TaggerError, match="names table"):
        Names.load(tmp_path / "broken.json")


def test_the_command_leaves_out_the_papers_it_is_told_to(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    records = [dict(r, id=str(n)) for n, r in enumerate(_records())]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    skip = tmp_path / "skip.jsonl"
    skip.write_text(json.dumps({"id": "0"}) + "\n", encoding="utf-8")
    out = tmp_path / "names.json"
    assert main([str(corpus), "--exclude", str(skip), "-o", str(out)]) == 0
    table = Names.load(out)
    assert table.about["papers"] == len(records) - 1 and table.about["papers_excluded"] == 1
    assert "chain monte" not in table.before  # one of its five papers left out
    assert table.about["excluded"] == {skip.as_posix(): sha256(skip)}


def test_the_shipped_table_never_counted_a_paper_a_keyphrase_figure_is_measured_on():
    """Built leaving out the judged keyphrase papers (sealed ones too), ICLR 2026 dev and the
    sealed area papers, as they are now: a table built before one of them changed fails."""
    about = Names.load().about
    for path in ("judged/keyphrases3/draw.jsonl", "data/iclr2026-dev.jsonl", "judged/sealed.jsonl"):
        assert about["excluded"].get(path) == sha256(ROOT / path), path
    for name, digest in about["corpus"].items():
        assert sha256(ROOT / "data" / name) == digest, name
    assert about["papers"] + about["papers_excluded"] == sum(
        sum(1 for line in (ROOT / "data" / name).open(encoding="utf-8") if line.strip())
        for name in about["corpus"]
    )
