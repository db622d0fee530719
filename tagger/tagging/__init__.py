"""Tagging: a paper in, its keyphrases and area tags out.

A :class:`~.reading.Reader` reads a batch of papers (spaCy, keyphrases, the paper vector, each
area's similarity, the rule hits) into plain :class:`~.reading.Reading` records; the fitted model
(:mod:`.model`) gathers each paper's votes (:mod:`.votes`: its neighbours in both indexes,
:mod:`.neighbours`, and the area model, :mod:`.areas`); :mod:`.proposing` makes its candidate
areas and their features, and :mod:`.listing` lists them as scored by the weigher
(:mod:`.weigher`). That path is written once: :mod:`.pipeline`'s ``Tagger`` tags with it,
:mod:`.retag`'s ``Retagger`` retags with it from tagged lines (:mod:`.untouched` says which lines
a new taxonomy cannot change), and tagger.fitting measures a fit with it. :mod:`.workers` runs
batches in worker processes; :mod:`.spacy_component` offers it all as a spaCy pipe. Reads
``Paper`` records; hands on ``TaggedPaper`` records. Imports ``taxonomy``, ``language``, ``io``
and the core.
"""
