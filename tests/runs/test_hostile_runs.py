"""Careless and hostile runs, beside the table of hostile files (test_hostile.py): outputs that
would destroy inputs, resumes of another run, two runs on one file, hostile taxonomies and
expressions, outputs a terminal or a spreadsheet would run, full disks, and the messages each
gives. Every case ends in its own outcome and one `Error:` line at most, never a traceback."""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tagger.taxonomy.loading import default_taxonomy_path

from ..conftest import ABSTRACTS, MINI, ROOT, run, tagged_record, write_tagged


def papers(path, abstracts=ABSTRACTS):
    path.write_text(
        "".join(json.dumps({"id": f"p{i}", "abstract": a}) + "\n" for i, a in enumerate(abstracts))
    )
    return path


def error_line(result, exit_code=1):
    """The one line a failed command prints: its last, starting 'Error: '."""
    assert result.exit_code == exit_code, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: ") and result.stderr.count("Error: ") == 1, result.stderr
    return last


# --- 1. no output may be an input or another output ---------------------------------------------


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_output_that_is_the_input_is_refused_before_anything_is_written(tmp_path, spelling):
    source = papers(tmp_path / "p.jsonl")
    before = source.read_bytes()
    target = {"same": source, "dot": tmp_path / "." / "p.jsonl"}.get(spelling)
    if spelling == "symlink":
        target = tmp_path / "link.jsonl"
        target.symlink_to(source)
    if spelling == "hardlink":
        target = tmp_path / "hard.jsonl"
        os.link(source, target)
    result = run("tag", source, "-o", target, *MINI)
    assert error_line(result) == (
        f"Error: the output {target} is the input {source}: writing it would destroy what is "
        "read or written there; choose another file"
    )
    assert source.read_bytes() == before


def test_errors_report_that_is_the_output_or_input_is_refused(tmp_path):
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out.jsonl"
    result = run("tag", source, "-o", out, "--errors", out, *MINI)
    assert "the errors report" in error_line(result) and not out.exists()
    result = run("tag", source, "-o", out, "--errors", source, *MINI)
    assert f"the errors report {source} is the input {source}" in error_line(result)
    assert source.read_text().count("\n") == 3


def test_report_over_its_input_is_refused(tmp_path):
    tagged = write_tagged(tmp_path / "t.jsonl", [tagged_record("a", [["rl"]])])
    before = tagged.read_bytes()
    result = run("report", tagged, "-o", tagged, *MINI)
    assert f"-o {tagged} is the input {tagged}" in error_line(result)
    assert tagged.read_bytes() == before


def test_appending_stdout_to_the_input_is_refused(tmp_path):
    """`tagger tag p.jsonl >> p.jsonl` would read its own output for ever."""
    source = papers(tmp_path / "p.jsonl")
    with source.open("ab") as stdout:
        proc = subprocess.run(
            [sys.executable, "-m", "tagger", "tag", str(source), *MINI],
            stdout=stdout,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    assert proc.returncode == 1
    assert "standard output is the input" in proc.stderr.decode()
    assert source.read_text().count("\n") == 3


def test_dash_output_means_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("tag", papers(tmp_path / "p.jsonl"), "-o", "-", *MINI)
    assert result.exit_code == 0 and result.stdout.count("\n") == 3
    assert not (tmp_path / "-").exists()


def test_an_output_inside_the_input_directory_is_warned_of_and_not_read_back(tmp_path):
    """`tagger tag DIR -o DIR/tagged.jsonl`, then `tagger tag DIR`: 6 papers from 3 (the
    hostile-input pass, item 4)."""
    folder = tmp_path / "in"
    folder.mkdir()
    with papers(folder / "p.jsonl").open("a") as source:
        source.write('{"id": "p3", "abstract": ""}\n')  # rejected: the report is not empty
    out, errors = folder / "tagged.jsonl", folder / "errors.jsonl"
    first = run("tag", folder, "-o", out, "--errors", errors, *MINI)
    assert first.exit_code == 1, first.stderr
    for what, path in [("the output", out), ("the errors report", errors)]:
        assert (
            f"Warning: {what} {path} lies inside the input directory {folder}: `tagger tag "
            f"{folder}` leaves tagger's own output out, but other tools read it all; write "
            "outputs outside the directories of papers\n"
        ) in first.stderr
    assert first.stderr.splitlines()[-1] == f"tagged 3 papers to {out}, 1 rejected: see {errors}"
    again = run("tag", folder, *MINI)
    assert again.exit_code == 1, again.stderr
    assert [json.loads(line)["paper"]["id"] for line in again.stdout.splitlines()] == [
        "p0",
        "p1",
        "p2",
    ]
    assert again.stderr.splitlines()[:2] == [
        f"Note: {folder} is a directory: reading the papers of p.jsonl",
        f"Note: {folder}: skipping tagger's own output, not papers: errors.jsonl (an errors "
        "report), tagged.jsonl (tagged output); name a file to tag its papers again",
    ]


# --- 3. a resume proves it continues the same run -----------------------------------------------


@pytest.fixture
def interrupted(tmp_path):
    """A run over three papers that stopped after two lines."""
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out.jsonl"
    assert run("tag", source, "-o", out, *MINI).exit_code == 0
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]))
    return source, out


