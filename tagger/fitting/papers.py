"""The papers a fit reads, each read once: judged papers (their judgment, their reading by the
tagger, their rule candidates) and the papers neighbours are found among (their vector and
their candidates), the latter in worker processes and kept in a cache keyed by everything they
depend on.

Papers are grouped for holding out by their source with its variant dropped
(``corpus-2020-2023/icml2021`` and ``corpus-2020-2023/icml2021/untitled`` are one group: one
venue and year), so that a held-out group is papers of a venue and year no fit saw.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import FIT_WORKERS, TaggerConfig, usable_cores
from ..corpus.judged import Judgment
from ..errors import InputError
from ..io.files import sha256
from ..io.readers import read_papers
from ..records import Paper, source_of
from ..tagging.neighbours import abstract_key
from ..tagging.proposing import Proposal, propose_paper
from ..tagging.reading import Reader, Reading
from ..tagging.votes import NO_VOTES
from ..taxonomy.model import Taxonomy

BATCH = 32


@dataclass
class JudgedPaper:
    """One judged paper, read once: what it is judged to be, its reading (its rule hits among
    it, to propose its candidates again with each fold's votes), and its candidates with no
    votes (what the first stage reads)."""

    paper: Paper
    judgment: Judgment
    reading: Reading
    rules: Proposal

    @property
    def source(self) -> str:
        return source_of(self.paper)

    @property
    def group(self) -> str:
        return group_of(self.paper)


@dataclass
class IndexPaper:
    """One paper neighbours are found among: who it is, its stored vector, and its topic
    candidates with the first stage's features."""

    id: str
    title: str | None
    abstract: str
    vector: str
    topics: list[tuple[str, dict[str, float]]]
    source: str


def group_of(paper: Paper) -> str:
    """The group a paper is held out with: its source, without a variant such as /untitled; a
    paper that names no source is a group of its own."""
    source = source_of(paper)
    return f"paper {paper.id}" if source == "?" else source.removesuffix("/untitled")


def read_judged(
    reader: Reader, papers: Sequence[Paper], *, source: str, labels: str | None = None
) -> list[JudgedPaper]:
    """Every judged paper of ``papers`` (those with areas), read by ``reader``. With
    ``labels``, a paper's judgment is its field of that name: a label or a list of them, each an
    area's id or exact name, the first its main area (papers without one are left out).
    InputError if none is judged, or a label is no area."""
    taxonomy, config = reader.taxonomy, reader.config
    judgments = [
        labelled(paper, labels, taxonomy, source)
        if labels
        else Judgment.of_paper(paper, source=source)
        for paper in papers
    ]
    kept = [(p, j) for p, j in zip(papers, judgments, strict=True) if j is not None and j.areas]
    if not kept:
        what = f"a '{labels}' field" if labels else "a 'judged' field with areas"
        raise InputError(f"holds no judged paper ({what})", source=source)
    found = []
    for start in range(0, len(kept), BATCH):
        batch = kept[start : start + BATCH]
        readings = reader.read([paper for paper, _ in batch])
        for (paper, judgment), reading in zip(batch, readings, strict=True):
            rules = propose_paper(reading, NO_VOTES, taxonomy, config)
            found.append(JudgedPaper(paper, judgment, reading, rules))
    return found


def field_of(paper: Paper, field: str) -> Any:
    """A paper's field of that name, one of its own or one it carries beside them (None)."""
    return (paper.model_extra or {}).get(field, getattr(paper, field, None))


def labelled(paper: Paper, field: str, taxonomy: Taxonomy, source: str) -> Judgment | None:
    """The judgment a paper's field of labels makes (see read_judged); None without one."""
    value = field_of(paper, field)
    if value in (None, "", []):
        return None
    given = [value] if isinstance(value, str) else value
    if not isinstance(given, list) or not all(isinstance(v, str) for v in given):
        raise InputError(
            f"paper {paper.id!r}: {field!r} must be a label or a list of labels", source=source
        )
    by_name = {area.name: area.id for area in taxonomy.areas}
    areas = []
    for label in given:
        area = label if label in taxonomy.by_id else by_name.get(label)
        if area is None:
            guess = difflib.get_close_matches(label, [*taxonomy.by_id, *by_name], n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            raise InputError(
                f"paper {paper.id!r}: {field} {label!r} is no area of {taxonomy.label}, by id or "
                f"by name{hint}",
                source=source,
            )
        if area not in areas:
            areas.append(area)
    return Judgment(areas=tuple(areas), main=(areas[0],))


def read_index_papers(
    paths: Sequence[str | Path],
    config: TaggerConfig,
    *,
    taxonomy: str | Path | None = None,
    skip: frozenset[int] = frozenset(),
    workers: int | None = FIT_WORKERS,
    cache: str | Path | None = None,
) -> list[IndexPaper]:
    """The papers of ``paths`` (each abstract once, none whose abstract_key is in ``skip``),
    read with ``config`` and ``taxonomy`` in ``workers`` processes (None: one per core this
    process may use): their vectors and topic candidates; kept in ``cache``, if given, under a
    key of everything they depend on (tagger's source files, the taxonomy, the data, the
    settings, the papers skipped)."""
    if cache is not None:
        key = _cache_key(paths, config, taxonomy, skip)
        where = Path(cache) / f"index-papers-{key}.json"
        if where.is_file():
            return [IndexPaper(**item) for item in json.loads(where.read_text())]
        found = read_index_papers(paths, config, taxonomy=taxonomy, skip=skip, workers=workers)
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(json.dumps([asdict(item) for item in found]))
        return found
    papers, seen = [], set(skip)
    for path in paths:
        for paper in read_papers(path):
            key = abstract_key(paper.abstract)
            if key not in seen:
                seen.add(key)
                papers.append((paper, Path(path).name))
    chunks = [(config, taxonomy, papers[k : k + 64]) for k in range(0, len(papers), 64)]
    workers = usable_cores() if workers is None else workers
    if workers > 1:
        from ..tagging.workers import process_pool

        with process_pool(workers) as pool:
            done = list(pool.map(_read_chunk, chunks))
    else:
        try:
            done = [_read_chunk(chunk) for chunk in chunks]
        finally:  # kept for this read only: the file at a taxonomy's path may change before the
            _CHUNK_READER.clear()  # next, and so may the embedder (a test's fake)
    return [item for chunk in done for item in chunk]


_CHUNK_READER: dict[tuple, Reader] = {}


def _read_chunk(
    job: tuple[TaggerConfig, str | Path | None, list[tuple[Paper, str]]],
) -> list[IndexPaper]:
    config, taxonomy, chunk = job
    if (config, taxonomy) not in _CHUNK_READER:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
        from ..taxonomy.loading import load_taxonomy

        _CHUNK_READER[config, taxonomy] = Reader(load_taxonomy(taxonomy), config)
    reader = _CHUNK_READER[config, taxonomy]
    papers = [paper for paper, _ in chunk]
    out = []
    for (paper, source), reading in zip(chunk, reader.read(papers), strict=True):
        proposal = propose_paper(reading, NO_VOTES, reader.taxonomy, config)
        topics = [
            (c.area, c.features)
            for c in proposal.candidates
            if reader.taxonomy.facet(c.area) is None
        ]
        out.append(
            IndexPaper(paper.id, paper.title, paper.abstract, reading.vector, topics, source)
        )
    return out


def _cache_key(
    paths: Sequence[str | Path],
    config: TaggerConfig,
    taxonomy: str | Path | None,
    skip: frozenset[int],
) -> str:
    from ..taxonomy.loading import load_taxonomy

    digest = hashlib.sha256(repr(config).encode())
    package = Path(__file__).resolve().parents[1]
    made_here = {"model"}  # what a fit makes is not read to read papers
    data = [
        p
        for p in sorted((package / "data").rglob("*"))
        if p.is_file() and not made_here & set(p.relative_to(package / "data").parts)
    ]
    code = [p for p in sorted(package.rglob("*.py")) if "fitting" not in p.parts]
    for source in code + data:
        digest.update(source.read_bytes())
    for path in paths:
        digest.update(sha256(path).encode())
    digest.update(load_taxonomy(taxonomy).sha256.encode())
    digest.update(repr(sorted(skip)).encode())
    return digest.hexdigest()[:16]
