"""The Tagger: papers in, tagged papers out, streaming in batches."""

from __future__ import annotations

import contextlib
import os
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from importlib.metadata import PackageNotFoundError, version
from itertools import chain, islice
from pathlib import Path

import numpy as np

from . import embedders
from .config import TaggerConfig
from .errors import TaggerError
from .keyphrases import KeyphraseExtractor
from .matching import RuleSet
from .records import AreaTag, Keyphrase, Paper, Provenance, TaggedPaper
from .scoring import Candidate, by_facet, propose, score_hits
from .taxonomy import Area, Taxonomy, load_taxonomy
from .text import Analysis, analyse, load_spacy, paper_text, spacy_model_version
from .weighing import Weigher


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
        self._worker_timeouts: Counter[tuple[str, str]] = Counter()

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
        return self._own_embedder or embedders.make_embedder(
            self.config.embedding_model, self.config.embedding_backend
        )

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
    def weigher(self) -> Weigher:
        return Weigher.load(self.config.weigher or None)

    @cached_property
    def area_vectors(self) -> np.ndarray:
        """One unit row per area of the taxonomy: the embedding of what the area is about (kept
        on disk for the shipped model: embedders.lasting_embed)."""
        texts = [_prototype(area) for area in self.taxonomy.areas]
        known = embedders.fingerprint(self.embedder)
        if known is None:
            return _unit(self.embedder.embed(texts))
        return _unit(embedders.lasting_embed(self.embedder, texts, fingerprint=known))

    @cached_property
    def provenance(self) -> Provenance:
        return Provenance(
            tagger_version=tagger_version(),
            taxonomy_version=self.taxonomy.version,
            taxonomy_sha256=self.taxonomy.sha256,
            embedding_model=self.embedder.name,
            spacy_model=spacy_model_version(self.config.spacy_model),
            settings=self.config.output_settings(),
        )

    @property
    def pattern_timeouts(self) -> Counter[tuple[str, str]]:
        """(area, pattern) -> how many papers the pattern was skipped for, having run over its
        time limit, in this process and its workers."""
        rules = self.__dict__.get("rules")
        return self._worker_timeouts + (rules.timeouts if rules else Counter())

    def tag(self, paper: Paper) -> TaggedPaper:
        """Tag one paper."""
        return self.tag_batch([paper])[0]

    def tag_many(self, papers: Iterable[Paper], *, workers: int = 1) -> Iterator[TaggedPaper]:
        """Tag papers lazily, ``config.batch_size`` at a time, in input order.

        With ``workers > 1``, batches are tagged in that many processes, each started from the
        taxonomy and the configuration (never from this object's loaded models) with one thread;
        results still come back in input order, identical to one worker's, and at most
        ``2 * workers`` batches are in flight, so memory stays flat on any input size. Papers
        that fit in one batch are tagged here: starting workers would take longer.
        """
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(
                "The 'workers' parameter of Tagger.tag_many must be an int >= 1. "
                f"Got {workers!r} instead."
            )
        if workers > 1 and self._own_embedder is not None:
            raise ValueError(
                "Tagger.tag_many(workers > 1) starts each worker from the "
                "configuration, so it cannot use an embedder object passed to the "
                "Tagger; use workers=1, or name the model in "
                "TaggerConfig.embedding_model"
            )
        batches = _batches(papers, self.config.batch_size)
        if workers > 1 and self._workers is None:
            first = list(islice(batches, 2))
            if len(first) < 2:  # one batch: starting workers would cost more than it saves
                workers = 1
            batches = chain(first, batches)
        if workers == 1:
            for batch in batches:
                yield from self.tag_batch(batch)
            return
        pool = self._pool(workers)
        pending: deque = deque()

        def next_results() -> list[TaggedPaper]:
            results, timeouts = pending.popleft().result()
            self._worker_timeouts.update(timeouts)
            return results

        for batch in batches:
            pending.append(pool.submit(_tag_in_worker, batch))
            if len(pending) >= 2 * workers:
                yield from next_results()
        while pending:
            yield from next_results()

    def tag_batch(self, papers: list[Paper]) -> list[TaggedPaper]:
        """Tag a list of papers at once: one spaCy pass, one embedding call."""
        results = []
        for paper, read in zip(papers, self._read(papers), strict=True):
            tags, facets = read.tags()
            results.append(
                TaggedPaper(
                    paper=paper,
                    keyphrases=read.keyphrases,
                    tags=tags,
                    facets=facets,
                    provenance=self.provenance,
                )
            )
        return results

    def candidates(self, papers: list[Paper]) -> list[list[Candidate]]:
        """Every candidate area of each paper, with the features the weigher reads (what
        ``python -m tagger.calibrate`` fits the weigher to)."""
        return [read.candidates() for read in self._read(papers)]

    def extract_keyphrases(self, papers: list[Paper]) -> list[list[Keyphrase]]:
        """The keyphrases of each paper, without tagging it."""
        texts, analyses = self._analyse(papers)
        return self.keyphrases.extract(texts, analyses)

    def keyphrase_candidates(self, papers: list[Paper]) -> list[dict[str, tuple[str, dict]]]:
        """Every shortlisted keyphrase candidate of each paper: its text as shown and the
        features the acceptance model reads (``python -m tagger.calibrate --keyphrases``)."""
        texts, analyses = self._analyse(papers)
        return self.keyphrases.described(texts, analyses)

    def _analyse(self, papers: list[Paper]) -> tuple[list[str], list[Analysis]]:
        texts = [paper_text(p.title, p.abstract) for p in papers]
        docs = self.nlp.pipe(texts, batch_size=_SPACY_BATCH)
        return texts, [analyse(d, p.title, p.abstract) for d, p in zip(docs, papers, strict=True)]

    def _read(self, papers: list[Paper]) -> list[_Read]:
        texts, analyses = self._analyse(papers)
        vectors = self.keyphrases.embed_papers(texts)
        keyphrases = self.keyphrases.extract(texts, analyses, vectors)
        ids = [area.id for area in self.taxonomy.areas]
        similarities = _unit(vectors) @ self.area_vectors.T
        return [
            _Read(self, analysis, phrases, dict(zip(ids, row.tolist(), strict=True)))
            for analysis, phrases, row in zip(analyses, keyphrases, similarities, strict=True)
        ]

    def _pool(self, workers: int):
        """Worker processes, started on first use and kept (models loaded) until close()."""
        if self._workers is not None and self._workers[0] != workers:
            self.close()
        if self._workers is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            _check_memory(workers, self.config.embedding_backend)
            # spawn, not fork: forking a process that runs torch can hang
            context = multiprocessing.get_context("spawn")
            pool = ProcessPoolExecutor(
                workers,
                mp_context=context,
                initializer=_start_worker,
                initargs=(self.taxonomy, self.config, os.getpid(), self._export()),
            )
            self._workers = (workers, pool)
        return self._workers[1]

    def _export(self) -> Path | None:
        """The ONNX export workers load (made here, once, if missing), or None for torch."""
        if self.config.embedding_backend == "torch":
            return None
        return embedders.onnx_model_dir()

    def close(self) -> None:
        """Stop worker processes, if any were started."""
        if self._workers is not None:
            self._workers[1].shutdown(cancel_futures=True)
            self._workers = None

    def __enter__(self) -> Tagger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Read:
    """One paper as the rules and the weigher see it."""

    tagger: Tagger
    analysis: Analysis
    keyphrases: list[Keyphrase]
    similarity: dict[str, float]  # cosine of the paper's opening and each area's description

    def tags(self) -> tuple[list[AreaTag], list[AreaTag]]:
        """Its topic tags and its facet tags."""
        tagger = self.tagger
        return score_hits(
            tagger.rules.match(self.analysis, self.keyphrases),
            self.analysis,
            tagger.taxonomy,
            n_keyphrases=len(self.keyphrases),
            config=tagger.config,
            weigher=tagger.weigher,
            similarity=self.similarity,
        )

    def candidates(self) -> list[Candidate]:
        """Its candidate areas, topics and facets (each group weighed on its own)."""
        tagger = self.tagger
        hits = tagger.rules.match(self.analysis, self.keyphrases)
        return [
            candidate
            for group in by_facet(hits, tagger.taxonomy).values()
            for candidate in propose(
                group,
                self.analysis,
                tagger.taxonomy,
                n_keyphrases=len(self.keyphrases),
                config=tagger.config,
                similarity=self.similarity,
            )[0]
        ]


