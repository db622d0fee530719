"""A spaCy pipeline component that puts tagger's area tags and keyphrases on a ``Doc``.

    import spacy
    import tagger.tagging.spacy_component  # registers the factory (installing tagger does too)

    nlp = spacy.blank("en")
    nlp.add_pipe("taxonomy_tagger", config={"taxonomy": "taxonomy.yaml", "min_score": 0.3})
    doc = nlp("Multi-agent reinforcement learning (MARL) with graph neural networks ...")
    doc._.area_tags        # list of AreaTag, best first
    doc._.facet_tags       # the contribution types (type.theory, ...), best first
    doc._.keyphrases       # list of Keyphrase
    doc.spans["area_evidence"]  # one Span per piece of evidence, labelled with its tag's area id

The text of the ``Doc`` is tagged as an abstract; the component runs tagger's own analysis, so it
works after any pipeline, even a blank one. Its settings are ``taxonomy`` (a path; None for the
shipped one) and every field of :class:`tagger.config.TaggerConfig`, with the same defaults.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterable, Iterator
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc

from ..config import TaggerConfig
from ..records import Paper, TaggedPaper
from .pipeline import Tagger

SPANS_KEY = "area_evidence"

for _name in ("area_tags", "facet_tags", "keyphrases"):
    if not Doc.has_extension(_name):
        Doc.set_extension(_name, default=None)


def make_taxonomy_tagger(
    nlp: Language, name: str, taxonomy: str | None = None, **settings: Any
) -> TaxonomyTagger:
    return TaxonomyTagger(Tagger.from_taxonomy(taxonomy, TaggerConfig(**settings)))


# spaCy checks a component's config against its factory's signature, and reads no **settings:
# the signature it sees lists TaggerConfig's fields, so the config object stays the one source.
make_taxonomy_tagger.__signature__ = inspect.signature(make_taxonomy_tagger).replace(
    parameters=[
        *list(inspect.signature(make_taxonomy_tagger).parameters.values())[:3],
        *(
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=field.default,
                annotation={"int": int, "float": float, "str": str}[field.type],
            )
            for field in dataclasses.fields(TaggerConfig)
        ),
    ]
)
Language.factory("taxonomy_tagger", default_config={"taxonomy": None, **TaggerConfig().as_dict()})(
    make_taxonomy_tagger
)


class TaxonomyTagger:
    """Tags each ``Doc``: ``doc._.area_tags``, ``doc._.facet_tags``, ``doc._.keyphrases`` and
    ``doc.spans["area_evidence"]`` (the topic tags' evidence)."""

    def __init__(self, tagger: Tagger) -> None:
        self.tagger = tagger

    def __call__(self, doc: Doc) -> Doc:
        return next(self.pipe([doc]))

    def pipe(self, docs: Iterable[Doc], batch_size: int | None = None) -> Iterator[Doc]:
        """Tag ``docs``, ``config.batch_size`` papers at a time (spaCy's ``batch_size`` is not
        read: the tagger batches by its configuration)."""
        docs = list(docs)
        papers = {
            i: Paper(id=str(i), abstract=doc.text) for i, doc in enumerate(docs) if doc.text.strip()
        }
        tagged = dict(zip(papers, self.tagger.tag_many(papers.values()), strict=True))
        for i, doc in enumerate(docs):
            yield _annotate(doc, tagged.get(i))


def _annotate(doc: Doc, tagged: TaggedPaper | None) -> Doc:
    doc._.area_tags = tagged.tags if tagged else []
    doc._.facet_tags = tagged.facets if tagged else []
    doc._.keyphrases = tagged.keyphrases if tagged else []
    spans = []
    for tag in doc._.area_tags:
        for evidence in tag.evidence:
            span = doc.char_span(
                evidence.start, evidence.end, label=tag.id, alignment_mode="expand"
            )
            if span is not None:
                spans.append(span)
    doc.spans[SPANS_KEY] = spans
    return doc
