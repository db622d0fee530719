"""Properties that hold for any input (hypothesis): tagging never raises and spans stay inside
the text; filter keeps a subset of its input, in order."""

from __future__ import annotations

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tagger import Paper
from tagger.cli import main

from .conftest import MINI_TAXONOMY, PROVENANCE, tagged_record, write_tagged

WORDS = st.sampled_from(
    [
        "reinforcement",
        "learning",
        "graph",
        "neural",
        "networks",
        "(GNNs)",
        "MARL",
        "multi-agent",
        "policy",
        "gradient",
        "$\\mu$P",
        "—",
        "é",
        "\n",
        "computation graph",
        "Q-learning",
        "LLMs",
        "(",
        ")",
        "-",
        "GNN-based",
    ]
)
TEXT = st.one_of(
    st.text(min_size=1, max_size=300), st.lists(WORDS, min_size=1, max_size=40).map(" ".join)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=st.one_of(st.none(), TEXT), abstract=TEXT)
def test_tagging_any_text_never_raises_and_spans_lie_inside_it(mini_tagger, title, abstract):
    if not abstract.strip():
        abstract = abstract + "x"
    paper = Paper(title=title, abstract=abstract)
    tagged = mini_tagger.tag(paper)
    for phrase in tagged.keyphrases:
        for span in phrase.spans:
            text = title if span.field == "title" else abstract
            assert text is not None and 0 <= span.start < span.end <= len(text)
    for tag in tagged.tags:
        assert 0.0 <= tag.score < 1.0
        for ev in tag.evidence:
            text = title if ev.field == "title" else abstract
            assert text[ev.start : ev.end] == ev.text


TAG = st.sampled_from([["rl"], ["rl", "rl.multi-agent"], ["graphs"], ["graphs", "graphs.gnn"]])


@settings(max_examples=50, deadline=None)
@given(
    records=st.lists(st.lists(st.tuples(TAG, st.floats(0, 1)), max_size=3), max_size=12),
    area=st.sampled_from(["rl", "rl.multi-agent", "graphs", "graphs.gnn"]),
    min_score=st.sampled_from([0.0, 0.5]),
)
def test_filter_keeps_a_subset_of_its_input_in_order(tmp_path_factory, records, area, min_score):
    source = write_tagged(
        tmp_path_factory.mktemp("filter") / "tagged.jsonl",
        [
            tagged_record(f"p{i}", [(path, score) for path, score in tags])
            for i, tags in enumerate(records)
        ],
    )
    lines = source.read_text().splitlines(keepends=True)
    result = CliRunner().invoke(
        main,
        [
            "filter",
            str(source),
            "--area",
            area,
            "--min-score",
            str(min_score),
            "--taxonomy",
            str(MINI_TAXONOMY),
        ],
    )
    assert result.exit_code == 0, result.stderr
    kept = result.stdout.splitlines(keepends=True)
    expected = [
        line
        for line, tags in zip(lines, records, strict=True)
        if any(area in path and score >= min_score for path, score in tags)
    ]
    assert kept == expected


PLAIN = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80)


@settings(max_examples=60, deadline=None)
@given(
    papers=st.lists(
        st.builds(
            Paper,
            abstract=PLAIN.filter(str.strip),
            title=st.one_of(st.none(), PLAIN),
            venue=st.one_of(st.none(), st.sampled_from(["ICML", "ICLR"])),
            year=st.one_of(st.none(), st.integers(1990, 2030)),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_reader_reads_back_what_the_writer_wrote(tmp_path_factory, papers):
    from tagger.output import dumps
    from tagger.readers import read_papers
    from tagger.records import TaggedPaper

    provenance = PROVENANCE
    path = tmp_path_factory.mktemp("roundtrip") / "tagged.jsonl"
    path.write_bytes(
        b"".join(
            dumps(TaggedPaper(paper=p, keyphrases=[], tags=[], provenance=provenance))
            for p in papers
        )
    )
    assert list(read_papers(path)) == papers
