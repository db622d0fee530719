"""The word and phrase specificity table that keyphrase ranking reads (specificity.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tagger.language.specificity import Specificity, build, main, words_of

ROOT = Path(__file__).resolve().parents[2]


def _records():
    return [
        {"title": "Bandits", "abstract": "Learning with bandit feedback.", "keywords": ["bandits"]},
        {"title": "Graphs", "abstract": "Learning on graph neural networks.", "keywords": []},
        {
            "title": "More graphs",
            "abstract": "Extensive experiments on graph neural networks.",
            "keywords": ["Graph Neural Networks", "learning"],
        },
        {
            "title": "Vision",
            "abstract": "Learning from images in extensive experiments.",
            "keywords": [],
        },
        {"title": "Audio", "abstract": "Extensive experiments on audio.", "keywords": ["audio"]},
    ]


def test_words_are_normalised_as_keyphrase_keys_are():
    assert words_of("Multi-agent **Graph** Neural Networks") == [
        "multi", "agent", "graph", "neural", "network",
    ]  # fmt: skip


def test_common_words_are_less_specific_and_keywords_more_key():
    table = build(_records(), about={})
    assert table.papers == 5
    assert table.idf("learning") < table.idf("graph") < table.idf("never-seen")
    assert table.idf("never-seen") == 1.0
    assert table.phrases["graph neural network"] == (2, 1)
    assert table.keyness("graph neural network") > table.keyness("extensive experiment")
    assert table.opener("graph") > table.opener("extensive")
    assert table.keyness("a phrase nobody wrote") == 0.0


def test_the_command_writes_a_table_without_the_excluded_papers(tmp_path):
    corpus, skip, out = tmp_path / "c.jsonl", tmp_path / "skip.jsonl", tmp_path / "t.json"
    records = [dict(r, id=f"p{i}") for i, r in enumerate(_records())]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    skip.write_text(json.dumps({"id": "p2"}) + "\n", encoding="utf-8")
    assert main([str(corpus), "--exclude", str(skip), "-o", str(out)]) == 0
    table = Specificity.load(out)
    assert table.papers == 4 and table.about["excluded"] == 1
    assert table.phrases.get("graph neural network", (0, 0))[1] == 0  # p2's keywords are gone


def test_the_shipped_table_is_built_from_iclr_2024_without_the_judged_papers():
    """Nor the sealed ones: no fit sees them."""
    table = Specificity.load()
    assert table.about["corpus"] == "iclr2024-topics.jsonl"
    judged_ids = {
        json.loads(line)["id"]
        for name in ("judged.jsonl", "sealed.jsonl")
        for line in (ROOT / "judged" / name).read_text().splitlines()
    }
    corpus = (ROOT / "data" / "iclr2024-topics.jsonl").read_text().splitlines()
    from_2024 = sum(json.loads(line)["id"] in judged_ids for line in corpus)
    assert table.about["excluded"] == from_2024 > 100  # with titles and without, and thin ones
    assert table.idf("learning") < 0.2 < table.idf("bandit")
    assert table.keyness("large language model") > 0 > table.keyness("extensive experiment")
