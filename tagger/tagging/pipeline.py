"""The Tagger: papers in, tagged papers out, streaming in batches."""

from __future__ import annotations

import dataclasses
import os
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, islice
from pathlib import Path
from typing import Any

import numpy as np

from ..config import RETAG_WORKERS, TaggerConfig, tagger_version
from ..errors import TaggerError
from ..language import embedders, vectors
from ..language.keyphrases import KeyphraseExtractor
from ..language.text import Analysis, analyse, load_spacy, paper_text, spacy_model_version
from ..records import AreaTag, Keyphrase, Paper, Provenance, TaggedPaper
from ..taxonomy.loading import load_taxonomy
from ..taxonomy.model import Taxonomy
from ..taxonomy.rules import RuleSet
from ..taxonomy.store import remember, tagged_with
from .listing import groups, score_hits
from .model import FittedModel, Learned
from .neighbours import (
    Neighbours,
    abstract_key,
)
from .processes import end_with_parent, no_sigint, stop_now
from .proposing import Candidate, propose


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
        self._worker_timeouts: Counter[tuple[str, str, str]] = Counter()
        self._retagging = False
        self._votes = True  # neighbours and the area model vote (not when reading for a fit)
        self._untouched_by: dict[str, Callable[[TaggedPaper], bool]] = {}  # by old taxonomy

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

    @property
    def embedder_given(self) -> bool:  # an embedder object, which workers cannot be given
        return self._own_embedder is not None

    @cached_property
    def nlp(self):
        """spaCy: the whole pipeline to tag; to retag, its tokenizer and sentencizer alone
        (what the rules read: words and sentences, not parts of speech)."""
        return load_spacy(self.config.spacy_model, tagging=not self._retagging)

    @cached_property
    def rules(self) -> RuleSet:
        return RuleSet(self.taxonomy, spacy_model=self.config.spacy_model)

    @cached_property
    def keyphrases(self) -> KeyphraseExtractor:
        return KeyphraseExtractor(self.embedder, self.config)

    @cached_property
    def learned(self) -> Learned:
        """What this tagger uses of the fitted model (tagging.model): ``config.model``, or the
        one shipped. A model given by name must serve the taxonomy; the shipped one serves the
        packaged taxonomy and overlays of it, and for any other taxonomy only its first stage is
        used (``learned.note()`` says so)."""
        model = FittedModel.load(self.config.model or None, backend=self.config.embedding_backend)
        if self.config.model and not model.serves(self.taxonomy):
            raise TaggerError(
                f"the model {self.config.model} was fitted for another taxonomy than "
                f"{self.taxonomy.label}: fit one for it with tagger fit, or tag with the "
                "taxonomy it was fitted for"
            )
        return Learned(model, self.taxonomy, self.config, self.embedder.name, votes=self._votes)

    @cached_property
    def area_vectors(self) -> np.ndarray:
        """One int16 row per area of the taxonomy (language.vectors.area_codes): the embedding of
        what the area is about (kept on disk for the shipped model, text by text: a taxonomy that
        adds an area embeds that one alone; language.embedders.lasting_embed)."""
        texts = [area.prototype() for area in self.taxonomy.areas]
        known = embedders.fingerprint(self.embedder)
        if known is None:
            return vectors.area_codes(self.embedder.embed(texts))
        return vectors.area_codes(embedders.lasting_embed(self.embedder, texts, fingerprint=known))

    @cached_property
    def provenance(self) -> Provenance:
        remember(self.taxonomy)  # what retag compares a later taxonomy with
        return Provenance(
            tagger_version=tagger_version(),
            taxonomy_version=self.taxonomy.version,
            taxonomy_sha256=self.taxonomy.sha256,
            embedding_model=self.embedder.name,
            spacy_model=spacy_model_version(self.config.spacy_model),
            model=self.learned.identity,
            settings=self.config.output_settings(),
        )

    @property
    def pattern_timeouts(self) -> Counter[tuple[str, str, str]]:
        """(area, pattern, why) -> how many papers the pattern was skipped for, in this process
        and its workers: it ran over the time a paper's patterns have (why: rules.RAN_OVER), or
        the patterns before it had used it up (rules.NO_TIME_LEFT)."""
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
        return self._many(papers, workers, self.config.batch_size, "tag_many")

    def retag_many(
        self, records: Iterable[TaggedPaper], *, workers: int = RETAG_WORKERS
    ) -> Iterator[TaggedPaper]:
        """:meth:`retag_batch` over tagged records, lazily, in order, in ``workers`` processes
        as :meth:`tag_many` does it (a Tagger made with :meth:`for_retag`)."""
        return self._many(records, workers, RETAG_BATCH, "retag_many")

    def _many(self, items: Iterable[Any], workers: int, size: int, name: str) -> Iterator[Any]:
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(
                f"The 'workers' parameter of Tagger.{name} must be an int >= 1. "
                f"Got {workers!r} instead."
            )
        if workers > 1 and self.embedder_given:
            raise ValueError(
                f"Tagger.{name}(workers > 1) starts each worker from the "
                "configuration, so it cannot use an embedder object passed to the "
                "Tagger; use workers=1, or name the model in "
                "TaggerConfig.embedding_model"
            )
        return self._batched(items, workers, size)

    def _batched(self, items: Iterable[Any], workers: int, size: int) -> Iterator[Any]:
        batches = _batches(items, size)
        if workers > 1 and self._workers is None:
            first = list(islice(batches, 2))
            if len(first) < 2:  # one batch: starting workers would cost more than it saves
                workers = 1
            batches = chain(first, batches)
        if workers == 1:
            for batch in batches:
                yield from self._batch(batch)
            return
        pool = self._pool(workers)
        pending: deque = deque()

        def next_results() -> list[TaggedPaper]:
            results, timeouts = pending.popleft().result()
            self._worker_timeouts.update(timeouts)
            return results

        for batch in batches:
            with no_sigint():  # a worker it starts ignores Ctrl-C from its first instruction
                pending.append(pool.submit(_tag_in_worker, batch))
            if len(pending) >= 2 * workers:
                yield from next_results()
        while pending:
            yield from next_results()

    def _batch(self, batch: list[Any]) -> list[TaggedPaper]:
        """A batch of papers tagged, or of tagged records retagged, as this Tagger does."""
        return self.retag_batch(batch) if self._retagging else self.tag_batch(batch)

    def tag_batch(self, papers: list[Paper]) -> list[TaggedPaper]:
        """Tag a list of papers at once: one spaCy pass, one embedding call."""
        return [read.tagged() for read in self._read(papers)]

    def retag_batch(self, records: list[TaggedPaper]) -> list[TaggedPaper]:
        """Tag papers again from their tagged lines, with this tagger's taxonomy: their stored
        keyphrases and vector stand in for the models, and spaCy only splits words and
        sentences. The result is what :meth:`tag_batch` gives for the same papers with this
        taxonomy, byte for byte, if the lines were written by this version of tagger with this
        configuration (``tagger.runs.local.retag_files`` checks that before it calls this). A
        paper the change of taxonomy cannot touch (:class:`tagger.tagging.retag.Untouched`) is not
        read again: only its provenance changes."""
        model = self.provenance.model
        untouched = [
            r.provenance.model == model and self._untouched(r.provenance.taxonomy_sha256)(r)
            for r in records
        ]
        todo = [record for record, same in zip(records, untouched, strict=True) if not same]
        papers = [record.paper for record in todo]
        _, analyses = self._analyse(papers)
        stored = [record.vector or "" for record in todo]
        fresh = iter(
            read.tagged()
            for read in self._reads(papers, analyses, [r.keyphrases for r in todo], stored)
        )
        return [
            record.model_copy(update={"provenance": self.provenance}) if same else next(fresh)
            for record, same in zip(records, untouched, strict=True)
        ]

    def _untouched(self, sha256: str) -> Callable[[TaggedPaper], bool]:
        """For lines tagged with the taxonomy of ``sha256``: which of them this taxonomy cannot
        change (none, if that taxonomy is not in the cache)."""
        known = self._untouched_by
        if sha256 not in known:
            from .retag import Untouched

            old = self.taxonomy if sha256 == self.taxonomy.sha256 else tagged_with(sha256)
            known[sha256] = (
                Untouched(old, self.taxonomy, self.nlp, self.learned.neighbour_indexes)
                if old is not None
                else _never
            )
        return known[sha256]

    @classmethod
    def for_fitting(cls, taxonomy: Taxonomy, config: TaggerConfig | None = None) -> Tagger:
        """A Tagger that reads papers for a fit (tagger.fitting): no neighbours and no area
        model, whatever model it would use: a fit proposes each paper's candidates again with
        the neighbours and area model it makes."""
        config = dataclasses.replace(config or TaggerConfig(), neighbours=0, judged_neighbours=0)
        tagger = cls(taxonomy, config)
        tagger._votes = False
        return tagger

    @classmethod
    def for_retag(cls, taxonomy: Taxonomy, config: TaggerConfig | None = None) -> Tagger:
        """A Tagger that only retags (:meth:`retag_batch`): it loads spaCy without its
        part-of-speech tagger, and the embedding model only if an area's description is not in
        the cache."""
        tagger = cls(taxonomy, config)
        tagger._retagging = True
        return tagger

    def candidates(self, papers: list[Paper]) -> list[list[Candidate]]:
        """Every candidate area of each paper, with the features the weigher reads (what
        ``tagger fit`` fits the weigher to)."""
        return [read.candidates() for read in self._read(papers)]

    def readings(self, papers: list[Paper]) -> list[Reading]:
        """Each paper as the rules and the weigher see it: its analysis, keyphrases, stored
        vector, similarities and neighbours' votes; what a fit reads (tagger.fitting proposes
        each paper's candidates again with other votes)."""
        return self._read(papers)

    def extract_keyphrases(self, papers: list[Paper]) -> list[list[Keyphrase]]:
        """The keyphrases of each paper, without tagging it."""
        texts, analyses = self._analyse(papers)
        return self.keyphrases.extract(texts, analyses)

    def keyphrase_candidates(self, papers: list[Paper]) -> list[dict[str, tuple[str, dict]]]:
        """Every shortlisted keyphrase candidate of each paper: its text as shown and the
        features the acceptance model reads (``python -m tagger.fitting.keyphrases``)."""
        texts, analyses = self._analyse(papers)
        return self.keyphrases.described(texts, analyses)

    def _analyse(self, papers: list[Paper]) -> tuple[list[str], list[Analysis]]:
        """The papers' texts and analyses. spaCy runs in a memory zone: the strings and
        tokenizer cache entries a batch adds are freed after it (an Analysis holds Python
        strings, never the Doc), so a worker's memory does not grow with the corpus."""
        texts = [paper_text(p.title, p.abstract) for p in papers]
        with self.nlp.memory_zone():
            docs = self.nlp.pipe(texts, batch_size=_SPACY_BATCH)
            analyses = [analyse(d, p.title, p.abstract) for d, p in zip(docs, papers, strict=True)]
        return texts, analyses

    def _read(self, papers: list[Paper]) -> list[Reading]:
        texts, analyses = self._analyse(papers)
        embedded = self.keyphrases.embed_papers(texts)
        keyphrases = self.keyphrases.extract(texts, analyses, embedded)
        return self._reads(papers, analyses, keyphrases, [vectors.encode(v) for v in embedded])

    def _reads(
        self,
        papers: list[Paper],
        analyses: list[Analysis],
        keyphrases: list[list[Keyphrase]],
        stored: list[str],
    ) -> list[Reading]:
        """Each paper as the rules and the weigher see it; its similarity to each area comes
        from its vector as stored (vectors.cosines), so that retag reads what tag read."""
        ids = [area.id for area in self.taxonomy.areas]
        similarities = vectors.cosines(stored, self.area_vectors) if papers else []
        near = self.neighbours(papers, stored)
        return [
            Reading(self, *found, dict(zip(ids, row.tolist(), strict=True)), nearest)
            for found, row, nearest in zip(
                zip(papers, analyses, keyphrases, stored, strict=True),
                similarities,
                near,
                strict=True,
            )
        ]

    def neighbours(self, papers: list[Paper], stored: list[str]) -> list[Neighbours]:
        """Each paper's neighbours of every kind, and the area model's votes, from its vector
        as stored."""
        keys = [abstract_key(p.abstract) for p in papers]
        texts = [paper_text(p.title, p.abstract) for p in papers]
        return self.learned.votes_of([vectors.decode(v) for v in stored], keys, texts)

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
            # a retagging worker gets the area vectors made (the model is not loaded for them
            # if they were made before), a tagging worker the ONNX export
            made = (
                (self.area_vectors, self.provenance, None)
                if self._retagging
                else (None, None, self._export())
            )
            pool = ProcessPoolExecutor(
                workers,
                mp_context=context,
                initializer=_start_worker,
                initargs=(self.taxonomy, self.config, os.getpid(), *made),
            )
            self._workers = (workers, pool)
        return self._workers[1]

    def _export(self) -> Path | None:
        """What workers' embedders load (the ONNX export or the static table, made here, once,
        if missing), or None for torch."""
        return embedders.export_dir(self.config.embedding_backend)

    def close(self, *, wait: bool = True) -> None:
        """Stop worker processes, if any were started: once the batches they are tagging are
        done, or, unless ``wait``, now (batches not started are dropped; a worker still busy
        after processes.WORKER_GRACE seconds is terminated)."""
        if self._workers is not None:
            pool, self._workers = self._workers[1], None
            if wait:
                pool.shutdown(cancel_futures=True)
            else:
                stop_now(pool)

    def __enter__(self) -> Tagger:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(wait=kind is None)  # Ctrl-C, or an error: stop now, not after the batches