@pytest.mark.parametrize(
    ("change", "because"),
    [
        (["--min-score", "0.5"], "min_score=default (this run: 0.5)"),
        (["--max-tags", "1"], "max_tags=default (this run: 1)"),
        (
            [
                "--taxonomy",
                str(Path(__file__).parent.parent / "data" / "taxonomies" / "clean.yaml"),
            ],
            "taxonomy version test-1 (this run: 1)",
        ),
    ],
)
def test_resume_with_other_settings_or_taxonomy_is_refused(interrupted, change, because):
    source, out = interrupted
    before = out.read_bytes()
    taxonomy = [] if "--taxonomy" in change else MINI
    result = run("tag", source, "-o", out, "--resume", *taxonomy, *change)
    line = error_line(result)
    assert line.startswith(
        f"Error: {out}: cannot resume: line 1 was not written by this run's "
        "configuration from these inputs: written with "
    )
    assert because in line
    assert out.read_bytes() == before


def test_resume_after_the_inputs_changed_is_refused(interrupted):
    source, out = interrupted
    before = out.read_bytes()
    source.write_text(source.read_text().replace("molecules", "proteins"))
    line = error_line(run("tag", source, "-o", out, "--resume", *MINI))
    assert "line 2 was not written" in line and "('abstract' changed)" in line
    source.write_text("".join(source.read_text().splitlines(keepends=True)[:1]))  # fewer
    line = error_line(run("tag", source, "-o", out, "--resume", *MINI))
    assert "the file holds 2 papers, the inputs only 1" in line
    assert out.read_bytes() == before


def test_resume_of_the_same_run_goes_on(interrupted):
    source, out = interrupted
    result = run("tag", source, "-o", out, "--resume", *MINI)
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1] == f"tagged 1 paper to {out} after the 2 already there"


# --- 4. one writer per file ---------------------------------------------------------------------


def test_a_second_run_on_a_locked_output_is_refused(tmp_path):
    source = papers(tmp_path / "p.jsonl")
    out = tmp_path / "out.jsonl"
    out.write_text("another run's first line\n")
    with out.open("ab") as other_run:
        fcntl.flock(other_run.fileno(), fcntl.LOCK_EX)  # as a running tagger holds it
        line = error_line(run("tag", source, "-o", out, *MINI))
    assert line == (
        f"Error: {out} is being written by another tagger run (it holds a lock on "
        "it); wait for that run to end, or write to another file"
    )
    assert out.read_text() == "another run's first line\n"  # not emptied


# --- 5. workers end with their parent -----------------------------------------------------------


