"""The command line, as a user runs it: exit codes, stdout holds only JSONL, errors are one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import click
import pytest
from click.testing import CliRunner
from click.types import FloatParamType

from tagger.cli import main
from tagger.io.display import short_path

from .conftest import EXAMPLES, MINI, MINI_TAXONOMY, ROOT, run

ICML = EXAMPLES / "icml2025-abstracts.txt"


def _paragraphs(path):
    return [p for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()][1:]


def _commands(group=main, prefix=("tagger",)):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield [*prefix, name], command
            yield from _commands(command, (*prefix, name))
        else:
            yield [*prefix, name], command


COMMANDS = [(["tagger"], main), *_commands()]


@pytest.fixture(scope="module")
def tagged_icml():
    """`python -m tagger tag` on a shipped example, in a real subprocess, stdout captured."""
    return subprocess.run(
        [sys.executable, "-m", "tagger", "tag", str(ICML), *MINI], capture_output=True, timeout=600
    )


@pytest.mark.models
def test_tag_writes_one_jsonl_line_per_paper_and_nothing_else(tagged_icml):
    assert tagged_icml.returncode == 0, tagged_icml.stderr.decode()
    lines = tagged_icml.stdout.decode("utf-8").splitlines()
    abstracts = _paragraphs(ICML)
    assert len(lines) == len(abstracts) == 19
    records = [json.loads(line) for line in lines]  # every stdout line is JSON
    assert [r["paper"]["abstract"] for r in records] == [a.strip() for a in abstracts]
    assert {r["paper"]["venue"] for r in records} == {"ICML"}
    assert all(r["keyphrases"] for r in records)
    assert tagged_icml.stderr.decode().strip().endswith("tagged 19 papers")


@pytest.mark.models
def test_tagged_output_filters_by_area_with_descendants(tagged_icml, tmp_path):
    tagged = tmp_path / "tagged.jsonl"
    tagged.write_bytes(tagged_icml.stdout)
    lines = tagged_icml.stdout.splitlines(keepends=True)

    def expected(area, min_score=0.0):
        return b"".join(
            line
            for line in lines
            if any(
                area in tag["path"] and tag["score"] >= min_score
                for tag in json.loads(line)["tags"]
            )
        )

    for area in ("rl", "rl.multi-agent", "graphs"):
        result = run("filter", str(tagged), "--area", area, *MINI)
        assert result.exit_code == 0
        assert result.stdout_bytes == expected(area)
    assert expected("rl") and expected("rl.multi-agent")  # the example has both
    assert len(expected("rl.multi-agent")) < len(expected("rl"))  # a child keeps fewer
    strict = run("filter", str(tagged), "--area", "rl", "--min-score", "1.0", *MINI)
    assert (strict.exit_code, strict.stdout) == (0, "")


def test_filter_unknown_area_suggests_the_closest(tmp_path):
    tagged = tmp_path / "t.jsonl"
    tagged.write_text("")
    result = CliRunner().invoke(main, ["filter", str(tagged), "--area", "rll", *MINI])
    assert result.exit_code == 2  # the option's value is wrong: a usage error
    assert result.stderr.splitlines()[-1].startswith("Error: unknown area 'rll' (did you mean rl")
    assert result.stdout == ""


@pytest.mark.parametrize("value", ["rl)", "rl and graphs", "not", "(rl"])
def test_area_takes_area_ids_only(tmp_path, value):
    tagged = tmp_path / "t.jsonl"
    tagged.write_text("")
    result = CliRunner().invoke(main, ["filter", str(tagged), "--area", value, *MINI])
    assert result.exit_code == 2
    assert result.stderr.endswith(
        f"\nError: --area {value!r} is not an area id; --area takes one id, "
        "like 'rl.offline' (combine areas with --where \"rl and not llm\")\n"
    )


def test_filter_rejects_a_file_that_is_not_tagged_jsonl(tmp_path):
    bad = tmp_path / "papers.jsonl"
    bad.write_text('{"abstract": "x"}\n')
    result = CliRunner().invoke(main, ["filter", str(bad), "--area", "rl", *MINI])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {bad} line 1: not a line of tagged JSONL (run `tagger tag` first)\n"
    )


def test_tag_missing_input_is_an_error_not_a_traceback(tmp_path):
    result = CliRunner().invoke(main, ["tag", str(tmp_path / "nope.txt"), *MINI])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'nope.txt'}: no such file\n"
    assert result.stdout == ""


def test_tag_reports_bad_records_and_keeps_going(tmp_path):
    papers = tmp_path / "papers.jsonl"
    papers.write_text(
        '{"abstract": "Reinforcement learning with policy gradient."}\n'
        '{"abstract": ""}\n{not json\n'
        '{"abstract": "Graph neural networks (GNNs) for molecules."}\n'
    )
    errors = tmp_path / "errors.jsonl"
    result = CliRunner().invoke(main, ["tag", str(papers), "--errors", str(errors), *MINI])
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 2
    rejected = [json.loads(line) for line in errors.read_text().splitlines()]
    assert [(e["line"], e["reason"]) for e in rejected] == [
        (2, "the abstract is empty"),
        (3, rejected[1]["reason"]),
    ]
    assert rejected[1]["reason"].startswith("invalid JSON")
    assert result.stderr.splitlines() == [
        f"Note: tagging with {short_path(MINI_TAXONOMY)} (version test-1)",
        f"Note: {short_path(MINI_TAXONOMY)} (version test-1) has no fitted model: its tags are "
        "weighed by rule evidence and similarity alone (no neighbours, no learned areas); "
        "tagger fit fits one to judged papers",
        f"Warning: skipped {papers} line 2: the abstract is empty",
        f"Warning: skipped {papers} line 3: {rejected[1]['reason']}",
        f"tagged 2 papers, 2 rejected: see {errors}",
    ]


def test_tag_reads_stdin():
    result = run(
        "tag",
        "-",
        *MINI,
        input="ICML 2025 Papers\n\nMulti-agent reinforcement learning (MARL) for traffic.\n",
    )
    record = json.loads(result.stdout)
    assert record["paper"]["venue"] == "ICML" and record["paper"]["year"] == 2025
    assert [t["path"] for t in record["tags"]] == [["rl", "rl.multi-agent"]]


def test_tag_options_reach_the_tagger(tmp_path):
    """Each tag option changes what is written; the default run keeps more than each of them."""
    papers = tmp_path / "p.txt"
    papers.write_text(
        "Multi-agent reinforcement learning (MARL) with graph neural networks "
        "(GNNs), policy gradient and message passing for traffic control.\n"
    )
    loose = json.loads(run("tag", str(papers), "--min-score", "0", *MINI).stdout)
    assert len(loose["tags"]) >= 2 and len(loose["keyphrases"]) >= 3
    assert loose["provenance"]["settings"] == {"min_score": 0.0}
    fewer = json.loads(run("tag", str(papers), "--min-score", "0", "--max-tags", "1", *MINI).stdout)
    likeliest = sorted(loose["tags"], key=lambda t: (-t["score"], t["id"]))[:1]
    kept = {t["id"] for t in likeliest}  # max_tags keeps the likeliest, in the same order
    assert [t["id"] for t in fewer["tags"]] == [t["id"] for t in loose["tags"] if t["id"] in kept]
    # a --min-score between the loose run's scores lists the tags that reach it (or the
    # likeliest alone, min_tags 1): fewer than the loose run
    cut = round(sum(sorted(t["score"] for t in loose["tags"])[-2:]) / 2, 2)
    strict = json.loads(run("tag", str(papers), "--min-score", str(cut), *MINI).stdout)
    reach = [t for t in strict["tags"] if t["score"] >= cut]
    assert strict["tags"] == reach or (not reach and len(strict["tags"]) == 1)
    assert 0 < len(strict["tags"]) < len(loose["tags"])


@pytest.mark.parametrize(
    ("option", "value", "fitted"), [("--top-n", "2", "10"), ("--diversity", "0.5", "0.2")]
)
def test_a_setting_the_model_was_not_fitted_with_is_refused_naming_it(
    tmp_path, option, value, fitted
):
    """The weigher's scores are probabilities only for the features it was fitted on: a setting
    that would make them otherwise is refused, in one line that names it and the way out."""
    papers = tmp_path / "p.txt"
    papers.write_text("Policy gradient methods for reinforcement learning in robotics.\n")
    result = run("tag", str(papers), option, value, *MINI)
    name = option.removeprefix("--").replace("-", "_")
    assert result.exit_code == 1 and result.stdout == ""
    [error] = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert error.startswith("Error: the packaged model (fitted on 3,900 judged papers")
    assert f"was fitted with {name}={fitted}, and its scores are probabilities only" in error
    assert error.endswith(f"or fit a model with {name}={value} (tagger fit {option} {value})")


def test_schema_is_the_json_schema_of_an_output_line():
    result = run("schema")
    schema = json.loads(result.stdout)
    assert schema["title"] == "TaggedPaper"
    assert set(schema["required"]) == {"paper", "keyphrases", "tags", "provenance"}
    assert "Evidence" in schema["$defs"]


def test_taxonomy_check_prints_the_tree():
    result = run("taxonomy", "check", *MINI)
    assert result.stdout.splitlines()[:2] == [
        "rl  Reinforcement learning  (6 rules)",
        "  rl.multi-agent  Multi-agent RL  (3 rules)",
    ]
    assert "7 areas, 3 roots, 2 levels: OK" in result.stderr


def test_taxonomy_check_broken_file_exit_code(tmp_path):
    broken = tmp_path / "t.yaml"
    broken.write_text('version: "1"\nareas:\n  - id: a\n    nam: A\n')
    result = CliRunner().invoke(main, ["taxonomy", "check", "--taxonomy", str(broken)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {broken} line 3: area 'a', field 'name': required")


def test_every_command_is_covered_below():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert names == {
        "tagger",
        "tagger tag",
        "tagger filter",
        "tagger stats",
        "tagger report",
        "tagger suggest",
        "tagger retag",
        "tagger diff",
        "tagger schema",
        "tagger eval",
        "tagger review",
        "tagger fit",
        "tagger taxonomy",
        "tagger taxonomy check",
        "tagger taxonomy lint",
        "tagger taxonomy show",
    }


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_help_ends_with_an_example_of_itself(path, command):
    result = run(*path[1:], "--help")
    assert result.exit_code == 0
    lines = [line.strip() for line in result.stdout.rstrip().splitlines()]
    commands = lines[lines.index("Example:") + 1 :]
    assert commands and all(line.startswith(" ".join(path)) for line in commands), commands
    assert command.help and len(command.help.strip()) > 20


def test_usage_error_exit_code_is_2():
    result = CliRunner().invoke(main, ["tag"])
    assert result.exit_code == 2
    result = CliRunner().invoke(main, ["tag", str(ICML), "--resume"])
    assert result.exit_code == 2
    assert "--resume needs -o FILE" in result.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["-o", "out", "--cluster", "local", "--errors", "e.jsonl"],
            "--cluster writes each partition's rejected records beside its part "
            "(part-NNNNN.errors.jsonl); --errors is for a local run",
        ),
        (
            ["-o", "out", "--cluster", "local:2", "--workers", "2"],
            "--cluster runs on the cluster's workers; --workers is for a local run",
        ),
        (["--cluster", "local"], "--cluster needs -o DIRECTORY: where the part files go"),
        (
            ["-o", "-", "--cluster", "local"],
            "--cluster needs -o DIRECTORY: where the part files go",
        ),
        (["-", "-o", "out", "--cluster", "local"], "--cluster reads files (or globs), not stdin"),
        (
            ["--partition-size", "5"],
            "--partition-size is for a run on a cluster: give --cluster too",
        ),
        (["--part-format", "jsonl"], "--part-format is for a run on a cluster: give --cluster too"),
        (["--resume"], "--resume needs -o FILE: the output of the run to continue"),
        (["-o", "-", "--resume"], "--resume needs -o FILE: the output of the run to continue"),
        (["-o", "."], "-o . is a directory: name a file (or tag with --cluster)"),
        (
            ["--format", "text", "--input-format", "text"],
            "--format is now --input-format: give --input-format alone",
        ),
        (["--year", "25"], "Invalid value for '--year': 25 is not in the range 1900<=x<=2100."),
        (
            ["--venue", " "],
            "Invalid value for '--venue': It must be a line of text (not blank, no line breaks "
            "or other control characters). Got ' ' instead.",
        ),
        (
            ["-o", "out", "--cluster", "local", "--year", "2025"],
            "--year is for a local run; give each paper its year in the files to tag on a cluster",
        ),
    ],
)
def test_what_a_run_here_or_on_a_cluster_does_not_take_is_a_usage_error(
    tmp_path, monkeypatch, args, says
):
    """`tag` runs here or on a cluster (--cluster); click checks the options of each before
    anything starts: a usage error, exit code 2, nothing written."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["tag", str(ICML), *args, *MINI])
    assert result.exit_code == 2, result.stderr
    assert result.stderr.splitlines()[-1] == f"Error: {says}"
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