@dataclass
class Reading:
    """One paper as the rules and the weigher see it."""

    tagger: Tagger
    paper: Paper
    analysis: Analysis
    keyphrases: list[Keyphrase]
    vector: str  # the paper's embedding as stored (language.vectors.encode)
    similarity: dict[str, float]  # cosine of the paper's opening and each area's description
    votes: Neighbours  # what its nearest shipped and judged papers say (tagging.neighbours)

    def tagged(self) -> TaggedPaper:
        tags, facets = self.tags()
        return TaggedPaper(
            paper=self.paper,
            keyphrases=self.keyphrases,
            tags=tags,
            facets=facets,
            provenance=self.tagger.provenance,
            vector=self.vector,
        )

    def tags(self) -> tuple[list[AreaTag], list[AreaTag]]:
        """Its topic tags and its facet tags."""
        tagger = self.tagger
        return score_hits(
            tagger.rules.match(self.analysis, self.keyphrases),
            self.analysis,
            tagger.taxonomy,
            n_keyphrases=len(self.keyphrases),
            config=tagger.config,
            weigher=tagger.learned.weigher,
            similarity=self.similarity,
            votes=self.votes,
        )

    def candidates(self, votes: Neighbours | None = None) -> list[Candidate]:
        """Its candidate areas, topics and facets (each group weighed on its own); ``votes``
        in place of its neighbours'."""
        tagger = self.tagger
        votes = self.votes if votes is None else votes
        hits = tagger.rules.match(self.analysis, self.keyphrases)
        return [
            candidate
            for facet, group in groups(hits, tagger.taxonomy).items()
            for candidate in propose(
                group,
                self.analysis,
                tagger.taxonomy,
                n_keyphrases=len(self.keyphrases),
                config=tagger.config,
                similarity=self.similarity,
                votes=votes if facet is None else votes.learned(),
                always=tagger.taxonomy.children[facet] if facet is not None else (),
            )[0]
        ]