def _children(pid):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid):
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.models
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_workers_end_when_the_parent_is_killed(tmp_path, how):
    # 479 papers, one a batch: still running when the signal comes, however fast the machine
    # (two example files were once done by then, and a SIGTERM after the end killed nothing)
    inputs = [str(ROOT / "data" / "iclr2026-dev.jsonl")]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tagger",
            "tag",
            *inputs,
            "-o",
            str(tmp_path / "out.jsonl"),
            "--workers",
            "2",
            "--batch-size",
            "1",
            *MINI,
        ],
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    workers = []
    while time.monotonic() < deadline and len(workers) < 2:
        workers = [c for c in _children(proc.pid) if "spawn_main" in _cmdline(c)]
        time.sleep(0.2)
    assert len(workers) == 2, "the workers did not start"
    out = tmp_path / "out.jsonl"
    while time.monotonic() < deadline and not (out.exists() and out.read_bytes().count(b"\n")):
        time.sleep(0.2)  # the workers have loaded their models and tag
    os.kill(proc.pid, how)
    proc.wait(timeout=60)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    assert not any(_alive(w) for w in workers)
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) < 479  # stopped mid-run
    if how == signal.SIGTERM:
        assert proc.returncode == 143
        assert proc.stderr.read().decode().splitlines()[-1].startswith("Terminated.")


# Every Python process started with this directory first on PYTHONPATH (the run and its spawned
# workers alike) embeds with the tests' HashEmbedder, each call announced by a file in $STARTED
# and then held for $HOLD seconds: workers busy for as long as a test needs.
_SLOW_EMBEDDER = f"""
import os, sys, time
sys.path.insert(0, {str(ROOT)!r})
from tests.conftest import HashEmbedder
import tagger.language.embedders as embedders


class Held(HashEmbedder):
    def embed(self, texts):
        open(os.path.join(os.environ["STARTED"], str(os.getpid())), "w").close()
        time.sleep(float(os.environ["HOLD"]))
        return super().embed(texts)


embedders.make_embedder = lambda *args, **kwargs: Held()
"""


def test_ctrl_c_stops_a_run_of_two_workers_once(tmp_path):
    """Ctrl-C twice during a two-worker directory run: it still ran 20 s later, and a third
    Ctrl-C ended in a multiprocessing traceback (hostile-input pass, item 6). The first stops
    the workers at once (terminated after a short grace), the run exits 130 with one message,
    and more Ctrl-C change nothing."""
    hook, started, folder = tmp_path / "hook", tmp_path / "started", tmp_path / "papers"
    for directory in (hook, started, folder):
        directory.mkdir()
    (hook / "sitecustomize.py").write_text(_SLOW_EMBEDDER)
    for name in ("a", "b"):
        papers(folder / f"{name}.jsonl", [f"{ABSTRACTS[i % 3]} {name} {i}" for i in range(24)])
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "STARTED": str(started),
        "HOLD": "3600",  # a batch takes an hour: a run that waits for them never ends
    }
    command = [sys.executable, "-m", "tagger", "tag", str(folder), "-o", str(tmp_path / "o")]
    proc = subprocess.Popen(
        [*command, "--workers", "2", "--batch-size", "4", *MINI],
        stderr=subprocess.PIPE,
        env=environment,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(started.iterdir())) < 2:
            time.sleep(0.1)
        busy = [int(path.name) for path in started.iterdir()]
        assert len(busy) == 2, "the two workers did not start tagging"
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: to every process of the job
        for pause in (0.3, 0.5):  # and again, while it stops
            time.sleep(pause)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)  # it does not wait for the batches: they would take an hour
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stderr = proc.stderr.read().decode()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.count("Interrupted.") == 1, stderr
    assert stderr.splitlines()[-1] == (
        "Interrupted. Lines already written are complete; `tagger tag ... -o FILE --resume` "
        "continues a run."
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_alive(w) for w in busy):
        time.sleep(0.1)
    assert not any(_alive(w) for w in busy)


def _cmdline(pid):
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_more_workers_than_cores_are_capped_and_too_many_for_memory_refused(tmp_path, monkeypatch):
    import tagger.tagging.workers

    cores = len(os.sched_getaffinity(0))
    petabyte = dict.fromkeys(tagger.tagging.workers.WORKER_MEMORY, 2**50)
    monkeypatch.setattr(tagger.tagging.workers, "WORKER_MEMORY", petabyte)  # each
    # two batches: input that fits in one is tagged without workers
    result = run("tag", papers(tmp_path / "p.jsonl"), "--workers", "64", "--batch-size", "1", *MINI)
    assert result.stderr.splitlines()[0] == (
        f"Warning: 64 workers asked for, but tagger may use {cores} cores here: using {cores}"
    )
    if cores > 1:
        assert "workers need about" in error_line(result) and "use fewer workers" in result.stderr