def test_a_paper_list_as_people_write_it(tmp_path):
    """A header tagger knows, abstracts one per line with no blank line between them, and
    --venue and --year for the papers of a file without a header: each abstract is a paper,
    with the venue and year its header or the options give, and the header none."""
    abstracts = _paragraphs(ICML)[:3]
    listed, bare = tmp_path / "iclr.txt", tmp_path / "bare.txt"
    listed.write_text("Papers from ICLR 2025\n\n" + "\n".join(abstracts) + "\n")
    bare.write_text("\n\n".join(abstracts) + "\n")
    result = run("tag", str(listed), str(bare), "--venue", "ICML", "--year", "2024", *MINI)
    assert result.exit_code == 0, result.stderr
    papers = [json.loads(line)["paper"] for line in result.stdout.splitlines()]
    assert [(p["abstract"], p["venue"], p["year"]) for p in papers] == [
        *[(text.strip(), "ICLR", 2025) for text in abstracts],
        *[(text.strip(), "ICML", 2024) for text in abstracts],
    ]
    said = [line for line in result.stderr.splitlines() if "has no fitted model" not in line]
    assert said[1:3] == [
        f"Note: {listed} line 1: 'Papers from ICLR 2025' is the header: venue ICLR, year 2025",
        f"Warning: {listed} line 3: the paragraph holds several lines of 300 characters or "
        "more, each long enough to be an abstract: each is read as a paper (with the shorter "
        "lines before it, such as a title); put a blank line between papers to say where each "
        "ends",
    ]


