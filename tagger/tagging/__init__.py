"""Tagging: a paper in, its keyphrases and area tags out.

Candidate areas are proposed from rule hits (:mod:`.proposing`), scored by the learned weigher
(:mod:`.weigher`) and listed (:mod:`.listing`); :mod:`.pipeline` holds the ``Tagger`` that runs
spaCy, keyphrases, rules and the weigher over batches, in worker processes if asked;
:mod:`.retag` says which tagged papers a new taxonomy cannot change; :mod:`.spacy_component`
offers it all as a spaCy pipe. Reads ``Paper`` records; hands on ``TaggedPaper`` records.
Imports ``taxonomy``, ``language``, ``io`` and the core.
"""
