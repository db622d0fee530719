"""Fitting the weigher to the judged set, in two stages, each source of the judged set held out in
turn.

The first stage reads rule evidence alone (weigher.RULE_FEATURES): its confident areas of the
shipped papers (``data/``) make the neighbour index (tagging.neighbours). The second stage reads
the rule evidence and the votes of each paper's neighbours in that index (weigher.FEATURES): it
is the weigher that tags. Held out means both stages: for each source, the first stage is fitted
on the other sources' judgments, the shipped papers are tagged with it into an index of that
fold, and the second stage is fitted and measured with that index; a judged paper never counts
itself among its neighbours (the same abstract is left out). The judgments of the held-out
source reach neither stage.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..config import TaggerConfig, tagger_version
from ..io.files import sha256
from ..io.readers import read_papers
from ..language import vectors
from ..records import AreaTag, Paper, Provenance, TaggedPaper
from ..tagging.listing import select, select_facet
from ..tagging.neighbours import NeighbourIndex, Neighbours, abstract_key, votes
from ..tagging.pipeline import Reading, Tagger
from ..tagging.proposing import Candidate
from ..tagging.weigher import ANY_FACET, FEATURES, RULE_FEATURES, Weigher, fitted
from .judged import Judgment, verdicts

MIN_EXAMPLES = 5  # right and wrong candidates a facet value needs for a model of its own
FIRST_STAGE_AT = 0.5  # a shipped paper's first-stage candidates this likely are its index tags
BATCH = 32


@dataclass
class JudgedPaper:
    """One paper of the judged set, read once: what it is judged to be, its reading (to propose
    its candidates again with each fold's neighbours), and its rule candidates."""

    paper: Paper
    judgment: Judgment
    reading: Reading
    rules: list[Candidate]

    @property
    def source(self) -> str:
        return str((self.paper.model_extra or {}).get("source", "?"))


@dataclass
class ShippedPaper:
    """One paper of the neighbour index: who it is, its stored vector, and its topic candidates
    with the first-stage features."""

    id: str
    title: str | None
    abstract: str
    vector: str
    topics: list[tuple[str, dict[str, float]]]
    source: str


def read_judged(tagger: Tagger, path: str | Path) -> list[JudgedPaper]:
    """Every paper of the judged file, read by ``tagger`` (whose neighbours are off)."""
    papers = list(read_papers(path))
    found = []
    for start in range(0, len(papers), BATCH):
        batch = papers[start : start + BATCH]
        for paper, reading in zip(batch, tagger.read(batch), strict=True):
            judgment = Judgment.of_paper(paper)
            if judgment is not None and judgment.areas:
                found.append(JudgedPaper(paper, judgment, reading, reading.candidates()))
    return found


def read_shipped(
    paths: Sequence[str | Path],
    config: TaggerConfig,
    workers: int = 2,
    cache: str | Path | None = None,
) -> list[ShippedPaper]:
    """The papers of ``paths`` (each abstract once), read with ``config`` in ``workers``
    processes: their vectors and topic candidates; kept in ``cache``, if given, under a key of
    everything they depend on (tagger's source files, the taxonomy, the data, the settings)."""
    if cache is not None:
        key = _cache_key(paths, config)
        where = Path(cache) / f"shipped-{key}.json"
        if where.is_file():
            return [ShippedPaper(**item) for item in json.loads(where.read_text())]
        found = read_shipped(paths, config, workers)
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(json.dumps([asdict(item) for item in found]))
        return found
    papers, seen = [], set()
    for path in paths:
        for paper in read_papers(path):
            key = abstract_key(paper.abstract)
            if key not in seen:
                seen.add(key)
                papers.append((paper, Path(path).name))
    chunks = [papers[k : k + 64] for k in range(0, len(papers), 64)]
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            done = list(pool.map(_read_chunk, [(config, chunk) for chunk in chunks]))
    else:
        done = [_read_chunk((config, chunk)) for chunk in chunks]
    return [item for chunk in done for item in chunk]


_CHUNK_TAGGER: list[Tagger] = []


def _cache_key(paths: Sequence[str | Path], config: TaggerConfig) -> str:
    from ..taxonomy.loading import load_taxonomy

    digest = hashlib.sha256(repr(config).encode())
    package = Path(__file__).resolve().parents[1]
    made_here = {"weigher.json", "weigher-rules.json", "neighbours.npz"}  # not read to read
    data = [p for p in sorted((package / "data").iterdir()) if p.name not in made_here]
    code = [p for p in sorted(package.rglob("*.py")) if p.parent.name != "corpus"]
    for source in code + data:
        digest.update(source.read_bytes())
    for path in paths:
        digest.update(sha256(path).encode())
    digest.update(load_taxonomy().sha256.encode())
    return digest.hexdigest()[:16]


def _read_chunk(job: tuple[TaggerConfig, list[tuple[Paper, str]]]) -> list[ShippedPaper]:
    config, chunk = job
    if not _CHUNK_TAGGER:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
        _CHUNK_TAGGER.append(Tagger.from_taxonomy(config=config))
    tagger = _CHUNK_TAGGER[0]
    papers = [paper for paper, _ in chunk]
    out = []
    for (paper, source), reading in zip(chunk, tagger.read(papers), strict=True):
        topics = [
            (c.area, c.features)
            for c in reading.candidates()
            if tagger.taxonomy.facet(c.area) is None
        ]
        out.append(
            ShippedPaper(paper.id, paper.title, paper.abstract, reading.vector, topics, source)
        )
    return out


def fit(
    judged: Sequence[JudgedPaper],
    found: Sequence[list[Candidate]],
    tagger: Tagger,
    *,
    c: float,
    names: Sequence[str],
    about: dict[str, Any] | None = None,
) -> Weigher:
    """The weigher's models fitted to the candidates ``found`` of the ``judged`` papers, reading
    the features ``names``: ``right`` on every candidate judged right or wrong (acceptable ones
    left out), ``main`` on every topic candidate, a facet model per contribution type with at
    least MIN_EXAMPLES right and wrong candidates, and one for the other types."""
    taxonomy = tagger.taxonomy
    right_rows, right_labels, main_rows, main_labels = [], [], [], []
    facet_rows: dict[str, list] = defaultdict(list)
    facet_labels: dict[str, list[int]] = defaultdict(list)
    for item, candidates in zip(judged, found, strict=True):
        topics = [c for c in candidates if taxonomy.facet(c.area) is None]
        for candidate in candidates:
            if taxonomy.facet(candidate.area) is not None and taxonomy.by_id[candidate.area].parent:
                for key in (candidate.area, ANY_FACET):
                    facet_rows[key].append(candidate.features)
                    facet_labels[key].append(int(candidate.area in item.judgment.facet_areas))
        said = verdicts([_tag(c.area, 0.0, tagger) for c in topics], item.judgment, taxonomy)
        for candidate, verdict in zip(topics, said, strict=True):
            if verdict != "neutral":
                right_rows.append(candidate.features)
                right_labels.append(int(verdict == "right"))
            main_rows.append(candidate.features)
            main_labels.append(int(candidate.area in item.judgment.main))
    return Weigher(
        right=fitted(right_rows, right_labels, c=c, names=names),
        main=fitted(main_rows, main_labels, c=c, names=names),
        facets={
            area: fitted(facet_rows[area], labels, c=c, names=names)
            for area, labels in facet_labels.items()
            if area == ANY_FACET or min(sum(labels), len(labels) - sum(labels)) >= MIN_EXAMPLES
        },
        about=about or {},
    )


def index_of(
    shipped: Sequence[ShippedPaper], first: Weigher, *, about: dict[str, Any]
) -> NeighbourIndex:
    """The neighbour index of the shipped papers: their vectors, and as their tags every topic
    candidate the first stage scores FIRST_STAGE_AT or more."""
    tags = [
        {
            area: round(first.right(f), 4)
            for area, f in paper.topics
            if first.right(f) >= FIRST_STAGE_AT
        }
        for paper in shipped
    ]
    rows = [(p.id, p.title, p.abstract, p.vector) for p in shipped]
    return NeighbourIndex.build(rows, tags, about=about)


def judged_index_of(judged: Sequence[JudgedPaper], *, about: dict[str, Any]) -> NeighbourIndex:
    """The index of judged papers: their vectors, and as their tags the areas their readers
    wrote down (1) and those they found acceptable (0.5)."""
    tags = [
        {a: 0.5 for a in item.judgment.acceptable} | {a: 1.0 for a in item.judgment.areas}
        for item in judged
    ]
    rows = [(i.paper.id, i.paper.title, i.paper.abstract, i.reading.vector) for i in judged]
    return NeighbourIndex.build(rows, tags, about=about)


def second_stage(
    judged: Sequence[JudgedPaper],
    indexes: dict[str, tuple[NeighbourIndex, int]],
    tagger: Tagger,
) -> list[list[Candidate]]:
    """Each judged paper's candidates with its neighbours in ``indexes`` (kind -> index and how
    many neighbours are read) voting."""
    codes = [vectors.decode(item.reading.vector) for item in judged]
    keys = [abstract_key(item.paper.abstract) for item in judged]
    found: list[list] = [[] for _ in judged]
    for kind, (index, k) in indexes.items():
        for kinds, nearest in zip(found, index.nearest(codes, keys, k), strict=True):
            kinds.append(votes(kind, index, nearest, tagger.taxonomy))
    return [
        item.reading.candidates(Neighbours(tuple(kinds)))
        for item, kinds in zip(judged, found, strict=True)
    ]


@dataclass
class Fold:
    """One source held out: the papers measured, and their candidates and weigher."""

    source: str
    test: list[int]
    found: list[list[Candidate]]  # of the test papers, second stage
    weigher: Weigher


def cross_validate(
    judged: Sequence[JudgedPaper],
    shipped: Sequence[ShippedPaper],
    tagger: Tagger,
    *,
    c: float,
    k: dict[str, int],
    log=print,
) -> list[Fold]:
    """Both stages fitted without each source in turn, and measured on it: the judged papers
    of the held-out source are not among the judged neighbours either."""
    model = {"model": tagger.embedder.name.split(" (")[0]}
    folds = []
    for source in sorted({item.source for item in judged}):
        train = [i for i, item in enumerate(judged) if item.source != source]
        test = [i for i, item in enumerate(judged) if item.source == source]
        log(f"  {source}: {len(test)} papers held out")
        first = fit(
            [judged[i] for i in train],
            [judged[i].rules for i in train],
            tagger,
            c=c,
            names=RULE_FEATURES,
        )
        indexes = {
            "nb": (index_of(shipped, first, about=model), k["nb"]),
            "jn": (judged_index_of([judged[i] for i in train], about=model), k["jn"]),
        }
        found = second_stage(judged, indexes, tagger)
        second = fit(
            [judged[i] for i in train], [found[i] for i in train], tagger, c=c, names=FEATURES
        )
        folds.append(Fold(source, test, [found[i] for i in test], second))
    return folds


def tagged(
    item: JudgedPaper, found: list[Candidate], weigher: Weigher, tagger: Tagger, config=None
) -> TaggedPaper:
    """The paper as the weigher lists its candidates (tagging.listing), without evidence."""
    config = config or tagger.config
    taxonomy = tagger.taxonomy
    topics = [c for c in found if taxonomy.facet(c.area) is None]
    facets = [c for c in found if taxonomy.facet(c.area) is not None]
    tags = [_tag(a, round(s, 4), tagger) for a, s in select(topics, weigher, taxonomy, config)]
    types = [
        _tag(a, round(s, 4), tagger)
        for root in taxonomy.roots
        if taxonomy.by_id[root].facet
        for a, s in select_facet(
            [f for f in facets if taxonomy.path(f.area)[0] == root], weigher, taxonomy, config
        )
    ]
    types.sort(key=lambda tag: (-tag.score, tag.id))
    return TaggedPaper(
        paper=item.paper, keyphrases=[], tags=tags, facets=types, provenance=PROVENANCE
    )


def held_out(
    folds: Iterable[Fold], judged: Sequence[JudgedPaper], tagger: Tagger, **settings: Any
) -> list[TaggedPaper]:
    """Every judged paper as its fold's weigher tags it, with ``settings`` changed."""
    config = replace(tagger.config, **settings)
    return [
        tagged(judged[i], found, fold.weigher, tagger, config)
        for fold in folds
        for i, found in zip(fold.test, fold.found, strict=True)
    ]


def candidate_recall(
    judged: Sequence[JudgedPaper], found: Sequence[list[Candidate]], tagger: Tagger
) -> tuple[float, float]:
    """The share of judged areas that are candidates at all (the area or one below it), and
    the same with an ancestor counting (lenient)."""
    taxonomy = tagger.taxonomy
    areas = strict = lenient = 0
    for item, candidates in zip(judged, found, strict=True):
        proposed = {c.area for c in candidates}
        for area in item.judgment.areas:
            areas += 1
            below = taxonomy.descendants(area) & proposed
            strict += bool(below)
            lenient += bool(below) or any(a in proposed for a in taxonomy.path(area))
    return strict / max(areas, 1), lenient / max(areas, 1)


def provenance_of(paths: Sequence[str | Path]) -> dict[str, Any]:
    """What an index or a weigher was made from: the data files with their sha256."""
    return {
        "tagger_version": tagger_version(),
        "data": [{"file": Path(p).name, "sha256": sha256(p)} for p in paths],
    }


def _tag(area: str, score: float, tagger: Tagger) -> AreaTag:
    taxonomy = tagger.taxonomy
    return AreaTag(
        id=area,
        name=area,
        path=taxonomy.path(area),
        score=score,
        evidence=[],
        crosswalk=taxonomy.crosswalk(area),
    )


PROVENANCE = Provenance(
    tagger_version="-",
    taxonomy_version="-",
    taxonomy_sha256="-",
    embedding_model="-",
    spacy_model="-",
)


def workers() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(2, cores or 1))


def note(message: str) -> None:
    print(message, file=sys.stderr)
