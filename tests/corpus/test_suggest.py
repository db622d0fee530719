"""tagger suggest on a small tagged corpus with the real embedding model and the test taxonomy:
which phrases become aliases, which a new area, which are left out and why; and the YAML it prints
merges into a valid taxonomy."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tagger.cli import main
from tagger.config import SuggestConfig
from tagger.corpus.suggest import Group, Suggestions, _scalar, render_overlay, render_yaml, suggest
from tagger.language.text import normalize_word
from tagger.taxonomy.loading import load_taxonomy, parse_taxonomy

from ..conftest import DATA, MINI_TAXONOMY, tagged_record, write_tagged


def _record(i, phrases, score=None, root="rl"):
    return tagged_record(
        f"p{i:02d}",
        [] if score is None else [([root], score)],
        title=f"Paper {i}",
        abstract="...",
        keyphrases=[(p, _normalized(p)) for p in phrases],
    )


def _normalized(phrase):
    """As tagger writes a keyphrase's normalised form: lower-case, singular, hyphens as spaces."""
    return " ".join(normalize_word(w) for w in re.split(r"[\s-]+", phrase))


def _corpus():
    strong = [_record(i, ["reward shaping", "deep neural networks"], 0.9, "rl") for i in range(5)]
    strong += [
        _record(i, ["node classification", "deep neural networks"], 0.9, "graphs")
        for i in range(5, 10)
    ]
    weak = [
        _record(
            10,
            [
                "graph attention network",
                "protein structure prediction",
                "Protein",
                "attention-based graph neural network",
            ],
        ),
        _record(
            11,
            [
                "graph attention model",
                "protein structure prediction",
                "multi-agent systems",
                "deep neural networks",
            ],
            0.3,
        ),
        _record(
            12,
            [
                "graph attention network",
                "protein structure prediction",
                "Protein",
                "attention-based graph neural network",
                "multi-agent system",
                "deep neural networks",
            ],
        ),
        _record(
            13,
            [
                "multi-agent system",
                "Protein",
                "node classification",
                "attention-based graph neural network",
            ],
            0.4,
        ),
    ]
    return strong + weak


def test_suggestions_from_a_small_corpus(embedder):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    result = suggest(
        _corpus(), taxonomy, embedder, SuggestConfig(weak_below=0.6, alias_similarity=0.55)
    )
    assert (result.papers, result.weak) == (14, 4)
    # Near-duplicates grouped and placed by similarity to graphs.gnn's own aliases.
    [alias] = result.aliases
    assert alias.area == "graphs.gnn"
    assert alias.phrases == ["graph attention network", "graph attention model"]
    assert alias.papers == ["p10", "p11", "p12"]
    assert 0.55 <= alias.similarity < 1
    # No area is near: a new root area, with the papers that motivate it.
    [new] = result.new_areas
    assert (new.label, new.new_id, new.papers) == (
        "protein structure prediction",
        "protein_structure_prediction",
        ["p10", "p11", "p12"],
    )
    assert new.similarity < 0.5
    # Left out: 'multi-agent system' (already an alias), 'Protein' (one ordinary word),
    # 'attention-based graph neural network' (an alias matches part of it),
    # 'deep neural networks' (as common in well-tagged papers), 'node classification' (1 weak).
    listed = {p for g in result.aliases + result.new_areas for p in g.phrases}
    assert listed == {
        "graph attention model",
        "graph attention network",
        "protein structure prediction",
    }


def test_phrases_of_generic_words_are_left_out(embedder):
    """'model training' is made of words most of the corpus uses: not a gap, however frequent."""
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    records = [_record(i, ["reward shaping"], 0.9) for i in range(20)]
    records += [
        _record(i, ["model training", "learning models", "protein structure prediction"])
        for i in range(20, 23)
    ]
    for record in records:
        record.paper.abstract = "We study model training and learning models."
    result = suggest(records, taxonomy, embedder)
    assert [g.phrases for g in result.aliases + result.new_areas] == [
        ["protein structure prediction"]
    ]
    assert (result.frequent, result.generic) == (1, 0)
    # The same corpus with abstracts that do not use those words everywhere: they come back.
    for record in records[:20]:
        record.paper.abstract = "Agents act."
    result = suggest(records, taxonomy, embedder)
    assert {p for g in result.aliases + result.new_areas for p in g.phrases} == {
        "model training",
        "learning model",
        "protein structure prediction",
    }


