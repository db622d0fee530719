"""The research taxonomy: what areas there are and the rules that find them.

The model (:mod:`.model`), loading a YAML file with errors that name the line (:mod:`.loading`,
:mod:`.yamlfile`, :mod:`.problems`), overlays (:mod:`.overlays`), taxonomies kept by sha256
(:mod:`.store`), conference label schemes (:mod:`.schemes`), the rules compiled and matched
against a paper's words (:mod:`.rules`) and lint (:mod:`.lint`). Reads taxonomy files; hands on
a ``Taxonomy`` and a ``RuleSet``. Imports ``language`` (rules are matched on its normalised
words), ``io`` and the core.
"""