def _never(record: TaggedPaper) -> bool:
    return False


def _batches(papers: Iterable[Paper], size: int) -> Iterator[list[Paper]]:
    papers = iter(papers)
    while batch := list(islice(papers, size)):
        yield batch


# What one worker process holds at most once its models are loaded (spaCy and MiniLM), by
# backend (every one of config.EMBEDDING_BACKENDS), as measured on the machines this was written
# on: torch itself costs about 400 MB. The static table is 15 MB and runs no transformer: a
# worker's peak over 512 abstracts in batches of 64 was 266 MB, against onnx-int8's 307 MB.
WORKER_MEMORY = {
    "torch": 850 * 2**20,
    "onnx": 450 * 2**20,
    "onnx-int8": 450 * 2**20,
    "static": 400 * 2**20,
}


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


# Papers retagged together: retagging one costs a few milliseconds, so batches are larger than
# tagging's, to spend little on sending them to workers.
RETAG_BATCH = 256

# spaCy runs its tagger over this many texts at once: its default (1,000, so a whole batch of
# papers) holds about 260 MB of activations for 64 abstracts, 16 about 70 MB, 8 about 35 MB
# (traced peaks, issue 27), and 8 is as fast as 16 (benchmarks/stages.py).
_SPACY_BATCH = 8

