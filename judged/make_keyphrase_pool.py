"""Build the pool of phrases to judge for the judged keyphrase set (see keyphrases.md).

    python judged/make_keyphrase_pool.py > /tmp/pool.jsonl     # run once, before any judging
    python judged/make_keyphrase_pool.py /tmp/round2.jsonl > /tmp/pool2.jsonl   # round 2

For the first 100 papers of judged/judged.jsonl (or, given a file of papers drawn by
draw_round2.py, those of its papers marked ``"keyphrases": true``): every noun chunk of title and
abstract (spaCy en_core_web_sm with its parser) without leading determiners, pronouns and numbers,
with every part of it that ends at its last word; every keyphrase candidate of the tagger it runs
with, and its top 10 (the first round's pool was built with 0.3.0: run this from a checkout of
f88cc43 to rebuild it; the second round's with 0.6.0); the top 5 of plain KeyBERT (1-3-grams) and
of YAKE (n=3). Phrases are merged by their
Porter-stemmed words (evaluate.stem_phrase); the first surface form seen is kept. Each output
line: {"id", "source", "title", "abstract", "pool": [phrase, ...]} (shuffled with a seed, so the
order says nothing about where a phrase came from).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAPERS = 100
SEED = 20261130


def main() -> int:
    import spacy

    from tagger import Paper, Tagger
    from tagger.config import DEFAULT_SPACY_MODEL
    from tagger.corpus.evaluate import keybert_keyphrases, stem_phrase, yake_keyphrases
    from tagger.language.candidates import candidates
    from tagger.language.keyphrases import surface
    from tagger.language.text import analyse, paper_text

    if len(sys.argv) > 1:
        lines = Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()
        drawn = [json.loads(line) for line in lines]
        records = [r for r in drawn if r.pop("keyphrases")]
    else:
        lines = (ROOT / "judged" / "judged.jsonl").read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines[:PAPERS]]
    parser = spacy.load(DEFAULT_SPACY_MODEL)  # en_core_web_sm 3.8.0, parser included
    tagger = Tagger.from_taxonomy()
    papers = [Paper(**{k: v for k, v in r.items() if k != "judged"}) for r in records]
    texts = [paper_text(p.title, p.abstract) for p in papers]
    tagged = list(tagger.tag_many(papers))
    keybert = keybert_keyphrases(texts, top_n=5, ngram_range=(1, 3))
    yake = yake_keyphrases(texts, top_n=5)
    rng = random.Random(SEED)
    for record, paper, text, result, kb, yk in zip(
        records, papers, texts, tagged, keybert, yake, strict=True
    ):
        pool: dict[str, str] = {}

        def add(phrase: str, pool: dict[str, str] = pool) -> None:
            phrase = " ".join(phrase.split())
            key = stem_phrase(phrase)
            if key and key not in pool:
                pool[key] = phrase

        for field in (paper.title, paper.abstract):
            if not field:
                continue
            for chunk in parser(field).noun_chunks:
                tokens = list(chunk)
                while tokens and (
                    tokens[0].pos_ in ("DET", "PRON", "NUM", "PUNCT", "CCONJ") or tokens[0].is_stop
                ):
                    tokens = tokens[1:]
                for start in range(len(tokens)):
                    part = tokens[start:]
                    if part[0].pos_ in ("PUNCT", "CCONJ", "ADP"):
                        continue
                    add(field[part[0].idx : part[-1].idx + len(part[-1].text)])
        analysis = analyse(tagger.reader.nlp(text), paper.title, paper.abstract)
        for candidate in candidates(analysis, max_words=tagger.config.max_words).values():
            add(surface(candidate, analysis))
        for phrase in [k.text for k in result.keyphrases[:10]] + kb + yk:
            add(phrase)
        phrases = list(pool.values())
        rng.shuffle(phrases)
        out = {
            "id": record["id"],
            "source": record["source"],
            "title": record["title"],
            "abstract": record["abstract"],
            "pool": phrases,
        }
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
