"""The Tagger: papers in, tagged papers out, streaming in batches."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from functools import cached_property
from importlib.metadata import PackageNotFoundError, version
from itertools import islice
from pathlib import Path

from . import embedders
from .config import TaggerConfig
from .keyphrases import KeyphraseExtractor
from .matching import RuleSet
from .records import Paper, Provenance, TaggedPaper
from .scoring import score_hits
from .taxonomy import Taxonomy, load_taxonomy
from .text import analyse, load_spacy, paper_text


def tagger_version() -> str:
    try:
        return version("tagger")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


class Tagger:
    """Extracts keyphrases and area tags.

    >>> tagger = Tagger.from_taxonomy("taxonomy.yaml", TaggerConfig(min_score=0.3))
    >>> tagged = tagger.tag(Paper(title="...", abstract="..."))
    >>> [tag.id for tag in tagged.tags]

    ``embedder`` replaces the model named by ``config.embedding_model`` with your own (anything
    with ``embed(texts)`` and a ``name``). Models load on first use, not here.
    """

    def __init__(
        self,
        taxonomy: Taxonomy,
        config: TaggerConfig | None = None,
        *,
        embedder: embedders.Embedder | None = None,
    ) -> None:
        self.taxonomy = taxonomy
        self.config = config if config is not None else TaggerConfig()
        self._own_embedder = embedder
        self._workers: tuple[int, object] | None = None  # (count, executor) once started

    @classmethod
    def from_taxonomy(
        cls,
        path: str | Path | None = None,
        config: TaggerConfig | None = None,
        *,
        embedder: embedders.Embedder | None = None,
    ) -> Tagger:
        """A Tagger for the taxonomy file at ``path`` (the shipped one if None)."""
        return cls(load_taxonomy(path), config, embedder=embedder)

    @cached_property
    def embedder(self) -> embedders.Embedder:
        return self._own_embedder or embedders.make_embedder(self.config.embedding_model)

    @cached_property
    def nlp(self):
        return load_spacy(self.config.spacy_model)

    @cached_property
    def rules(self) -> RuleSet:
        return RuleSet(self.taxonomy, spacy_model=self.config.spacy_model)

    @cached_property
    def keyphrases(self) -> KeyphraseExtractor:
        return KeyphraseExtractor(self.embedder, self.config)

    @cached_property
    def provenance(self) -> Provenance:
        meta = self.nlp.meta
        return Provenance(
            tagger_version=tagger_version(),
            taxonomy_version=self.taxonomy.version,
            taxonomy_sha256=self.taxonomy.sha256,
            embedding_model=self.embedder.name,
            spacy_model=f"{meta['lang']}_{meta['name']}-{meta['version']}",
        )

    def tag(self, paper: Paper) -> TaggedPaper:
        """Tag one paper."""
        return self.tag_batch([paper])[0]

    def tag_many(self, papers: Iterable[Paper], *, workers: int = 1) -> Iterator[TaggedPaper]:
        """Tag papers lazily, ``config.batch_size`` at a time, in input order.

        With ``workers > 1``, batches are tagged in that many processes, each started from the
        taxonomy and the configuration (never from this object's loaded models) with one thread;
        results still come back in input order, identical to one worker's, and at most
        ``2 * workers`` batches are in flight, so memory stays flat on any input size.
        """
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(
                "The 'workers' parameter of Tagger.tag_many must be an int >= 1. "
                f"Got {workers!r} instead."
            )
        batches = _batches(papers, self.config.batch_size)
        if workers == 1:
            for batch in batches:
                yield from self.tag_batch(batch)
            return
        pool = self._pool(workers)
        pending: deque = deque()
        for batch in batches:
            pending.append(pool.submit(_tag_in_worker, batch))
            if len(pending) >= 2 * workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()

    def tag_batch(self, papers: list[Paper]) -> list[TaggedPaper]:
        """Tag a list of papers at once: one spaCy pass, one embedding call."""
        texts = [paper_text(p.title, p.abstract) for p in papers]
        analyses = [
            analyse(doc, p.title) for doc, p in zip(self.nlp.pipe(texts), papers, strict=True)
        ]
        keyphrases = self.keyphrases.extract(texts, analyses)
        results = []
        for paper, analysis, phrases in zip(papers, analyses, keyphrases, strict=True):
            hits = self.rules.match(analysis, phrases)
            tags = score_hits(
                hits, analysis, self.taxonomy, n_keyphrases=len(phrases), config=self.config
            )
            results.append(
                TaggedPaper(paper=paper, keyphrases=phrases, tags=tags, provenance=self.provenance)
            )
        return results

    def _pool(self, workers: int):
        """Worker processes, started on first use and kept (models loaded) until close()."""
        if self._own_embedder is not None:
            raise ValueError(
                "Tagger.tag_many(workers > 1) starts each worker from the "
                "configuration, so it cannot use an embedder object passed to the "
                "Tagger; use workers=1, or name the model in "
                "TaggerConfig.embedding_model"
            )
        if self._workers is not None and self._workers[0] != workers:
            self.close()
        if self._workers is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context(
                "spawn"
            )  # forking a process running torch can hang
            pool = ProcessPoolExecutor(
                workers,
                mp_context=context,
                initializer=_start_worker,
                initargs=(self.taxonomy, self.config),
            )
            self._workers = (workers, pool)
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


def _batches(papers: Iterable[Paper], size: int) -> Iterator[list[Paper]]:
    papers = iter(papers)
    while batch := list(islice(papers, size)):
        yield batch


_worker_tagger: Tagger | None = None


def _start_worker(taxonomy: Taxonomy, config: TaggerConfig) -> None:
    """Runs once in each worker process: one thread each, so workers do not fight for cores."""
    global _worker_tagger
    import signal

    import torch
    from threadpoolctl import threadpool_limits

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle

    torch.set_num_threads(1)
    threadpool_limits(1)
    _worker_tagger = Tagger(taxonomy, config)


def _tag_in_worker(batch: list[Paper]) -> list[TaggedPaper]:
    assert _worker_tagger is not None, "worker was not started with _start_worker"
    return _worker_tagger.tag_batch(batch)
