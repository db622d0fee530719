"""What tagger reads in a paper's words.

spaCy's analysis and markup stripping (:mod:`.text`), where a passage stands (:mod:`.context`),
keyphrase candidates and their selection (:mod:`.candidates`, :mod:`.keyphrases`), how specific
a phrase is (:mod:`.specificity`), embedding backends, the ONNX export and the static table
distilled through it (:mod:`.embedders`, :mod:`.onnx_export`, :mod:`.static_export`), and the
paper vector a tagged line keeps (:mod:`.vectors`). Reads a ``Paper``; hands on an
``Analysis``, keyphrases and embeddings. Imports the core and ``io``.
"""