def _prototype(area: Area) -> str:
    """What an area is about, in words to embed: its name, description and first aliases."""
    return f"{area.name}: {area.description} ({', '.join(area.aliases[:8])})"


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _batches(papers: Iterable[Paper], size: int) -> Iterator[list[Paper]]:
    papers = iter(papers)
    while batch := list(islice(papers, size)):
        yield batch


# What one worker process holds at most once its models are loaded (spaCy and MiniLM), by
# backend, as measured on the machines this was written on: torch itself costs about 400 MB.
WORKER_MEMORY = {"torch": 850 * 2**20, "onnx": 450 * 2**20, "onnx-int8": 450 * 2**20}


def _check_memory(workers: int, backend: str) -> None:
    """Refuse a number of workers whose models cannot fit in the memory available now."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            fields = dict(line.split(":", 1) for line in meminfo)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return  # not Linux: nothing to go by
    needed = workers * WORKER_MEMORY[backend]
    if needed > available:
        raise TaggerError(
            f"{workers} workers need about {needed / 2**30:.1f} GB for their "
            f"models, and {available / 2**30:.1f} GB is available: use fewer workers"
        )


# spaCy runs its tagger over this many texts at once: its default (1,000, so a whole batch of
# papers) holds about 260 MB of activations for 64 abstracts, 16 about 75 MB, and is faster.
_SPACY_BATCH = 16

_worker_tagger: Tagger | None = None


def _start_worker(
    taxonomy: Taxonomy, config: TaggerConfig, parent: int, export: Path | None
) -> None:
    """Runs once in each worker process: one thread each, so workers do not fight for cores, and
    a life no longer than the parent's, however the parent ends (even kill -9). ``export``: the
    ONNX model's directory, made by the parent."""
    global _worker_tagger
    import signal

    from threadpoolctl import threadpool_limits

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _end_with_parent(parent)
    threadpool_limits(1)
    if config.embedding_backend == "torch":
        import torch

        torch.set_num_threads(1)
    embedder = embedders.make_embedder(
        config.embedding_model, config.embedding_backend, directory=export
    )
    _worker_tagger = Tagger(taxonomy, config, embedder=embedder)


def _end_with_parent(parent: int) -> None:
    """Linux sends this process SIGTERM when its parent ends; elsewhere, and in case the parent
    ended before that was set, a watchdog thread checks once a second."""
    import threading
    import time

    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 15)  # PR_SET_PDEATHSIG, SIGTERM

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, daemon=True, name="tagger-parent-watch").start()


def _tag_in_worker(batch: list[Paper]) -> tuple[list[TaggedPaper], Counter[tuple[str, str]]]:
    assert _worker_tagger is not None, "worker was not started with _start_worker"
    results = _worker_tagger.tag_batch(batch)
    timeouts = Counter(_worker_tagger.rules.timeouts)
    _worker_tagger.rules.timeouts.clear()
    return results, timeouts