# --- 7. a tagged file from another taxonomy -----------------------------------------------------


def test_stats_on_a_file_of_another_taxonomy_warns(tmp_path):
    tagged = tmp_path / "t.jsonl"
    assert run("tag", papers(tmp_path / "p.jsonl"), "-o", tagged, *MINI).exit_code == 0
    # the packaged taxonomy, not the one it was tagged with
    result = run("stats", tagged, "--taxonomy", default_taxonomy_path())
    assert result.exit_code == 0
    assert result.stderr.startswith(
        f"Warning: {tagged}: paper 1 was tagged with taxonomy version test-1"
    )
    assert run("stats", tagged, *MINI).stderr == ""
    assert run("stats", tagged).stderr == ""  # the one it was tagged with, found by its sha256


# --- hostile taxonomies -------------------------------------------------------------------------


def _taxonomy(tmp_path, text, name="t.yaml"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


AREA = "  - id: {id}\n    name: {name}\n{more}"


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path):
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb = _taxonomy(tmp_path, 'version: "1"\n' + "\n".join(levels) + "\nareas: []\n")
    started = time.monotonic()
    line = error_line(run("taxonomy", "check", "--taxonomy", bomb))
    assert "YAML aliases expand this to more than 1,000,000 values" in line
    assert time.monotonic() - started < 20  # 10^9 values would take minutes and gigabytes


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            'version: "1"\nareas:\n  - id: caf\xe9\n    name: X\n'.encode("latin-1"),
            "invalid UTF-8 (byte 0xE9); save the file as UTF-8",
        ),
        ('version: "1"\nareas: []\n'.encode("utf-16"), "the file is UTF-16; save it as UTF-8"),
        (
            # 990 deep passes libyaml's own limit and used to overflow Python's stack
            'version: "1"\nareas: []\nx: ' + "[" * 990 + "]" * 990 + "\n",
            "the YAML nests more than 32 levels deep",
        ),
        (
            'version: "1"\nareas:\n'
            + "".join(
                AREA.format(id=f"a{i}", name=f"A{i}", more=f"    parent: a{i - 1}\n" if i else "")
                for i in range(1000)
            ),
            "area 'a16' lies more than 16 levels deep",
        ),
        (
            'version: "1"\nareas:\n'
            + AREA.format(
                id="x", name="X", more="    aliases: [" + " ".join(["word"] * 3000) + "]\n"
            ),
            "has 3,000 words and 14,999 characters; a rule phrase may have up to 12 words",
        ),
    ],
    ids=["latin-1", "utf-16", "nested-990", "chain-1000", "alias-3000-words"],
)
def test_hostile_taxonomies_are_one_error_line(tmp_path, content, message):
    path = _taxonomy(tmp_path, content)
    assert message in error_line(run("taxonomy", "check", "--taxonomy", path))
    assert message in run("taxonomy", "lint", "--taxonomy", path).stdout


def test_lint_reads_patterns_as_the_engine_that_runs_them(tmp_path):
    path = _taxonomy(
        tmp_path,
        'version: "1"\nareas:\n'
        + AREA.format(id="x", name="X", more="    patterns: ['\\p{Lu}{3,}RL\\b', '(a|aa)+$']\n"),
    )
    result = run("taxonomy", "lint", "--taxonomy", path)
    assert result.exit_code == 0
    assert "pattern '(a|aa)+$' can backtrack catastrophically" in result.stdout
    assert "\\p{Lu}" not in result.stdout


