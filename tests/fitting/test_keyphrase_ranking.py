"""The readers' keyphrase ranking fitted by `python -m tagger.fitting.keyphrase_ranking`, on a
few judged papers and listed papers of the repository's data, with the real model and spaCy."""

from __future__ import annotations

import json
import shutil

import pytest

from tagger.config import TaggerConfig
from tagger.io import packaged
from tagger.language.keyphrases import AcceptanceModel, KeyphraseExtractor
from tagger.language.text import analyse, paper_text

from ..conftest import ROOT

pytestmark = pytest.mark.models


def _lines(path, keep):
    return [line for line in path.read_text(encoding="utf-8").splitlines() if keep(line)]


def test_the_ranking_is_measured_held_out_and_written_beside_the_acceptance_model(
    tmp_path, monkeypatch, capsys, embedder, nlp
):
    import tagger.fitting.keyphrase_ranking as fitting

    by_source: dict[str, list[str]] = {}
    for line in _lines(ROOT / "judged" / "keyphrases3" / "judged.jsonl", bool):
        by_source.setdefault(json.loads(line)["source"], []).append(line)
    judged = tmp_path / "judged.jsonl"
    judged.write_text("\n".join(sum((by_source[s][:8] for s in sorted(by_source)[:3]), [])) + "\n")
    listed = tmp_path / "listed.jsonl"
    listed.write_text("\n".join(_lines(ROOT / "data" / "iclr2025-keywords.jsonl", bool)[:120]))
    dev = tmp_path / "dev.jsonl"
    dev.write_text("\n".join(_lines(ROOT / "data" / "iclr2026-dev.jsonl", bool)[:12]) + "\n")
    model = tmp_path / "keyphrases.json"
    shutil.copy(packaged.data_dir("keyphrases.json"), model)
    monkeypatch.setattr(fitting, "LISTED", (listed,))
    monkeypatch.setattr(fitting, "DEV", dev)
    report = tmp_path / "ranking.md"
    assert (
        fitting.main(["--judged", str(judged), "--out", str(model), "--report", str(report)]) == 0
    )
    text = report.read_text(encoding="utf-8")
    assert "each source held out in turn: the first 5 keyphrases of 24 judged papers" in text
    assert "| 0.11.0's model |" in text and "| the readers' ranking |" in text
    fitted = AcceptanceModel.load(model)
    assert fitted.accept == AcceptanceModel.load().accept  # the acceptance model is kept
    assert fitted.ranking is not None and fitted.ranking != AcceptanceModel.load().ranking
    drawn = {json.loads(line)["id"] for line in _lines(fitting.DRAWN, bool)}
    read = [json.loads(line) for line in listed.read_text().splitlines()]
    unread = [p for p in read if p.get("keywords") and p["id"] not in drawn]
    assert len(fitted.about["ranking"]["listed_keys"]) == len(unread) > 0
    extractor = KeyphraseExtractor(embedder, TaggerConfig(keyphrase_model=str(model)))
    paper = json.loads(_lines(dev, bool)[0])
    text = paper_text(paper["title"], paper["abstract"])
    [listed_of] = extractor.extract([text], [analyse(nlp(text), paper["title"], paper["abstract"])])
    keys = [k.normalized for k in listed_of]
    assert keys and not any(a != b and f" {a} " in f" {b} " for a in keys for b in keys)
