"""Everything that reads tagged output: the corpus a run made.

Filter queries (:mod:`.query`), counts by area (:mod:`.stats`), the HTML report (:mod:`.report`),
what changed between two taggings (:mod:`.diff`), agreement with authors' labels and keywords
(:mod:`.evaluate`), the judged sets (:mod:`.judged`) and fitting the learned models to them
(:mod:`.calibrate`), and suggestions to grow the taxonomy (:mod:`.suggest`). Reads tagged
records through ``io.tagged``; hands on reports.
"""