def test_a_pattern_that_backtracks_without_end_stops_the_run_in_one_line(tmp_path, monkeypatch):
    """No paper is tagged with a pattern left out: the run stops, names the pattern, and the
    lines it wrote before are complete."""
    import tagger.taxonomy.rules

    monkeypatch.setattr(tagger.taxonomy.rules, "PATTERN_LIMIT", 0.2)
    path = _taxonomy(
        tmp_path,
        'version: "1"\nareas:\n'
        + AREA.format(id="x", name="X", more="    patterns: ['(?:[a-z]+ ?){1,40}\\d']\n"),
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


@pytest.mark.parametrize("expression", ["(" * 1000 + "rl" + ")" * 1000, "not " * 3000 + "rl"])
def test_deeply_nested_where_is_one_error(tmp_path, expression):
    tagged = write_tagged(tmp_path / "t.jsonl", [tagged_record("a", [["rl"]])])
    line = error_line(run("filter", tagged, "--where", expression, *MINI), exit_code=2)
    assert "nest more than 50 deep" in line


# --- what reaches a spreadsheet or a terminal ---------------------------------------------------


def test_csv_cells_are_neither_formulas_nor_split_rows(tmp_path):
    record = tagged_record("a", [["rl"]], title='=HYPERLINK("http://x")\rsecond', venue="@SUM")
    tagged = write_tagged(tmp_path / "t.jsonl", [record])
    result = run("filter", tagged, "--output-format", "csv", *MINI)
    assert result.stdout_bytes == (
        b'id,title,venue,year,tags,types\r\na,"\'=HYPERLINK(""http://x"")\rsecond",\'@SUM,,rl,\r\n'
    )


def test_terminal_escapes_in_data_are_shown_not_run(tmp_path):
    record = tagged_record("a", [["rl"]], title="T\x1b[2J", venue="ICML\x1b[31m", year=2025)
    other = tagged_record("b", [["rl"]], venue="ICLR", year=2025)
    tagged = write_tagged(tmp_path / "t.jsonl", [record, other])
    stats = run("stats", tagged, *MINI).stdout
    assert "\x1b" not in stats and "ICML\\x1b[31m" in stats
    titles = run("filter", tagged, "--output-format", "titles", *MINI).stdout
    assert titles.splitlines() == ["T\\x1b[2J", "x"]


# --- tagged files that are not quite ------------------------------------------------------------


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        (lambda r: {**r, "paper": None}, "not a line of tagged JSONL (run `tagger tag` first)"),
        (lambda r: {**r, "paper": [1]}, "not a line of tagged JSONL (run `tagger tag` first)"),
        (lambda r: {**r, "tags": ["rl"]}, "'tags.0': input should be an object"),
        (lambda r: {**r, "keyphrases": "x"}, "'keyphrases': input should be a valid array"),
        (lambda r: {**r, "tags": [{**r["tags"][0], "score": "high"}]}, "'tags.0.score'"),
        (
            lambda r: {
                **r,
                "tags": [
                    {
                        **r["tags"][0],
                        "evidence": [
                            {
                                "area": "rl",
                                "kind": "alias",
                                "rule": "r",
                                "text": "x",
                                "field": "abstract",
                                "start": "zero",
                                "end": 1,
                                "weight": 1.0,
                            }
                        ],
                    }
                ],
            },
            "'tags.0.evidence.0.start'",
        ),
    ],
    ids=[
        "paper-null",
        "paper-list",
        "tags-strings",
        "keyphrases-string",
        "score-string",
        "start-string",
    ],
)
@pytest.mark.parametrize("command", ["stats", "filter", "report"])
def test_bad_lines_of_a_tagged_file_are_skipped_and_said(tmp_path, command, mangle, reason):
    good = json.loads(json.dumps(tagged_record("a", [["rl"]]).model_dump(mode="json")))
    bad = mangle(json.loads(json.dumps(good)))
    tagged = tmp_path / "t.jsonl"
    tagged.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n" + json.dumps(good) + "\n")
    result = run(command, tagged, *MINI)
    assert result.exit_code == 1
    warning = next(line for line in result.stderr.splitlines() if line.startswith("Warning"))
    assert warning.startswith(f"Warning: skipped {tagged} line 2: ") and reason in warning
    assert result.stderr.splitlines()[-1] == "1 line skipped"
    if command == "filter":
        assert result.stdout.count("\n") == 2  # the two good lines