def _float_options():
    """(command path, option) for every option of every command that takes a number with a
    fraction: each is checked below, so a float option added later is covered too."""
    for path, command in COMMANDS:
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.type, FloatParamType):
                yield path, param.opts[0]


FLOAT_OPTIONS = list(_float_options())


def test_the_float_options_include_the_ones_users_met():
    assert {(" ".join(path), option) for path, option in FLOAT_OPTIONS} >= {
        ("tagger tag", "--min-score"),
        ("tagger tag", "--diversity"),
        ("tagger filter", "--min-score"),
        ("tagger suggest", "--weak-below"),
    }


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999"])
@pytest.mark.parametrize(
    ("path", "option"), FLOAT_OPTIONS, ids=[f"{' '.join(p)} {o}" for p, o in FLOAT_OPTIONS]
)
def test_a_float_option_refuses_what_is_no_finite_number(tmp_path, path, option, value):
    """NaN passes every comparison with a range's ends, and infinity those of an open range:
    click refuses both before the command runs (a usage error, exit 2), naming the option."""
    result = CliRunner().invoke(main, [*path[1:], f"{option}={value}", str(tmp_path / "x")])
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr
    assert f"Error: Invalid value for '{option}'" in result.stderr, result.stderr
    assert "is not a finite number" in result.stderr, result.stderr
    assert result.stdout == ""