_worker_tagger: Tagger | None = None


def _start_worker(
    taxonomy: Taxonomy,
    config: TaggerConfig,
    parent: int,
    area_vectors: np.ndarray | None,
    provenance: Provenance | None,
    export: Path | None,
) -> None:
    """Runs once in each worker process: one thread each, so workers do not fight for cores, and
    a life no longer than the parent's, however the parent ends (even kill -9). A worker that
    retags gets the parent's ``area_vectors`` and ``provenance`` (it never loads the model);
    one that tags, ``export``: the ONNX model's directory, made by the parent."""
    global _worker_tagger
    import signal

    from threadpoolctl import threadpool_limits

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    end_with_parent(parent)
    threadpool_limits(1)
    if config.embedding_backend == "torch":
        import torch

        torch.set_num_threads(1)
    if area_vectors is not None:
        _worker_tagger = Tagger.for_retag(taxonomy, config)
        _worker_tagger.__dict__.update(area_vectors=area_vectors, provenance=provenance)
        return
    embedder = embedders.make_embedder(
        config.embedding_model, config.embedding_backend, directory=export
    )
    _worker_tagger = Tagger(taxonomy, config, embedder=embedder)


def _tag_in_worker(
    batch: list[Paper],
) -> tuple[list[TaggedPaper], Counter[tuple[str, str, str]]]:
    assert _worker_tagger is not None, "worker was not started with _start_worker"
    results = _worker_tagger._batch(batch)
    timeouts = Counter(_worker_tagger.rules.timeouts)
    _worker_tagger.rules.timeouts.clear()
    return results, timeouts