def test_a_truncated_tagged_file_is_read_up_to_its_last_whole_line(tmp_path):
    tagged = write_tagged(
        tmp_path / "t.jsonl", [tagged_record("a", [["rl"]]), tagged_record("b", [["rl"]])]
    )
    tagged.write_bytes(tagged.read_bytes()[:-40])
    result = run("stats", tagged, "--json", *MINI)
    assert json.loads(result.stdout)["papers"] == 1
    assert f"{tagged} line 2: the file ends in the middle of this line" in result.stderr


def test_lint_corpus_that_is_not_utf8_is_one_error(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(b'{"paper": "caf\xe9"}\n')
    line = error_line(run("taxonomy", "lint", *MINI, "--corpus", corpus))
    assert line == f"Error: {corpus} line 1: not a line of tagged JSONL (run `tagger tag` first)"


# --- files that cannot be written ---------------------------------------------------------------


@pytest.mark.parametrize("option", ["-o", "--errors"])
def test_an_output_in_a_missing_or_forbidden_directory_is_one_error(tmp_path, option):
    source = papers(tmp_path / "p.jsonl")
    missing = tmp_path / "no" / "dir" / "out.jsonl"
    assert error_line(run("tag", source, option, missing, *MINI)) == (
        f"Error: cannot write {missing}: No such file or directory"
    )
    forbidden = Path("/sys/tagger-test.jsonl")  # sysfs refuses new files even to root
    assert error_line(run("tag", source, option, forbidden, *MINI)) == (
        f"Error: cannot write {forbidden}: Permission denied"
    )


def test_resume_on_a_file_that_cannot_be_written_is_one_error(interrupted, monkeypatch):
    import tagger.io.files

    source, out = interrupted
    real = tagger.io.files.os.open

    def read_only(path, flags, *args):
        if str(path) == str(out) and flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, flags, *args)

    monkeypatch.setattr(tagger.io.files.os, "open", read_only)
    assert error_line(run("tag", source, "-o", out, "--resume", *MINI)) == (
        f"Error: cannot write {out}: Permission denied"
    )


def test_eval_save_tagged_into_a_missing_directory_fails_before_tagging(tmp_path):
    source = tmp_path / "l.jsonl"
    source.write_text(json.dumps({"abstract": ABSTRACTS[0], "primary_area": "x"}) + "\n")
    missing = tmp_path / "no" / "t.jsonl"
    result = run("eval", source, "--scheme", "iclr", "--save-tagged", missing, *MINI)
    assert error_line(result) == f"Error: cannot write {missing}: No such file or directory"


@pytest.mark.parametrize(
    "command",
    [
        ["filter", "{tagged}"],
        ["stats", "{tagged}"],
        ["report", "{tagged}"],
        ["schema"],
        ["taxonomy", "check"],
        pytest.param(["tag", "{papers}"], marks=pytest.mark.models),  # a subprocess: real model
    ],
    ids=["filter", "stats", "report", "schema", "check", "tag"],
)
def test_a_full_disk_on_stdout_is_one_error(tmp_path, command):
    tagged = write_tagged(
        tmp_path / "t.jsonl", [tagged_record(f"p{i}", [["rl"]]) for i in range(2000)]
    )
    source = papers(tmp_path / "p.jsonl")
    args = [a.format(tagged=tagged, papers=source) for a in command]
    with open("/dev/full", "wb") as full:
        taxonomy = [] if args[0] == "schema" else MINI
        proc = subprocess.run(
            [sys.executable, "-m", "tagger", *args, *taxonomy],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=300,
        )
    stderr = proc.stderr.decode()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0], stderr
    if args[0] == "tag":
        assert "--resume" not in errors[0] and "-o FILE" in errors[0]


def test_dev_zero_is_refused_without_filling_the_memory():
    result = run("tag", "/dev/zero", *MINI)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-2:] == [
        "Warning: skipped /dev/zero: line 1 is longer than 64 MB: this is not a file of papers "
        "(or its lines have no ends)",
        "tagged 0 papers, 1 rejected",
    ]


def test_a_gzip_file_is_read_whatever_its_name(tmp_path):
    path = tmp_path / "papers.bin"
    path.write_bytes(gzip.compress(papers(tmp_path / "p.jsonl").read_bytes()))
    result = run("tag", path, "--input-format", "jsonl", *MINI)
    assert result.exit_code == 0 and result.stdout.count("\n") == 3
