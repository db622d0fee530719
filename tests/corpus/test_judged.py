"""Tags measured against judgments: the verdicts and figures worked out by hand; `tagger eval
--judged` says how many papers it matched, and refuses in one line a judged file that judges
nothing, none of the papers, or is malformed; the judged set itself is well formed; taxonomy
rules that keep a word to its sense (requires, fallback)."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner

from tagger import InputError, Paper, Tagger, TaggerConfig
from tagger.cli import main
from tagger.corpus.judged import Judgment, evaluate_judged, render_judged, verdicts
from tagger.tagging.model import FittedModel
from tagger.taxonomy.loading import load_taxonomy, parse_taxonomy

from ..conftest import (
    MINI,
    MINI_TAXONOMY,
    ROOT,
    HashEmbedder,
    error_line,
    model_dir,
    run,
    tagged_record,
    write_tagged,
)

JUDGED = ROOT / "judged" / "judged.jsonl"
JUDGED_PHRASES = ROOT / "judged" / "keyphrases.jsonl"


def _judged(paper_id, paths, *, areas, main, acceptable=(), types=("method",), **fields):
    record = tagged_record(paper_id, paths, **fields)
    record.paper.__pydantic_extra__["judged"] = {
        "areas": list(areas),
        "main": list(main),
        "acceptable": list(acceptable),
        "type": list(types),
    }
    return record


def test_verdicts_by_hand():
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    record = tagged_record(
        "a",
        [
            (["rl", "rl.multi-agent"], 0.9),
            (["rl"], 0.8),
            (["graphs"], 0.6),
            (["graphs", "graphs.gnn"], 0.5),
        ],
    )
    judgment = Judgment(areas=("rl.multi-agent",), main=("rl.multi-agent",), acceptable=("graphs",))
    # a parent of a judged area is right; an acceptable area is neutral; anything else wrong
    assert verdicts(record.tags, judgment, taxonomy) == ["right", "right", "neutral", "wrong"]


def test_figures_by_hand():
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    records = [
        # right first and specific; one wrong tag
        _judged(
            "a",
            [(["rl", "rl.multi-agent"], 0.95), (["graphs"], 0.75)],
            areas=["rl.multi-agent"],
            main=["rl.multi-agent"],
        ),
        # only the parent of the judged area: recall counts it leniently, first tag not specific
        _judged("b", [(["graphs"], 0.85)], areas=["graphs.gnn", "rl"], main=["graphs.gnn"]),
        _judged("c", [], areas=["rl"], main=["rl"]),  # untagged
    ]
    report = evaluate_judged(records, taxonomy)
    assert (report.papers, report.tags, report.untagged) == (3, 3, 1)
    assert dict(report.counts) == {"right": 2, "wrong": 1}
    assert report.precision == pytest.approx(2 / 3)
    assert report.papers_with_wrong == 1
    assert (report.areas, report.found, report.found_lenient) == (4, 1, 2)
    assert (report.first_is_specific, report.first_is_main) == (1, 1)
    assert report.root_first == 1  # b: the root graphs first, where the judge named graphs.gnn
    rows = {round(r["from"], 1): (r["tags"], r["precision"]) for r in report.calibration()}
    assert rows == {0.7: (1, 0.0), 0.8: (1, 1.0), 0.9: (1, 1.0)}
    assert report.largest_gap() == 0.0  # no bin reaches 10 tags
    assert report.largest_gap(min_tags=1) == pytest.approx(0.75)


def test_a_root_first_counts_only_where_the_judge_named_an_area_below_it():
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    records = [
        _judged("a", [(["rl"], 0.9)], areas=["rl"], main=["rl"]),  # the root is what was named
        _judged("b", [(["rl"], 0.9)], areas=["rl.multi-agent"], main=["rl.multi-agent"]),
        _judged("c", [(["rl"], 0.9)], areas=["graphs.gnn"], main=["graphs.gnn"]),  # wrong root
        _judged(
            "d",
            [(["rl", "rl.multi-agent"], 0.9), (["rl"], 0.8)],
            areas=["rl.multi-agent"],
            main=["rl.multi-agent"],
        ),  # the child first, its root after it
    ]
    report = evaluate_judged(records, taxonomy)
    assert report.root_first == 1
    assert report.as_dict()["root_first_child_judged"] == 0.25
    assert "a root where the judge named an area below it: 1 of 4 papers (0.250)" in (
        render_judged(report).replace("\n", " ")
    )


def test_contribution_types_by_hand():
    """A listed type is right when the judged types name it; recall counts judged types listed."""
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    theory, dataset = (["type", "type.theory"], 0.9), (["type", "type.dataset"], 0.72)
    records = [
        _judged("a", [], areas=["rl"], main=["rl"], types=["theory", "method"], facets=[theory]),
        _judged("b", [], areas=["rl"], main=["rl"], types=["theory"], facets=[theory, dataset]),
        _judged("c", [], areas=["rl"], main=["rl"], types=["dataset"]),
    ]
    types = evaluate_judged(records, taxonomy).types.as_dict()
    assert (types["listed"], types["precision"], types["papers_with_a_wrong_type"]) == (
        3,
        round(2 / 3, 4),
        round(1 / 3, 4),
    )
    assert (types["recall"], types["types_per_paper"]) == (0.5, 1.0)  # 2 of 4 judged types
    assert types["by_type"] == {
        "type.theory": {"judged": 2, "listed": 2, "right": 2},
        "type.method": {"judged": 1},
        "type.dataset": {"judged": 1, "listed": 1, "right": 0},
    }


def test_a_judgment_naming_an_area_the_taxonomy_lacks_is_an_error():
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    record = _judged("a", [], areas=["rl.nonexistent"], main=["rl.nonexistent"])
    with pytest.raises(InputError, match="rl.nonexistent"):
        evaluate_judged([record], taxonomy)


def test_eval_judged_from_the_command_line(tmp_path):
    path = write_tagged(
        tmp_path / "t.jsonl",
        [
            _judged(
                "a",
                [(["rl", "rl.multi-agent"], 0.95)],
                areas=["rl.multi-agent"],
                main=["rl.multi-agent"],
                source="x",
            ),
            _judged("b", [(["graphs"], 0.85)], areas=["rl"], main=["rl"], source="y"),
        ],
    )
    result = CliRunner().invoke(
        main, ["eval", "--judged", str(path), "--json", "--taxonomy", str(MINI_TAXONOMY)]
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["tag_precision"], data["papers_with_a_wrong_tag"]) == (0.5, 0.5)
    assert data["by_source"]["x"]["right"] == 1 and data["by_source"]["y"]["wrong"] == 1
    assert data["in_sample"] is False
    usage = CliRunner().invoke(main, ["eval", "--judged", str(path), "--scheme", "iclr"])
    assert usage.exit_code == 2


def _judged_file(path, judged_fields):
    path.write_text(
        "".join(
            json.dumps({"id": paper_id, "abstract": "x", **({"judged": j} if j else {})}) + "\n"
            for paper_id, j in judged_fields
        )
    )
    return path


@pytest.fixture
def judged_tagged(tmp_path):
    """Tagged papers that carry judgments of their own (what --judged must not fall back to)."""
    records = []
    for paper_id in ("a", "b"):
        record = tagged_record(paper_id, [["rl"]])
        record.paper.__pydantic_extra__["judged"] = {"areas": ["rl"], "main": ["rl"]}
        records.append(record)
    return write_tagged(tmp_path / "t.jsonl", records)


def test_eval_against_a_file_of_no_judgments_is_refused(tmp_path, judged_tagged):
    judged = _judged_file(tmp_path / "j.jsonl", [("a", None), ("b", None)])
    line = error_line(run("eval", judged_tagged, "--judged", judged, *MINI))
    assert line == (
        f"Error: {judged}: holds no judgments: no paper has a 'judged' field (judged/README.md "
        "says how one is written)"
    )


def test_eval_with_no_judged_paper_matched_is_refused(tmp_path, judged_tagged):
    judged = _judged_file(tmp_path / "j.jsonl", [("x", {"areas": ["rl"], "main": ["rl"]})])
    line = error_line(run("eval", judged_tagged, "--judged", judged, *MINI))
    assert line == (
        f"Error: {judged_tagged}: nothing to measure: none of its 2 papers has a judgment in "
        f"{judged} (1 papers judged, matched by id): are they the same papers?"
    )


def test_eval_says_how_many_papers_were_matched(tmp_path, judged_tagged):
    judged = _judged_file(
        tmp_path / "j.jsonl",
        [("a", {"areas": ["graphs"], "main": ["graphs"]}), ("z", {"areas": ["rl"]})],
    )
    result = run("eval", judged_tagged, "--judged", judged, "--json", *MINI)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        f"Note: 1 of the 2 papers of {judged_tagged} have a judgment in {judged} (2 papers "
        "judged, matched by id)\n"
    )
    data = json.loads(result.stdout)
    assert (data["papers"], data["wrong"]) == (1, 1)  # judged by j.jsonl, not by its own field


def test_eval_judged_of_a_file_without_judgments_is_refused(tmp_path):
    tagged = write_tagged(tmp_path / "t.jsonl", [tagged_record("a", [["rl"]])])
    line = error_line(run("eval", "--judged", tagged, *MINI))
    assert line == (
        f"Error: {tagged}: nothing to measure: none of its 1 paper is judged (has a 'judged' field)"
    )


@pytest.mark.parametrize(
    ("judgment", "reason"),
    [
        (
            {"areas": ["rl"], "keyphrases": ["graph neural network"]},
            "'judged.keyphrases': must be an object",
        ),
        ({"areas": [{"id": "rl"}]}, "'judged.areas.0': must be a string"),
        ({"areas": "rl", "main": "rl"}, "'judged.areas': must be a list"),
        (
            {"keyphrases": {"graphs": "good"}},
            "'judged.keyphrases.graphs': input should be "
            "'accept', 'fragment', 'generic', 'vague', 'passing' or 'noise'",
        ),
        ("rl", "'judged': must be an object"),
    ],
    ids=["keyphrases-list", "areas-objects", "areas-string", "label-unknown", "judged-string"],
)
def test_a_malformed_judgment_is_one_error(tmp_path, judged_tagged, judgment, reason):
    judged = _judged_file(tmp_path / "j.jsonl", [("a", judgment)])
    for args in (["eval", judged_tagged, "--judged", judged], ["eval", "--judged", judged]):
        line = error_line(run(*args, *MINI))
        assert line == f"Error: {judged}: paper 'a': {reason} (judged/README.md gives the format)"


def test_the_report_says_whether_the_models_were_fitted_on_the_judged_file(tmp_path):
    """In sample: every paper scored by this version, by a weigher (or keyphrase model) fitted
    on the judged file measured. The library says so, to the command line and to Python alike."""
    from tagger.config import tagger_version
    from tagger.tagging.model import RECORD

    judged = tmp_path / "judged.jsonl"  # a model records the sha256 of the file it was fitted on
    judged.write_text("the judged papers\n")
    model = model_dir(tmp_path / "model", MINI_TAXONOMY)  # no part of another space: it is used
    record = json.loads((model / RECORD).read_text())
    record["fitted_on"]["sha256"] = [hashlib.sha256(judged.read_bytes()).hexdigest()]
    (model / RECORD).write_text(json.dumps(record))
    tagger = Tagger.from_taxonomy(MINI_TAXONOMY, TaggerConfig(model=str(model)))
    other = _judged("a", [(["rl"], 0.9)], areas=["rl"], main=["rl"])  # tagged by version 9.9
    ours = other.model_copy(deep=True)
    ours.provenance.tagger_version = tagger_version()
    records = [ours]

    def in_sample(records, source, **options):
        report = evaluate_judged(records, tagger.taxonomy, source=str(source), **options)
        return report.in_sample, report.keyphrases.in_sample

    assert in_sample(records, judged, tagger=tagger) == (True, False)
    assert in_sample(records, JUDGED_PHRASES, tagger=tagger) == (False, True)
    assert in_sample(records, "x", judged_source=str(judged), tagger=tagger) == (True, False)
    assert in_sample(records, judged) == (False, False)  # no tagger: nothing said
    assert in_sample([ours, other], judged, tagger=tagger) == (False, False)  # not all ours


def test_keyphrases_against_judged_phrases_by_hand(tmp_path):
    labels = {
        "Large language": "fragment",
        "reinforcement learning": "accept",
        "deep reinforcement learning": "accept",
        "learning": "generic",
        "Policy Gradients": "accept",
        "offline RL": "accept",
    }
    record = tagged_record(
        "a",
        keyphrases=[
            "reinforcement learning",  # contained in the next one
            "deep reinforcement learning",
            "large language",
            "learning",  # one word, not accepted; also inside the first two
            "policy gradient",  # judged as 'Policy Gradients': matched by stemmed words
            "unjudged phrase",  # sixth: not in the first five, not counted
        ],
        source="x",
        keywords=["Reinforcement Learning", "policy gradients"],
    )
    record.paper.__pydantic_extra__["judged"] = {"keyphrases": labels}
    path = write_tagged(tmp_path / "t.jsonl", [record])
    result = CliRunner().invoke(main, ["eval", "--judged", str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    phrases = data["keyphrases"]
    assert data["papers"] == 0  # no areas judged: no tag figures
    assert (phrases["papers"], phrases["judged"], phrases["unjudged"]) == (1, 5, 0)
    assert phrases["labels"] == {
        "accept": 3, "fragment": 1, "generic": 1, "vague": 0, "passing": 0, "noise": 0
    }  # fmt: skip
    assert phrases["acceptance"] == 0.6 and phrases["fragments"] == 0.2
    assert phrases["single_words_rejected"] == 0.2
    assert phrases["contained_in_another"] == 0.4  # 'reinforcement learning' and 'learning'
    assert phrases["by_source"] == {"x": {"papers": 1, "listed": 5, "accept": 3}}
    # F1@5 against the authors' keywords: 2 of 5 listed match, both keywords found
    assert phrases["keyword_papers"] == 1
    assert phrases["f1_at_5"] == pytest.approx(round(2 * 0.4 * 1.0 / 1.4, 4))
    text = CliRunner().invoke(main, ["eval", "--judged", str(path)]).stdout
    assert "the first 5 keyphrases of 1 judged papers" in text and "| 0.600 | 0.200 |" in text


def test_a_top_5_is_coded_as_a_reader_codes_it(tmp_path):
    """READING.md's codes: a phrase accepted alone is RED beside an accepted one that holds it
    word for word, or beside a higher-ranked name of the same thing; rejected labels read as
    NOISE, FRAG or GEN."""
    labels = {
        "ViTs": "accept",
        "vision transformers": "accept",
        "pruning": "accept",
        "online structured pruning": "accept",
        "deep learning": "generic",
    }
    record = tagged_record(
        "a",
        keyphrases=[
            "vision transformer",  # accepted, kept: nothing higher names it
            "pruning",  # RED: inside 'online structured pruning', accepted
            "ViTs",  # RED: named the same as 'vision transformers', higher up
            "online structured pruning",
            "deep learning",  # GEN
        ],
        source="x",
    )
    same = [["ViTs", "Vision Transformers"]]
    record.paper.__pydantic_extra__["judged"] = {"keyphrases": labels, "same": same}
    path = write_tagged(tmp_path / "t.jsonl", [record])
    result = CliRunner().invoke(main, ["eval", "--judged", str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    read = json.loads(result.stdout)["keyphrases"]["read_as_readers"]
    assert read == {"NOISE": 0.0, "FRAG": 0.0, "GEN": 0.2, "RED": 0.4, "ACCEPT": 0.4}


def test_the_judged_keyphrase_set_is_well_formed():
    """300 papers, every pooled phrase with one of the six labels; the shipped keyphrase model
    was fitted on exactly this file."""
    from tagger.corpus.judged_phrases import PHRASE_LABELS
    from tagger.language.keyphrases import AcceptanceModel

    lines = [json.loads(line) for line in JUDGED_PHRASES.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len({line["id"] for line in lines}) == 300
    by_id = {json.loads(line)["id"] for line in JUDGED.read_text(encoding="utf-8").splitlines()}
    for line in lines:
        assert line["id"] in by_id
        phrases = line["judged"]["keyphrases"]
        assert len(phrases) >= 20 and set(phrases.values()) <= set(PHRASE_LABELS)
    about = AcceptanceModel.load().about
    digest = hashlib.sha256(JUDGED_PHRASES.read_bytes()).hexdigest()
    assert about["fitted_on"] == "keyphrases.jsonl" and about["judged_sha256"] == digest


# Areas a reader listed beside one of their own ancestors (the checker the readers ran did not
# look for it): kept as written; the ancestor is implied by the area anyway, so it is harmless.
WITH_ANCESTOR = {
    ("judged.jsonl", "neurips2020-76d9e280e312", "gen.autoregressive"),
    ("judged.jsonl", "ypAT2ixD4X", "dl.compression.pruning"),
    ("sealed.jsonl", "VLFhbOCz5D", "transfer.multitask"),
}


@pytest.mark.parametrize(
    ("name", "papers"),
    [("judged.jsonl", 3900), ("sealed.jsonl", 600), ("second-reader.jsonl", 400)],
)
def test_the_judged_sets_are_well_formed(name, papers):
    """Each paper judged with areas the taxonomy has, main among them, known types, and no
    area listed with its own ancestor but the three WITH_ANCESTOR gives."""
    taxonomy = load_taxonomy()
    path = ROOT / "judged" / name
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len({line["id"] for line in lines}) == papers
    for line in lines:
        judged = line["judged"]
        assert judged["areas"] and set(judged["main"]) <= set(judged["areas"])
        for area in (*judged["areas"], *judged.get("acceptable", [])):
            assert area in taxonomy.by_id, (line["id"], area)
        for area in judged["areas"]:
            ancestors = set(taxonomy.path(area)[:-1])
            if ancestors & set(judged["areas"]):
                assert (name, line["id"], area) in WITH_ANCESTOR
        assert set(judged["type"]) <= {
            "method",
            "theory",
            "dataset",
            "analysis",
            "survey",
            "system",
        }


def test_the_sealed_papers_are_in_no_other_judged_file():
    """The sealed split shares no paper (by id or by abstract) with the judged set, and the
    second reader judged only unsealed papers."""

    def read(name):
        path = ROOT / "judged" / name
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    sealed, judged = read("sealed.jsonl"), read("judged.jsonl")
    assert not {r["id"] for r in sealed} & {r["id"] for r in judged}
    assert not {r["abstract"].strip() for r in sealed} & {r["abstract"].strip() for r in judged}
    assert {r["id"] for r in read("second-reader.jsonl")} <= {r["id"] for r in judged}


@pytest.mark.models
def test_the_shipped_weigher_was_fitted_on_the_judged_set():
    assert FittedModel.load().fitted_on(JUDGED)


RULES = """version: "1"
areas:
  - id: lm
    name: Language models
    aliases: [language model]
  - id: lm.agents
    name: LM agents
    parent: lm
    cues: [agents]
    requires: [language model]
  - id: lm.general
    name: Language models in general
    parent: lm
    fallback: true
    cues: [transformer]
  - id: lm.code
    name: Code
    parent: lm
    aliases: [code generation]
