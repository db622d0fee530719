"""What a user runs on tagged output: the corpus a run made.

Filter queries (:mod:`.query`), counts by area (:mod:`.stats`), the HTML report (:mod:`.report`),
what changed between two taggings (:mod:`.diff`), agreement with authors' labels and keywords
(:mod:`.evaluate`) and with a judged set (:mod:`.judged`: the judged sets' format and how tags
are called right, neutral or wrong), suggestions to grow the taxonomy (:mod:`.suggest`), and
a review by hand in a browser that writes judgments as they are made (:mod:`.review`).
Reads tagged records through ``io.tagged``; hands on reports. Fitting the learned parts to
judged papers is the ``fitting`` stage's, above this one.
"""
