"""What makes the learned parts of tagging from judged papers: the model directory ``tagger fit``
writes, and the keyphrase model.

It reads judged papers (judged/README.md gives their format; ``tagger review`` writes them too),
and papers to find neighbours among, once each (:mod:`.papers`); fits the weigher's two stages
and builds the neighbour indexes (:mod:`.weighing`) and the area model (:mod:`.areas`); measures
each fit on papers it never saw, held out by source (:mod:`.folds`), and on a sealed split when
asked; and writes the model directory tagging reads (:mod:`.modeldir`), with a report of the
figures and a precision-recall curve (:mod:`.report`). :mod:`.fit` is the whole, for the packaged
taxonomy and for a user's alike; :mod:`.keyphrases` fits the keyphrase acceptance model. It sits
above ``corpus``, whose measures it uses, so a fit is measured exactly as ``tagger eval`` measures
tagged output; nothing below it imports it.
"""