def test_format_still_works_with_a_note_naming_its_new_name(tmp_path):
    """`--format` was tag's input format and filter's output format: now --input-format and
    --output-format; the old spelling is read as the new one, with one note, and not shown."""
    tagged = str(EXAMPLES / "tagged" / "icml2025-abstracts.jsonl")
    new = run("filter", tagged, "--area", "rl", "--output-format", "ids")
    old = run("filter", tagged, "--area", "rl", "--format", "ids")
    assert (new.exit_code, new.stderr) == (0, "") and new.stdout.count("\n") > 1
    assert (old.exit_code, old.stdout) == (0, new.stdout)
    assert old.stderr == "Note: --format is now --output-format\n"
    papers = tmp_path / "papers.data"  # no paper format by name: read as the option says
    papers.write_text('{"abstract": "Multi-agent reinforcement learning (MARL) for traffic."}\n')
    new = run("tag", str(papers), "--input-format", "jsonl", *MINI)
    old = run("tag", str(papers), "--format", "jsonl", *MINI)
    assert (old.exit_code, old.stdout) == (new.exit_code, new.stdout) == (0, new.stdout)
    assert json.loads(new.stdout)["tags"]
    assert old.stderr.splitlines() == [
        "Note: --format is now --input-format",
        *new.stderr.splitlines(),
    ]
    for command in ("tag", "filter"):
        assert " --format" not in run(command, "--help").stdout


