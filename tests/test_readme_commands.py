"""Every shell command the README and the documentation site's pages show, and every example a
``--help`` text ends with, runs as pasted and prints what the page says it prints.

A reader who has run the README's setup command (its virtual environment active, so that bare
``tagger`` and ``python3`` are the environment's) pastes the commands into a fresh clone, the
README's first, then each page's in the order of the site's navigation (mkdocs.yml), one file
feeding the next. These tests do that in a copy of the repository's files (data included) in
``tmp_path``, with ``bash``, the Python environment's ``bin`` first on ``PATH`` and
``HF_HUB_OFFLINE=1``. What the commands write must be what the checkout's ``.gitignore`` ignores
(``tagged.jsonl``, ``scratch/``): pasting them leaves no untracked file behind.

What is compared, strictly:

- A ```` ```console ```` block is a session: a line ``$ CMD`` is a command (continued on the next
  lines while a quote is open or a line ends in ``\\``), and the lines up to the next command are
  what it prints, stdout and stderr together as on a terminal. Each printed line must be equal to
  the README's, trailing spaces aside; a line that is only ``...`` stands for any number of lines.
  No number is skipped: the pages show no timing in these blocks.
- A ```` ```bash ```` or ```` ```sh ```` block is pasted whole and must exit 0.
- A command exits 0, or 1 when what the page shows it print holds an ``Error:`` line, or as
  ``EXIT_CODES`` says.
- A ``--help`` example must exit 0 (or as ``EXIT_CODES`` says) and print no ``Error:``. The
  examples run after the README's commands, in the same copy (the files they name, such as
  ``tagged.jsonl``, are the ones the pages made), in the order of the README's command table.

What cannot run in a test is in ``SKIPPED``, each with its reason, and the list must not go stale.
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tagger.cli import main

from .conftest import ROOT, docs_pages

README_PATH = ROOT / "README.md"
# where a reader pastes commands from, in the order they read: the README, then the site's pages
PAGES = [README_PATH, *docs_pages()]

# A command (a `$` command of a console block, a whole bash block, a --help example) that contains
# one of these is not run, for the reason given.
SKIPPED = {
    "pip install": "installs packages: the setup commands (.ci/run runs the second as written)",
    "arxiv/*.jsonl.gz": "reads the user's own corpus, which the cluster how-to names as an example",
    # the test run's time (under 10 minutes): these tag 479, 500 and 300 papers, and
    # docs/make_eval.sh runs the same evaluations
    "tagger eval data/iclr2026-dev.jsonl": "tags 479 papers: make_eval.sh runs it too",
    "tagger eval --judged judged/judged.jsonl": "tags 500 papers: make_eval.sh runs it too",
    "tagger eval --judged judged/keyphrases.jsonl": "tags 300 papers: make_eval.sh runs it too",
    "tagger review ": "serves until Ctrl-C: tests/corpus/test_review.py opens it in Chromium",
    # a fit of 479 papers takes minutes: tests/fitting/test_fit.py runs the same command (the
    # same taxonomy, labels and options) on 90 of them, then tags with the model it wrote
    "--judged data/iclr2026-dev.jsonl --labels primary_area": "fits for minutes: "
    "tests/fitting/test_fit.py fits the same way on 90 papers",
    "--model scratch/iclr-model": "tags with the model of the fit left out: test_fit.py does",
    # docs/benchmarks.md records the runs it reports, commands included
    "python benchmarks/": "benchmarks run for minutes to hours; docs/benchmarks.md is their record",
}
# A command that contains one of these exits with one of the codes given, not 0.
EXIT_CODES = {
    "tagger diff ": ({0, 1}, "diff exits 1 when the taggings differ, 0 when they do not"),
}


@dataclass
class Command:
    """One command to paste: where it is, its text, and what the page shows it print."""

    where: str
    text: str
    shown: list[str] | None = None  # None: the page shows no output (bash blocks, --help)
    skip: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.skip = next((why for key, why in SKIPPED.items() if key in self.text), None)

    def exit_codes(self) -> set[int]:
        for key, (codes, _why) in EXIT_CODES.items():
            if key in self.text:
                return codes
        if self.shown and any(line.startswith("Error:") for line in self.shown):
            return {1}
        return {0}


def _complete(text: str) -> bool:
    """Whether bash runs ``text`` as typed, or waits for more (an open quote, a final ``\\``)."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text)
    except ValueError:  # "No closing quotation"
        return False
    return True