def test_the_snippet_is_yaml_that_merges_into_the_taxonomy(embedder):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    result = suggest(_corpus(), taxonomy, embedder, SuggestConfig(alias_similarity=0.55))
    snippet = render_yaml(result, taxonomy)
    parsed = yaml.safe_load(snippet)
    assert parsed["aliases"] == {"graphs.gnn": ["graph attention network", "graph attention model"]}
    assert "graph attention network  # 3 papers (p10, p11, p12); 0." in snippet
    assert '#   p11  "Paper 11"' in snippet
    raw = yaml.safe_load(MINI_TAXONOMY.read_text())
    by_id = {a["id"]: a for a in raw["areas"]}
    for area_id, phrases in parsed["aliases"].items():
        by_id[area_id]["aliases"] += phrases
    raw["areas"] += parsed["new_areas"]
    merged = parse_taxonomy(yaml.safe_dump(raw), source="merged.yaml")
    assert "protein_structure_prediction" in merged.by_id
    assert "graph attention network" in merged.by_id["graphs.gnn"].aliases


def test_nothing_to_suggest_is_said_and_still_yaml(embedder):
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    result = suggest(_corpus()[:10], taxonomy, embedder)  # only well-tagged papers
    snippet = render_yaml(result, taxonomy)
    assert "# Nothing to suggest" in snippet
    assert yaml.safe_load(snippet) == {"aliases": {}, "new_areas": []}


@given(st.text(min_size=1, max_size=40))
def test_any_phrase_reads_back_from_the_yaml(text):
    assert yaml.safe_load(f"key: {_scalar(text)}") == {"key": text}
    assert yaml.safe_load(f"[{_scalar(text)}, x]") == [text, "x"]


