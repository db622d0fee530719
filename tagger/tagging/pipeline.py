"""The Tagger: papers in, tagged papers out, streaming in batches.

A batch is read (tagging.reading), its votes gathered (tagging.model.Learned.votes), and each
paper's candidates proposed and listed (tagging.proposing, tagging.listing) by
:func:`tagged_papers`, which retagging (tagging.retag) calls too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path

from ..config import TaggerConfig, tagger_version
from ..errors import TaggerError
from ..language import embedders, model_files
from ..language.text import spacy_model_version
from ..records import Paper, Provenance, TaggedPaper
from ..taxonomy.loading import load_taxonomy
from ..taxonomy.model import Taxonomy
from ..taxonomy.store import remember
from .listing import list_tags, weighed
from .model import FittedModel, Learned
from .proposing import propose_paper
from .reading import Reader, Reading
from .workers import Workers, checked_workers, in_batches


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
        self.reader = Reader(self.taxonomy, self.config, embedder=embedder)
        self._workers: Workers | None = None

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

    @property
    def embedder(self) -> embedders.Embedder:
        return self.reader.embedder

    @cached_property
    def learned(self) -> Learned:
        """What this tagger uses of the fitted model (tagging.model): ``config.model``, or the
        one shipped. A model given by name must serve the taxonomy; the shipped one serves the
        packaged taxonomy and overlays of it, and for any other taxonomy only its first stage is
        used (``learned.note()`` says so). Either must have been fitted on features made with
        this tagger's settings (``Learned.check``)."""
        return learned_for(self.taxonomy, self.config, self.embedder.name)

    @cached_property
    def provenance(self) -> Provenance:
        return provenance_of(self.taxonomy, self.config, self.embedder.name, self.learned)

    def tag(self, paper: Paper) -> TaggedPaper:
        """Tag one paper."""
        return self.tag_batch([paper])[0]

    def tag_batch(self, papers: list[Paper]) -> list[TaggedPaper]:
        """Tag a list of papers at once: one spaCy pass, one embedding call."""
        return tagged_papers(self.reader.read(papers), self.learned, self.provenance)

    def tag_many(self, papers: Iterable[Paper], *, workers: int = 1) -> Iterator[TaggedPaper]:
        """Tag papers lazily, ``config.batch_size`` at a time, in input order.

        With ``workers > 1``, batches are tagged in that many processes, each started from the
        taxonomy and the configuration (never from this object's loaded models) with one thread;
        results still come back in input order, identical to one worker's, and at most
        ``2 * workers`` batches are in flight, so memory stays flat on any input size. Papers
        that fit in one batch are tagged here: starting workers would take longer.
        """
        workers = checked_workers(workers, "Tagger.tag_many", self.reader.embedder_given)
        return in_batches(papers, self.config.batch_size, workers, self.tag_batch, self._pool)

    def _pool(self, count: int) -> Workers:
        """Worker processes, started on first use and kept (models loaded) until close()."""
        if self._workers is not None and self._workers.count != count:
            self.close()
        if self._workers is None:
            # each loads the export the parent made, if missing (None for torch)
            export = model_files.export_dir(self.config.embedding_backend)
            self._workers = Workers(
                count,
                _start_tagging,
                (self.taxonomy, self.config, export),
                _tag_in_worker,
                backend=self.config.embedding_backend,
            )
        return self._workers

    def close(self, *, wait: bool = True) -> None:
        """Stop worker processes, if any were started: once the batches they are tagging are
        done, or, unless ``wait``, now (batches not started are dropped)."""
        if self._workers is not None:
            workers, self._workers = self._workers, None
            workers.close(wait=wait)

    def __enter__(self) -> Tagger:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(wait=kind is None)  # Ctrl-C, or an error: stop now, not after the batches


def tagged_papers(
    readings: Sequence[Reading],
    learned: Learned,
    provenance: Provenance,
    *,
    listing: TaggerConfig | None = None,
) -> list[TaggedPaper]:
    """Each read paper tagged: its votes gathered, its candidates proposed and listed (the one
    path from a reading to its tags, for tagging and retagging alike). ``listing``: list them
    with these settings rather than ``learned``'s (the same but for those that only list, such
    as min_score: a fit lists the papers it read at two thresholds)."""
    taxonomy, config = learned.taxonomy, learned.config
    if listing is not None and listing.shaping("evidence", "votes") != config.shaping(
        "evidence", "votes"
    ):
        raise ValueError("listing settings must make the features as learned.config does")
    proposals = [
        propose_paper(reading, votes, taxonomy, config)
        for reading, votes in zip(readings, learned.votes(readings), strict=True)
    ]
    scores = weighed(proposals, learned.weigher)
    found = []
    for reading, proposal in zip(readings, proposals, strict=True):
        tags, facets = list_tags(proposal, scores, taxonomy, listing or config)
        found.append(
            TaggedPaper(
                paper=reading.paper,
                keyphrases=reading.keyphrases,
                tags=tags,
                facets=facets,
                provenance=provenance,
                vector=reading.vector,
            )
        )
    return found


def learned_for(taxonomy: Taxonomy, config: TaggerConfig, embedder: str) -> Learned:
    """What a tagger of ``taxonomy`` with ``config`` uses of the fitted model (tagging.model),
    checked: a model named by ``config.model`` that serves another taxonomy, or one fitted on
    features made otherwise than ``config`` makes them, is refused."""
    model = FittedModel.load(config.model or None, backend=config.embedding_backend)
    if config.model and not model.serves(taxonomy):
        raise TaggerError(
            f"the model {config.model} was fitted for another taxonomy than "
            f"{taxonomy.label}: fit one for it with tagger fit, or tag with the "
            "taxonomy it was fitted for"
        )
    learned = Learned(model, taxonomy, config, embedder)
    learned.check()
    return learned


def provenance_of(
    taxonomy: Taxonomy, config: TaggerConfig, embedder: str, learned: Learned
) -> Provenance:
    """What a tagged line says it was tagged with; the taxonomy is kept in the cache, for retag
    to compare a later taxonomy with."""
    remember(taxonomy)
    return Provenance(
        tagger_version=tagger_version(),
        taxonomy_version=taxonomy.version,
        taxonomy_sha256=taxonomy.sha256,
        embedding_model=embedder,
        spacy_model=spacy_model_version(config.spacy_model),
        model=learned.identity,
        settings=config.output_settings(),
    )


_worker_tagger: Tagger | None = None


def worker_tagger(taxonomy: Taxonomy, config: TaggerConfig, export: Path | None) -> Tagger:
    """The tagger of a worker process (of a pool here, or of a Dask cluster): one thread, so
    that workers do not fight over cores, and an embedder that loads ``export``, the ONNX
    model's directory (or the static table's) the parent made, if given."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    if config.embedding_backend == "torch":
        import torch

        torch.set_num_threads(1)
    embedder = embedders.make_embedder(
        config.embedding_model, config.embedding_backend, directory=export
    )
    return Tagger(taxonomy, config, embedder=embedder)


def _start_tagging(taxonomy: Taxonomy, config: TaggerConfig, export: Path | None) -> None:
    global _worker_tagger
    _worker_tagger = worker_tagger(taxonomy, config, export)


def _tag_in_worker(batch: list[Paper]) -> list[TaggedPaper]:
    assert _worker_tagger is not None, "worker was not started with _start_tagging"
    return _worker_tagger.tag_batch(batch)