@pytest.mark.models
def test_installed_console_script_finds_its_own_taxonomy(tmp_path):
    """After a plain `pip install .`, the default taxonomy ships inside the package."""
    script = __import__("pathlib").Path(sys.executable).parent / "tagger"
    if not script.exists():
        pytest.skip(
            "tagger is not installed in this environment (the README's command installs it)"
        )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [str(script), "taxonomy", "check"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # run from an empty folder: a wheel without the taxonomy inside would fail here
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.rstrip().endswith(": OK")


def _labelled(tmp_path):
    papers = tmp_path / "labelled.jsonl"
    rows = [
        {
            "title": "Cooperative multi-agent reinforcement learning",
            "abstract": "Multi-agent reinforcement learning (MARL) with value decomposition.",
            "primary_area": "reinforcement learning",
            "keywords": ["multi-agent reinforcement learning"],
        },
        {
            "title": "Message passing on graphs",
            "abstract": "Graph neural networks (GNNs) with message passing for molecules.",
            "primary_area": "learning on graphs and other geometries & topologies",
            "keywords": ["graph neural networks", "molecules"],
        },
        {
            "title": "Sourdough",
            "abstract": "We bake bread and measure the crust.",
            "primary_area": "reinforcement learning",
            "keywords": ["bread"],
        },
    ]
    papers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return papers


@pytest.mark.models
def test_eval_reports_accuracy_and_keyphrase_agreement(tmp_path):
    papers = _labelled(tmp_path)
    saved = tmp_path / "tagged.jsonl"
    result = run(
        "eval",
        str(papers),
        "--scheme",
        "iclr",
        "--json",
        "--save-tagged",
        str(saved),
        "--references",
        *MINI,
    )
    report = json.loads(result.stdout)
    (level,) = report["areas"]
    # paper 1 and 2 are right at the first label; the bread paper gets no tag
    assert (level["papers"], level["coverage"], level["acc@1"]) == (
        3,
        round(2 / 3, 4),
        round(2 / 3, 4),
    )
    assert level["confusions"] == []
    assert set(report["keyphrases"]) == {"tagger", "YAKE (n=3)", "KeyBERT (1-2 grams)"}
    assert report["keyword_papers"] == 3
    # evaluating the saved tagged file gives the same figures without tagging again
    again = json.loads(run("eval", str(saved), "--scheme", "iclr", "--json").stdout)
    assert again["areas"] == report["areas"]
    assert again["keyphrases"]["tagger"] == report["keyphrases"]["tagger"]
    assert again["tagging_seconds"] is None


def test_eval_from_stdin_counts_every_record(tmp_path):
    """Regression: `tagger eval -` sniffed stdin, read it again and lost the first record."""
    papers = _labelled(tmp_path)
    saved = tmp_path / "tagged.jsonl"
    from_file = json.loads(
        run(
            "eval", str(papers), "--scheme", "iclr", "--json", "--save-tagged", str(saved), *MINI
        ).stdout
    )
    tagged = saved.read_text()
    for source in (papers.read_text(), tagged, "\n\n" + tagged):  # papers, tagged, blank lines
        piped = json.loads(
            run("eval", "-", "--scheme", "iclr", "--json", *MINI, input=source).stdout
        )
        assert piped["papers"] == 3 and piped["areas"] == from_file["areas"]
        assert piped["keyword_papers"] == 3


def test_eval_table_for_area_subtopic_scheme(tmp_path):
    papers = _labelled(tmp_path)
    result = run("eval", str(papers), "--scheme", "icml", "--gold-field", "primary_area", *MINI)
    assert result.exit_code == 0
    assert "| area |" in result.stdout and "| subtopic |" in result.stdout


@pytest.mark.models
def test_one_and_two_workers_write_byte_identical_output(tmp_path):
    """Workers are separate processes with their own models and one thread each; the output,
    in input order, must not depend on how the papers were split among them."""
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.jsonl"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tagger",
                "tag",
                str(ICML),
                str(EXAMPLES / "iclr2025-abstracts-zh-header.txt"),
                "-o",
                str(out),
                "--workers",
                workers,
                "--batch-size",
                "5",
                "--max-tags",
                "3",
                "--min-score",
                "0.4",
            ],
            capture_output=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr.decode()
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    records = [json.loads(line) for line in outputs[0].splitlines()]
    assert len(records) == 38
    # the workers were started from the configuration: its settings reached them
    assert {tuple(sorted(r["provenance"]["settings"].items())) for r in records} == {
        (("max_tags", 3), ("min_score", 0.4))
    }
    assert max(len(r["tags"]) for r in records) == 3
    # --min-score 0.4 reached them too: a tag under it is a paper's likeliest, listed alone
    for r in records:
        reach = [t for t in r["tags"] if t["score"] >= 0.4]
        assert r["tags"] == reach or (not reach and len(r["tags"]) == 1), r["paper"]["id"]