def readme_commands(readme: str, source: str = "README.md") -> list[Command]:
    """A page's commands in order (the README's, or a docs page's; ``source`` names it): each
    ``$`` command of a console block with the lines it is shown to print, and each bash or sh
    block whole."""
    commands = []
    for block in re.finditer(r"^```(console|bash|sh)\n(.*?)^```$", readme, re.M | re.S):
        line = readme.count("\n", 0, block.start(2)) + 1
        body = block.group(2).splitlines()
        if block.group(1) != "console":
            commands.append(Command(f"{source} line {line}", block.group(2)))
            continue
        at = 0
        while at < len(body):
            assert body[at].startswith("$ "), f"{source} line {line + at}: not a command"
            start, text = at, body[at][2:]
            at += 1
            while not _complete(text) and at < len(body):
                text += "\n" + body[at]
                at += 1
            shown = []
            while at < len(body) and not body[at].startswith("$ "):
                shown.append(body[at])
                at += 1
            commands.append(Command(f"{source} line {line + start}", text, shown))
    return commands


def page_commands() -> list[Command]:
    """Every page's commands, the README's first, then the site's pages in their nav's order."""
    return [
        command
        for page in PAGES
        for command in readme_commands(
            page.read_text(encoding="utf-8"), str(page.relative_to(ROOT))
        )
    ]


def _commands_of(group: click.Group, prefix: str):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield f"{prefix} {name}", command
            yield from _commands_of(command, f"{prefix} {name}")
        else:
            yield f"{prefix} {name}", command


def help_examples(readme: str) -> list[Command]:
    """The examples of every ``--help`` text, as ``tagger ... --help`` prints them: the main help's
    first, then each command's in the order of the README's command table."""
    runner = CliRunner()
    order = [("tagger", main)] + sorted(
        _commands_of(main, "tagger"),
        key=lambda named: re.search(rf"`{named[0]}[ `]", readme).start(),
    )
    examples = []
    for name, _command in order:
        result = runner.invoke(main, [*name.split()[1:], "--help"], terminal_width=200)
        assert result.exit_code == 0, result.output
        lines = [line.strip() for line in result.output.splitlines()]
        assert "Example:" in lines, f"`{name} --help` ends with no example"
        examples += [
            Command(f"`{name} --help`", text)
            for text in lines[lines.index("Example:") + 1 :]
            if text
        ]
    return examples


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether ``printed`` is what ``shown`` says: line for line, ``...`` any number of lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line.rstrip()) + r"\n" for line in shown
    )
    return re.fullmatch(pattern, "".join(line.rstrip() + "\n" for line in printed)) is not None


def _files(where: Path) -> set[str]:
    return {str(path.relative_to(where)) for path in where.rglob("*") if not path.is_dir()}


def left_behind(made: set[str]) -> list[str]:
    """Of the files ``made`` (paths relative to the top folder), those a clone would show as
    untracked: not ignored by the checkout's .gitignore. Outside a git checkout: none known."""
    if not made:
        return []
    try:
        ignored = subprocess.run(
            ["git", "check-ignore", "--no-index", "--stdin", "-z"],
            cwd=ROOT,
            input="\0".join(sorted(made)).encode(),
            capture_output=True,
        )
    except OSError:
        return []
    if ignored.returncode not in (0, 1):  # 1: none is ignored
        return []
    return sorted(made - set(filter(None, ignored.stdout.decode().split("\0"))))


def fresh_copy(to: Path) -> Path:
    """The repository's files as a clone has them (git's tracked files, and new ones not ignored),
    or, outside a git checkout, its tree without the environment and caches."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.pyc", ".pytest_cache")
        shutil.copytree(ROOT, to, ignore=ignore)
        return to
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
    return to


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_all(commands: list[Command], where: Path) -> list[str]:
    """Run the commands in order in ``where``; what went wrong, one paragraph per command."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleaved as on a terminal
    env.pop("VIRTUAL_ENV", None)
    faults = []
    for command in commands:
        if command.skip:
            continue
        started, cpu = time.monotonic(), _children_cpu()
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command.text],
            cwd=where,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=900,
        )
        printed = done.stdout.splitlines()
        took, cpu = time.monotonic() - started, _children_cpu() - cpu
        print(f"{took:6.1f} s ({cpu:5.1f} s CPU)  {command.where}: {command.text[:60]!r}")
        wrong = []
        if done.returncode not in command.exit_codes():
            wrong.append(f"exit code {done.returncode}, not {sorted(command.exit_codes())}")
        if command.shown is not None and not matches(command.shown, printed):
            wrong.append("it printed other lines than the page shows")
        elif command.shown is None and any(line.startswith("Error:") for line in printed):
            wrong.append("it printed an error")
        if wrong:
            said = "\n".join(f"    {line}" for line in printed[:60])
            faults.append(f"{command.where}: $ {command.text}\n  {'; '.join(wrong)}:\n{said}")
    return faults