"""


@pytest.fixture(scope="module")
def everything():
    """A tagger over RULES that lists every candidate, whatever its score, but a parent or a
    catch-all beside a proposed area below or beside it (specific_at 0)."""
    config = TaggerConfig(min_score=0.0, specific_at=0.0)
    return Tagger(parse_taxonomy(RULES), config, embedder=HashEmbedder())


def test_requires_keeps_a_word_to_its_sense(everything):
    bandit = Paper(abstract="Several agents share the arms of a bandit and learn together.")
    assert [t.id for t in everything.tag(bandit).tags] == []
    llm = Paper(abstract="A language model steers agents that browse the web.")
    assert "lm.agents" in [t.id for t in everything.tag(llm).tags]


def test_contribution_types_are_facets_not_topics():
    """A facet's values are weighed apart from the topics and listed in ``facets``; the facet's
    root never is."""
    taxonomy = parse_taxonomy(
        RULES
        + """  - id: type
    name: Contribution type
    facet: true
  - id: type.theory
    name: Theory
    parent: type
    aliases: [we prove, regret bound]
"""
    )
    config = TaggerConfig(min_score=0.0, specific_at=0.0)
    tagger = Tagger(taxonomy, config, embedder=HashEmbedder())
    tagged = tagger.tag(Paper(abstract="We prove a regret bound for code generation."))
    assert [t.id for t in tagged.tags] == ["lm.code"]
    assert [t.id for t in tagged.facets] == ["type.theory"]
    assert [e.text for e in tagged.facets[0].evidence] == ["We prove", "regret bound"]


def test_a_fallback_is_listed_only_when_no_sibling_is(everything):
    alone = Paper(abstract="We study the transformer and its attention patterns in depth.")
    assert [t.id for t in everything.tag(alone).tags] == ["lm.general"]
    both = Paper(abstract="A transformer for code generation, trained on repositories.")
    assert [t.id for t in everything.tag(both).tags] == ["lm.code"]