@pytest.mark.models
def test_a_killed_run_resumes_to_exactly_the_uninterrupted_output(tmp_path):
    """kill -9 in the middle of a run, then --resume: the file ends as one clean run writes it."""
    inputs = [
        str(ICML),
        str(EXAMPLES / "iclr2025-abstracts-zh-header.txt"),
        str(EXAMPLES / "iclr2025-sample.jsonl"),
    ]
    clean, broken = tmp_path / "clean.jsonl", tmp_path / "broken.jsonl"
    command = [sys.executable, "-m", "tagger", "tag", *inputs, "--batch-size", "2", *MINI]
    subprocess.run([*command, "-o", str(clean)], check=True, capture_output=True, timeout=600)

    proc = subprocess.Popen([*command, "-o", str(broken)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if broken.exists() and broken.read_bytes().count(b"\n") >= 10:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with broken.open("ab") as handle:  # as if the kill had landed in the middle of a line
        handle.write(b'{"paper": {"id": "half a li')
    partial = broken.read_bytes().count(b"\n")
    assert 10 <= partial < 50

    resumed = subprocess.run(
        [*command, "-o", str(broken), "--resume"], capture_output=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert broken.read_bytes() == clean.read_bytes()
    assert f"after the {partial} already there" in resumed.stderr.decode()


def test_resume_refuses_a_file_from_other_inputs(tmp_path):
    out = tmp_path / "out.jsonl"
    assert run("tag", str(ICML), "-o", str(out), *MINI).exit_code == 0
    result = CliRunner().invoke(
        main, ["tag", str(EXAMPLES / "iclr2025-sample.jsonl"), "-o", str(out), "--resume", *MINI]
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        f"Error: {out}: cannot resume: line 1 was not written by this run's configuration from "
        "these inputs: it holds paper 'p-"
    )


def test_a_full_disk_is_a_clear_error():
    """/dev/full fails every write with ENOSPC, as a full disk does."""
    result = CliRunner().invoke(main, ["tag", str(ICML), "-o", "/dev/full", *MINI])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith(
        "Error: cannot write /dev/full: No space left on device. The 0 lines written are complete"
    )
    assert "Traceback" not in result.stderr


def test_tagged_output_can_be_tagged_again(tmp_path):
    """A line of tagger's output read as input is its paper (through the one reader of tagged
    output): tagging the output again gives the same bytes; a broken one is rejected."""
    once, twice = tmp_path / "once.jsonl", tmp_path / "twice.jsonl"
    assert run("tag", str(ICML), "-o", str(once), *MINI).exit_code == 0
    assert run("tag", str(once), "-o", str(twice), *MINI).exit_code == 0
    assert twice.read_bytes() == once.read_bytes()
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(once.read_bytes().replace(b'"provenance"', b'"provenanc"', 1))
    result = CliRunner().invoke(main, ["tag", str(broken), *MINI])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[2] == (
        f"Warning: skipped {broken} line 1: not a line of tagged JSONL: 'provenance': "
        "field required"
    )
    assert len(result.stdout.splitlines()) == 18


@pytest.mark.parametrize(
    "args",
    [["--help"], ["filter", "examples/tagged/icml2025-abstracts.jsonl", "--area", "rl"]],
    ids=["help", "filter"],
)
def test_commands_that_tag_nothing_import_no_numpy_and_no_model(args):
    """`tagger --help` and the readers of tagged output start fast: no numpy, torch, spaCy or
    pipeline import (their start-up time, against budgets of 0.3 s and 0.5 s, is measured by
    benchmarks/bench.py, not here)."""
    code = (
        "import sys\n"
        "from tagger.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ['numpy', 'torch', 'spacy', 'sentence_transformers', 'tagger.tagging.pipeline']\n"
        "print('LOADED', [m for m in heavy if m in sys.modules], file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert "LOADED []" in done.stderr, done.stderr[-2000:]
    assert done.stdout  # the command did its work
