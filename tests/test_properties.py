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
    from tagger.io.jsonl import dumps
    from tagger.io.readers import read_papers
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


JSON_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


def _nested(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


RECORD = st.fixed_dictionaries(
    {},
    optional={
        "abstract": st.one_of(st.text(max_size=400), JSON_VALUE),
        "title": st.one_of(st.text(max_size=80), JSON_VALUE),
        "id": st.one_of(st.text(max_size=12), st.integers(), JSON_VALUE),
        "venue": st.one_of(st.text(max_size=8), JSON_VALUE),
        "year": st.one_of(st.integers(), st.text(max_size=6), JSON_VALUE),
        "keywords": st.one_of(st.text(max_size=30), st.lists(st.text(max_size=10), max_size=3)),
        "extra": JSON_VALUE,
        "deep": st.integers(min_value=0, max_value=90).map(_nested),
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(RECORD, max_size=6))
def test_every_record_is_tagged_or_reported_and_the_run_never_raises(
    hash_tagger, tmp_path_factory, records
):
    """Any JSON values in any fields, of any size: each input line ends up in the output or the
    errors report, in order, and the run ends normally."""
    import json as stdlib_json

    from tagger import tag_files

    folder = tmp_path_factory.mktemp("anything")
    source, out, errors = folder / "in.jsonl", folder / "out.jsonl", folder / "errors.jsonl"
    source.write_text("".join(stdlib_json.dumps(r) + "\n" for r in records))  # ASCII escapes
    summary = tag_files(hash_tagger, [source], out, errors=errors, warn=lambda message: None)
    written = [stdlib_json.loads(line) for line in out.read_text().splitlines()]
    rejected = {stdlib_json.loads(line)["line"] for line in errors.read_text().splitlines()}
    assert summary.tagged + summary.rejected == len(written) + len(rejected) == len(records)
    kept = [r for line, r in enumerate(records, start=1) if line not in rejected]
    assert [w["paper"]["abstract"] for w in written] == [r["abstract"] for r in kept]
