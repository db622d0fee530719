"""Every shell command the README shows, and every example a ``--help`` text ends with, runs as
pasted and prints what the README says it prints.

A reader who has run the README's setup command (its virtual environment active, so that bare
``tagger`` and ``python3`` are the environment's) pastes the commands into a fresh clone, in the
README's order, one file feeding the next. These tests do that in a copy of the repository's files
(data included) in ``tmp_path``, with ``bash``, the Python environment's ``bin`` first on ``PATH``
and ``HF_HUB_OFFLINE=1``.

What is compared, strictly:

- A ```` ```console ```` block is a session: a line ``$ CMD`` is a command (continued on the next
  lines while a quote is open or a line ends in ``\\``), and the lines up to the next command are
  what it prints, stdout and stderr together as on a terminal. Each printed line must be equal to
  the README's, trailing spaces aside; a line that is only ``...`` stands for any number of lines.
  No number is skipped: the README shows no timing in these blocks.
- A ```` ```bash ```` or ```` ```sh ```` block is pasted whole and must exit 0.
- A command exits 0, or 1 when what the README shows it print holds an ``Error:`` line, or as
  ``EXIT_CODES`` says.
- A ``--help`` example must exit 0 (or as ``EXIT_CODES`` says) and print no ``Error:``. The
  examples run after the README's commands, in the same copy (the files they name, such as
  ``tagged.jsonl``, are the ones the README made), in the order of the README's command table.

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

from .conftest import ROOT

README_PATH = ROOT / "README.md"

# A command (a `$` command of a console block, a whole bash block, a --help example) that contains
# one of these is not run, for the reason given.
SKIPPED = {
    "pip install": "installs packages: the setup commands (.ci/run runs the second as written)",
    "arxiv/*.jsonl.gz": "reads the user's own corpus, which the README names as an example",
    # the test run's time (under 10 minutes): these tag 479, 500 and 300 papers, and
    # docs/make_eval.sh runs the same evaluations
    "tagger eval data/iclr2026-dev.jsonl": "tags 479 papers: make_eval.sh runs it too",
    "tagger eval --judged judged/judged.jsonl": "tags 500 papers: make_eval.sh runs it too",
    "tagger eval --judged judged/keyphrases.jsonl": "tags 300 papers: make_eval.sh runs it too",
    "tagger review ": "serves until Ctrl-C: tests/corpus/test_review.py opens it in Chromium",
    "tagger fit --taxonomy examples/iclr-areas.yaml": "fits on 479 papers, minutes: "
    "tests/fitting/test_fit.py fits the same way on a few",
}
# A command that contains one of these exits with one of the codes given, not 0.
EXIT_CODES = {
    "tagger diff ": ({0, 1}, "diff exits 1 when the taggings differ, 0 when they do not"),
}


@dataclass
class Command:
    """One command to paste: where it is, its text, and what the README shows it print."""

    where: str
    text: str
    shown: list[str] | None = None  # None: the README shows no output (bash blocks, --help)
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


def readme_commands(readme: str) -> list[Command]:
    """The README's commands in order: each ``$`` command of a console block with the lines it is
    shown to print, and each bash or sh block whole."""
    commands = []
    for block in re.finditer(r"^```(console|bash|sh)\n(.*?)^```$", readme, re.M | re.S):
        line = readme.count("\n", 0, block.start(2)) + 1
        body = block.group(2).splitlines()
        if block.group(1) != "console":
            commands.append(Command(f"README.md line {line}", block.group(2)))
            continue
        at = 0
        while at < len(body):
            assert body[at].startswith("$ "), f"README.md line {line + at}: not a command"
            start, text = at, body[at][2:]
            at += 1
            while not _complete(text) and at < len(body):
                text += "\n" + body[at]
                at += 1
            shown = []
            while at < len(body) and not body[at].startswith("$ "):
                shown.append(body[at])
                at += 1
            commands.append(Command(f"README.md line {line + start}", text, shown))
    return commands


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
            wrong.append("it printed other lines than the README shows")
        elif command.shown is None and any(line.startswith("Error:") for line in printed):
            wrong.append("it printed an error")
        if wrong:
            said = "\n".join(f"    {line}" for line in printed[:60])
            faults.append(f"{command.where}: $ {command.text}\n  {'; '.join(wrong)}:\n{said}")
    return faults


README = README_PATH.read_text(encoding="utf-8")


def test_the_skip_list_is_not_stale():
    everything = [c.text for c in readme_commands(README) + help_examples(README)]
    for key in SKIPPED:
        assert any(key in text for text in everything), f"nothing the README runs holds {key!r}"
    for key in EXIT_CODES:
        assert any(key in text for text in everything), f"nothing the README runs holds {key!r}"


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
    """The README's commands in order, then the ``--help`` examples, in one fresh copy, as a reader
    who has read the README goes on to the help; a help example the README has run already is not
    run again. ``embedder`` has exported the model into this session's cache, as the setup
    command's first run does, so that no command here says it is exporting."""
    embedder.embed(["the export happens on first use"])
    commands = readme_commands(README)
    assert sum(not c.skip for c in commands) >= 10
    examples = help_examples(README)
    # only eval's three examples are left out (SKIPPED: they tag hundreds of papers), and review's
    # (it serves until Ctrl-C)
    assert [c.where for c in examples if c.skip] == ["`tagger eval --help`"] * 3 + [
        "`tagger review --help`",
        "`tagger fit --help`",
    ]
    run = {c.text for c in commands}
    faults = run_all(commands + [c for c in examples if c.text not in run], fresh_copy(tmp_path))
    assert not faults, "\n\n".join(faults)
