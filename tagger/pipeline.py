"""The Tagger: papers in, tagged papers out, streaming in batches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from importlib.metadata import PackageNotFoundError, version
from itertools import islice
from pathlib import Path

from .embedders import Embedder, make_embedder
from .keyphrases import KeyphraseExtractor
from .matching import RuleMatcher
from .records import Paper, Provenance, TaggedPaper
from .scoring import ScoringConfig, score_hits
from .taxonomy import Taxonomy, load_taxonomy
from .text import SPACY_MODEL, analyse, load_spacy, paper_text


def tagger_version() -> str:
    try:
        return version("tagger")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


class Tagger:
    """Extracts keyphrases and area tags.

    >>> tagger = Tagger.from_taxonomy("taxonomy.yaml")
    >>> tagged = tagger.tag(Paper(title="...", abstract="..."))
    >>> [tag.id for tag in tagged.tags]

    Models load on first use, not here.
    """

    def __init__(self, taxonomy: Taxonomy, *, embedder: Embedder | str = "all-MiniLM-L6-v2",
                 top_n: int = 10, diversity: float = 0.2,
                 max_words: int = 3, min_score: float = 0.25, max_tags: int = 10,
                 batch_size: int = 64, spacy_model: str = SPACY_MODEL) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"The 'batch_size' parameter of Tagger must be an int >= 1. Got {batch_size!r} instead.")
        self.taxonomy = taxonomy
        self.embedder = make_embedder(embedder) if isinstance(embedder, str) else embedder
        self.keyphrases = KeyphraseExtractor(self.embedder, top_n=top_n, diversity=diversity,
                                             max_words=max_words)
        self.scoring = ScoringConfig(min_score=min_score, max_tags=max_tags)
        self.batch_size = batch_size
        self.spacy_model = spacy_model
        self._workers = None  # (count, executor) once tag_many(workers > 1) has run

    @classmethod
    def from_taxonomy(cls, path: str | Path | None = None, **options) -> Tagger:
        """A Tagger for the taxonomy file at ``path`` (the shipped one if None)."""
        return cls(load_taxonomy(path), **options)

    @cached_property
    def nlp(self):
        return load_spacy(self.spacy_model)

    @cached_property
    def matcher(self) -> RuleMatcher:
        return RuleMatcher(self.taxonomy, spacy_model=self.spacy_model)

    @cached_property
    def provenance(self) -> Provenance:
        return Provenance(tagger_version=tagger_version(), taxonomy_version=self.taxonomy.version,
                          taxonomy_sha256=self.taxonomy.sha256, embedding_model=self.embedder.name,
                          spacy_model=f"{self.nlp.meta['lang']}_{self.nlp.meta['name']}-{self.nlp.meta['version']}")

    def tag(self, paper: Paper) -> TaggedPaper:
        """Tag one paper."""
        return self.tag_batch([paper])[0]

    def tag_many(self, papers: Iterable[Paper], *, workers: int = 1) -> Iterator[TaggedPaper]:
        """Tag papers lazily, ``batch_size`` at a time, in input order.

        With ``workers > 1``, batches are tagged in that many processes (each with one thread and
        its own models); results still come back in input order, identical to one worker's, and
        at most ``2 * workers`` batches are in flight, so memory stays flat on any input size.
        """
        if not isinstance(workers, int) or workers < 1:
            raise ValueError(f"The 'workers' parameter of Tagger.tag_many must be an int >= 1. Got {workers!r} instead.")
        batches = _batches(papers, self.batch_size)
        if workers == 1:
            for batch in batches:
                yield from self.tag_batch(batch)
            return
        from collections import deque

        pool = self._pool(workers)
        pending: deque = deque()
        for batch in batches:
            pending.append(pool.submit(_tag_in_worker, batch))
            if len(pending) >= 2 * workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()

    def _pool(self, workers: int):
        """Worker processes, started on first use and kept (models loaded) until close()."""
        if self._workers is not None and self._workers[0] != workers:
            self.close()
        if self._workers is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context("spawn")  # forking a process running torch can hang
            self._workers = (workers, ProcessPoolExecutor(workers, mp_context=context,
                                                          initializer=_start_worker,
                                                          initargs=(self,)))
        return self._workers[1]

    def close(self) -> None:
        """Stop worker processes, if any were started."""
        if self._workers is not None:
            self._workers[1].shutdown(cancel_futures=True)
            self._workers = None

    def __enter__(self) -> Tagger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict:
        """What a worker process needs: the options, not the loaded models (they reload there)."""
        state = dict(self.__dict__)
        for loaded in ("nlp", "matcher", "provenance"):
            state.pop(loaded, None)
        state["_workers"] = None
        return state

    def tag_batch(self, papers: list[Paper]) -> list[TaggedPaper]:
        """Tag a list of papers at once: one spaCy pass, one embedding call."""
        texts = [paper_text(p.title, p.abstract) for p in papers]
        analyses = [analyse(doc, p.title) for doc, p in zip(self.nlp.pipe(texts), papers)]
        keyphrases = self.keyphrases.extract(texts, analyses)
        results = []
        for paper, analysis, phrases in zip(papers, analyses, keyphrases):
            hits = self.matcher.match(analysis, phrases)
            tags = score_hits(hits, analysis, self.taxonomy, n_keyphrases=len(phrases),
                              config=self.scoring)
            results.append(TaggedPaper(paper=paper, keyphrases=phrases, tags=tags,
                                       provenance=self.provenance))
        return results


def _batches(papers: Iterable[Paper], size: int) -> Iterator[list[Paper]]:
    papers = iter(papers)
    while batch := list(islice(papers, size)):
        yield batch


_worker_tagger: Tagger | None = None


def _start_worker(tagger: Tagger) -> None:
    """Runs once in each worker process: one thread each, so workers do not fight for cores."""
    global _worker_tagger
    import signal

    import torch
    from threadpoolctl import threadpool_limits

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle

    torch.set_num_threads(1)
    threadpool_limits(1)
    _worker_tagger = tagger


def _tag_in_worker(batch: list[Paper]) -> list[TaggedPaper]:
    assert _worker_tagger is not None, "worker was not started with _start_worker"
    return _worker_tagger.tag_batch(batch)