@pytest.mark.models
def test_suggest_command(tmp_path):
    path = write_tagged(tmp_path / "tagged.jsonl", _corpus())
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "suggest",
            str(path),
            "--taxonomy",
            str(MINI_TAXONOMY),
            "--alias-similarity",
            "0.55",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [(a["area"], a["papers"]) for a in data["aliases"]] == [
        ("graphs.gnn", ["p10", "p11", "p12"])
    ]
    assert [(a["id"], a["parent"]) for a in data["new_areas"]] == [
        ("protein_structure_prediction", None)
    ]

    result = runner.invoke(
        main, ["suggest", str(path), "--taxonomy", str(MINI_TAXONOMY), "--min-papers", "4"]
    )
    assert result.exit_code == 0
    assert yaml.safe_load(result.stdout) == {"aliases": {}, "new_areas": []}

    plain = tmp_path / "papers.jsonl"
    plain.write_text('{"abstract": "not tagged yet"}\n')
    result = runner.invoke(main, ["suggest", str(plain)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {plain} line 1: not a line of tagged JSONL (run `tagger tag` first)\n"
    )


@pytest.mark.models
def test_suggest_overlay_loads_as_it_is(tmp_path):
    """--overlay writes an overlay of the taxonomy in use that loads as it is: the suggested
    aliases under edit, the new areas under areas."""
    from tagger.taxonomy.loading import load_taxonomy

    path = write_tagged(tmp_path / "tagged.jsonl", _corpus())
    result = CliRunner().invoke(
        main,
        ["suggest", str(path), "--taxonomy", str(MINI_TAXONOMY), "--alias-similarity", "0.55"]
        + ["--overlay"],
    )
    assert result.exit_code == 0, result.stderr
    written = tmp_path / "overlay.yaml"
    written.write_text(result.stdout)
    assert yaml.safe_load(result.stdout)["extends"] == str(MINI_TAXONOMY.resolve())
    taxonomy, base = load_taxonomy(written), load_taxonomy(MINI_TAXONOMY)
    added = set(taxonomy.by_id["graphs.gnn"].aliases) - set(base.by_id["graphs.gnn"].aliases)
    assert added and all(
        taxonomy.origin("graphs.gnn", "aliases", k).source == str(written)
        for k in range(
            len(base.by_id["graphs.gnn"].aliases), len(taxonomy.by_id["graphs.gnn"].aliases)
        )
    )
    assert "protein_structure_prediction" in taxonomy.by_id
    nothing = CliRunner().invoke(
        main,
        ["suggest", str(path), "--taxonomy", str(MINI_TAXONOMY), "--min-papers", "4", "--overlay"],
    )
    written.write_text(nothing.stdout)
    assert load_taxonomy(written).areas == base.areas


SAMPLE = DATA / "suggest" / "iclr2024-sample.jsonl"  # 30 lines of data/iclr2024-topics.jsonl as
# tagger 0.7.0 tags it (`tagger tag ... --workers 2`), as written: the 10 papers of three gaps,
# each best tag between 0.7 and 0.9, and the first 20 whose best tag is 0.95 or more


def _opening(text):
    """The opening comment of suggest's output, unwrapped."""
    return " ".join(line[2:] for line in text.split("\n\n")[0].splitlines() if line[:2] == "# ")


@pytest.mark.models
def test_the_defaults_suggest_on_real_tagged_output():
    """Every paper has a tag and most best tags score 0.9 or more: the default weak_below finds
    the papers whose tags are in doubt and the gaps they share; the old 0.6 found none."""
    result = CliRunner().invoke(main, ["suggest", str(SAMPLE)])
    assert result.exit_code == 0, result.stderr
    assert _opening(result.stdout) == (
        f"tagger suggest {SAMPLE}: 30 papers, 10 with no tag or a best tag below 0.90. "
        "Keyphrases of at least 3 of those papers that no alias or cue matches, near-duplicates "
        "grouped (cosine >= 0.80), placed by their cosine to each area's aliases and name. "
        "3 groups are that frequent; all 3 are suggested below. Merge what you agree with into "
        "the taxonomy, then run `tagger taxonomy lint`."
    )
    parsed = yaml.safe_load(result.stdout)
    assert parsed["aliases"] == {}
    assert [(a["id"], a["aliases"][0], len(a["aliases"])) for a in parsed["new_areas"]] == [
        ("cv.video.action_space", "action space", 4),
        ("opt.stochastic.stochastic_differential_equation", "stochastic differential equation", 1),
        ("prob.graphical.markov_chains", "markov chains", 3),
    ]

    result = CliRunner().invoke(main, ["suggest", str(SAMPLE), "--weak-below", "0.6"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith(
        "name. No group is that frequent.\n\n"
        "# Nothing to suggest: no paper is weakly tagged (a best tag below 0.60); raise "
        "--weak-below to\n# look at more papers.\naliases: {}\nnew_areas: []\n"
    )


_GENERIC = (
    "left out as generic: not twice as common in weakly tagged papers as overall, or spread over "
    "many areas where tagged well"
)


@pytest.mark.parametrize(
    ("weak", "frequent", "generic", "shown", "found", "nothing"),
    [
        (
            0,
            0,
            0,
            0,
            "No group is that frequent.",
            "no paper is weakly tagged (a best tag below "
            "0.90); raise --weak-below to look at more papers.",
        ),
        (
            5,
            0,
            0,
            0,
            "No group is that frequent.",
            "no keyphrase group is in 3 weakly tagged "
            "papers; lower --min-papers or raise --weak-below to look wider.",
        ),
        (
            5,
            1,
            1,
            0,
            f"1 group is that frequent; it is {_GENERIC}.",
            "every frequent group is generic.",
        ),
        (
            5,
            2,
            2,
            0,
            f"2 groups are that frequent; all 2 of them are {_GENERIC}.",
            "every frequent group is generic.",
        ),
        (5, 1, 0, 1, "1 group is that frequent; it is suggested below.", None),
        (5, 3, 0, 3, "3 groups are that frequent; all 3 are suggested below.", None),
        (
            5,
            3,
            1,
            2,
            f"3 groups are that frequent; 1 of them is {_GENERIC}; the other 2 are "
            "suggested below.",
            None,
        ),
        (
            5,
            30,
            2,
            2,
            f"30 groups are that frequent; 2 of them are {_GENERIC}; the best 2 of the "
            "other 28 are suggested below (--limit 1 of each kind).",
            None,
        ),
    ],
)
def test_the_header_agrees_with_what_follows(weak, frequent, generic, shown, found, nothing):
    """The counts in the opening comment add up to the suggestions below it, and when there are
    none it says why and what to change (once it said "2 groups are that frequent" and then
    "Nothing to suggest: no such keyphrase is frequent enough")."""
    taxonomy = load_taxonomy(MINI_TAXONOMY)
    group = Group(
        phrases=["protein folding"],
        spellings={"protein folding": "protein folding"},
        papers=["p1", "p2", "p3"],
        titles={p: p for p in ("p1", "p2", "p3")},
        area="graphs",
        nearest="graphs",
        new_id="protein_folding",
    )
    result = Suggestions(
        source="t.jsonl",
        papers=40,
        weak=weak,
        frequent=frequent,
        generic=generic,
        settings=SuggestConfig(limit=1 if frequent - generic > shown else 25).as_dict(),
        new_areas=[group] * shown,
    )
    for text in (render_yaml(result, taxonomy), render_overlay(result, taxonomy, "builtin")):
        opening = _opening(text.replace("\nextends", "\n\nextends"))
        assert opening.startswith(f"tagger suggest t.jsonl: 40 papers, {weak} with no tag ")
        assert (found + (" Merge what" if shown else "")) in opening or (
            found + (" Delete what" if shown else "")
        ) in opening
        if shown:
            assert "Nothing to suggest" not in text
        else:
            assert opening.endswith(found)
            comments = " ".join(line[2:] for line in text.splitlines() if line[:2] == "# ")
            assert comments.endswith(f"Nothing to suggest: {nothing}")
        assert yaml.safe_load(text) is not None