README = README_PATH.read_text(encoding="utf-8")


def test_the_skip_list_is_not_stale():
    everything = [c.text for c in page_commands() + help_examples(README)]
    for key in SKIPPED:
        assert any(key in text for text in everything), f"nothing the pages run holds {key!r}"
    for key in EXIT_CODES:
        assert any(key in text for text in everything), f"nothing the pages run holds {key!r}"


def test_the_docs_pages_commands_are_collected_in_the_order_a_reader_meets_them():
    """The README's commands come first, then each page's in nav order; a page's line numbers
    are its own. The tutorial makes the scratch folder before anything writes into it."""
    commands = page_commands()
    sources = [c.where.split(" line ")[0] for c in commands]
    assert sources[0] == "README.md"
    order = {str(page.relative_to(ROOT)): k for k, page in enumerate(PAGES)}
    assert [order[s] for s in sources] == sorted(order[s] for s in sources)
    tutorial = [c for c in commands if c.where.startswith("docs/tutorial.md")]
    assert tutorial[0].text == "mkdir -p scratch"
    first = readme_commands("text\n```console\n$ true\n```\n", "docs/x.md")[0]
    assert first.where == "docs/x.md line 3"


def test_files_left_behind_are_those_gitignore_does_not_ignore():
    assert left_behind({"scratch/report.html", "tagged.jsonl", "report.html"}) == ["report.html"]
    assert left_behind(set()) == []


def test_commands_are_read_as_a_reader_pastes_them():
    text = (
        "```console\n$ tagger tag a.txt -o t.jsonl\ntagged 1 papers to t.jsonl\n"
        "$ tagger filter t.jsonl | python3 -c 'import sys\nprint(1)'\n1\n...\n```\n"
        "```bash\npip install x\n```\n"
    )
    first, second, third = readme_commands(text)
    assert (first.text, first.shown) == (
        "tagger tag a.txt -o t.jsonl",
        ["tagged 1 papers to t.jsonl"],
    )
    assert second.text == "tagger filter t.jsonl | python3 -c 'import sys\nprint(1)'"
    assert second.shown == ["1", "..."] and second.skip is None
    assert third.shown is None and third.skip == SKIPPED["pip install"]
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"]) and matches(["a", "..."], ["a"])
    assert not matches(["a", "...", "d"], ["a", "b", "d", "e"])
    assert not matches(["a", "b"], ["a", "b", "c"]) and not matches(["a 1"], ["a 2"])


@pytest.mark.models
@pytest.mark.slow
def test_every_readme_command_and_help_example_runs_as_pasted(tmp_path, embedder):
    """The README's commands in order, then the docs pages', then the ``--help`` examples, in one
    fresh copy, as a reader who has read the README and the docs goes on to the help; a help
    example a page has run already is not run again. What the pages' commands write is ignored by
    .gitignore (the scratch folder): they leave nothing untracked in a checkout. ``embedder`` has
    exported the model into this session's cache, as the setup command's first run does, so that
    no command here says it is exporting."""
    embedder.embed(["the export happens on first use"])
    commands = page_commands()
    assert sum(not c.skip for c in commands) >= 10
    examples = help_examples(README)
    # only eval's three examples are left out (SKIPPED: they tag hundreds of papers), review's (it
    # serves until Ctrl-C) and fit's two (the fit how-to runs the same fit)
    assert [c.where for c in examples if c.skip] == ["`tagger eval --help`"] * 3 + [
        "`tagger review --help`"
    ] + ["`tagger fit --help`"]
    where = fresh_copy(tmp_path)
    before = _files(where)
    faults = run_all(commands, where)
    untracked = left_behind(_files(where) - before)
    assert not untracked, f"the pages' commands leave untracked files behind: {untracked}"
    run = {c.text for c in commands}
    faults += run_all([c for c in examples if c.text not in run], where)
    assert not faults, "\n\n".join(faults)
