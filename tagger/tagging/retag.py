"""The Retagger: tagged papers in, the same papers tagged with another taxonomy out, without the
embedding model.

Each tagged line's keyphrases and vector stand in for the models, and spaCy only splits words
and sentences (tagging.reading.Reader with ``words_only``); the result is what the Tagger writes
for the same paper with the new taxonomy, byte for byte, if the line was written by this version
of tagger with this configuration (``tagger.runs.local.retag_files`` checks that before it calls
this). A paper the change of taxonomy cannot touch (tagging.untouched) is not read again: only
its provenance changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property

import numpy as np

from ..config import RETAG_WORKERS, TaggerConfig
from ..records import Provenance, TaggedPaper
from ..taxonomy.model import Taxonomy
from ..taxonomy.store import tagged_with
from .model import Learned
from .pipeline import learned_for, provenance_of, tagged_papers
from .reading import Reader
from .untouched import Untouched
from .workers import Workers, checked_workers, in_batches

# Papers retagged together: retagging one costs a few milliseconds, so batches are larger than
# tagging's, to spend little on sending them to workers.
RETAG_BATCH = 256


class Retagger:
    """Tags papers again from their tagged lines, with ``taxonomy``. It loads spaCy without its
    part-of-speech tagger, and the embedding model only if an area's description is not in the
    cache."""

    def __init__(self, taxonomy: Taxonomy, config: TaggerConfig | None = None) -> None:
        self.taxonomy = taxonomy
        self.config = config if config is not None else TaggerConfig()
        self.reader = Reader(self.taxonomy, self.config, words_only=True)
        self._untouched_by: dict[str, Untouched | None] = {}  # by old taxonomy's sha256
        self._workers: Workers | None = None

    @cached_property
    def learned(self) -> Learned:
        """What this retagger uses of the fitted model, as a Tagger does (Tagger.learned)."""
        return learned_for(self.taxonomy, self.config, self.reader.embedder.name)

    @cached_property
    def provenance(self) -> Provenance:
        return provenance_of(self.taxonomy, self.config, self.reader.embedder.name, self.learned)

    @property
    def area_vectors(self) -> np.ndarray:
        return self.reader.area_vectors

    def retag_batch(self, records: list[TaggedPaper]) -> list[TaggedPaper]:
        """The papers of ``records`` tagged again with this retagger's taxonomy."""
        model = self.provenance.model
        untouched = [False] * len(records)
        by_taxonomy: dict[str, list[int]] = {}
        for k, record in enumerate(records):
            if record.provenance.model == model:
                by_taxonomy.setdefault(record.provenance.taxonomy_sha256, []).append(k)
        for sha256, rows in by_taxonomy.items():
            judge = self._untouched(sha256)
            if judge is None:
                continue
            for k, same in zip(rows, judge.cleared([records[k] for k in rows]), strict=True):
                untouched[k] = same
        todo = [record for record, same in zip(records, untouched, strict=True) if not same]
        readings = self.reader.read_again(
            [record.paper for record in todo],
            [record.keyphrases for record in todo],
            [record.vector or "" for record in todo],
        )
        fresh = iter(tagged_papers(readings, self.learned, self.provenance))
        return [
            record.model_copy(update={"provenance": self.provenance}) if same else next(fresh)
            for record, same in zip(records, untouched, strict=True)
        ]

    def retag_many(
        self, records: Iterable[TaggedPaper], *, workers: int = RETAG_WORKERS
    ) -> Iterator[TaggedPaper]:
        """:meth:`retag_batch` over tagged records, lazily, in order, in ``workers`` processes
        as Tagger.tag_many tags."""
        workers = checked_workers(workers, "Retagger.retag_many", embedder_given=False)
        return in_batches(records, RETAG_BATCH, workers, self.retag_batch, self._pool)

    def _untouched(self, sha256: str) -> Untouched | None:
        """For lines tagged with the taxonomy of ``sha256``: which of them this taxonomy cannot
        change; None (read them all again) if that taxonomy is not in the cache."""
        known = self._untouched_by
        if sha256 not in known:
            old = self.taxonomy if sha256 == self.taxonomy.sha256 else tagged_with(sha256)
            known[sha256] = (
                Untouched(old, self.taxonomy, self.reader.nlp, self.learned.neighbour_indexes)
                if old is not None
                else None
            )
        return known[sha256]

    def _pool(self, count: int) -> Workers:
        """Worker processes, given the area vectors and provenance made here (they never load
        the embedding model for them)."""
        if self._workers is not None and self._workers.count != count:
            self.close()
        if self._workers is None:
            self._workers = Workers(
                count,
                _start_retagging,
                (self.taxonomy, self.config, self.area_vectors, self.provenance),
                _retag_in_worker,
                backend=self.config.embedding_backend,
            )
        return self._workers

    def close(self, *, wait: bool = True) -> None:
        """Stop worker processes, if any were started (as Tagger.close does)."""
        if self._workers is not None:
            workers, self._workers = self._workers, None
            workers.close(wait=wait)

    def __enter__(self) -> Retagger:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(wait=kind is None)


_worker_retagger: Retagger | None = None


def _start_retagging(
    taxonomy: Taxonomy, config: TaggerConfig, area_vectors: np.ndarray, provenance: Provenance
) -> None:
    global _worker_retagger
    _worker_retagger = Retagger(taxonomy, config)
    _worker_retagger.reader.__dict__["area_vectors"] = area_vectors
    _worker_retagger.__dict__["provenance"] = provenance


def _retag_in_worker(batch: list[TaggedPaper]) -> list[TaggedPaper]:
    assert _worker_retagger is not None, "worker was not started with _start_retagging"
    return _worker_retagger.retag_batch(batch)
