"""The golden outputs: what the code makes of the shipped inputs, in files a reader reads, remade by
this script and checked by one test (tests/test_golden.py), so that a refit or any change of
output rewrites them in one command, and breaks no other test that still holds.

- ``examples/tagged/icml2025-abstracts.jsonl``: what `tagger tag examples/icml2025-abstracts.txt`
  writes (the same bytes on every CPU: tests/language/test_cross_cpu.py);
- the transcripts of the README and of the documentation site's pages: every command of a
  ```` ```console ```` block run as a reader pastes it (the README's first, then each page's in
  the order of the site's navigation, one file feeding the next, in a fresh copy of the
  repository), and what the page shows it print replaced by what it prints; a line ``...``
  stays, standing for the lines the page leaves out (the shown lines before it are the first
  printed, those after the last one the last printed, those between found again by their words,
  the numbers in them aside);
- ``docs/reference/python.md``: the comment line after a statement that prints says its first
  printed line;
- ``docs/reference/output.md``: its sample line, the multi-agent RL paper of the example output,
  trimmed as the page says (:func:`sample_line`);
- ``docs/report.png``, the tutorial's picture (docs/report_screenshot.py): remade, never checked,
  its pixels being the machine's Chromium's and fonts';
- with ``--figures``, ``docs/evaluation.md`` (docs/make_eval.sh; minutes).

    python -m tests.golden              # remake them, from the repository's top folder
    python -m tests.golden --check      # say which differ from what the code makes now
    python -m tests.golden --figures    # docs/evaluation.md too

What cannot run here (installs, hours-long runs, a server) is in SKIPPED with its reason.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PYTHON_PAGE = ROOT / "docs" / "reference" / "python.md"
OUTPUT_PAGE = ROOT / "docs" / "reference" / "output.md"
SAMPLE_AREA = "rl.multi_agent"  # the area of the paper output.md shows
EXAMPLE = "examples/icml2025-abstracts.txt"
EXAMPLE_OUTPUT = "examples/tagged/icml2025-abstracts.jsonl"

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
    # fit.md's walkthrough, fit on half the ICLR 2026 papers, measured on the other: minutes
    "scratch/iclr-a.jsonl": "fits and tags for minutes: benchmarks/iclr_fit.sh runs the same",
    # docs/benchmarks.md records the runs it reports, commands included
    "python benchmarks/": "benchmarks run for minutes to hours; docs/benchmarks.md is their record",
}
# A command that contains one of these exits with one of the codes given, not 0.
EXIT_CODES = {
    "tagger diff ": ({0, 1}, "diff exits 1 when the taggings differ, 0 when they do not"),
}


def pages() -> list[Path]:
    """Where a reader pastes commands from, in the order they read: the README, then the
    documentation site's pages (mkdocs.yml's nav)."""
    import yaml

    def leaves(nav):
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                yield from leaves(value)
            else:
                yield ROOT / "docs" / value

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return [README, *leaves(config["nav"])]


@dataclass
class Command:
    """One command to paste: where it is, its text, and what the page shows it print."""

    where: str
    text: str
    shown: list[str] | None = None  # None: the page shows no output (bash blocks, --help)
    skip: str | None = field(default=None, init=False)
    printed: list[str] | None = field(default=None, init=False)  # once run
    code: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.skip = next((why for key, why in SKIPPED.items() if key in self.text), None)

    def exit_codes(self) -> set[int]:
        for key, (codes, _why) in EXIT_CODES.items():
            if key in self.text:
                return codes
        if self.shown and any(line.startswith("Error:") for line in self.shown):
            return {1}
        return {0}

    def fault(self) -> str | None:
        """What went wrong when it ran, or None: its exit code, or an error it printed where
        the page shows no output. (What it printed is the golden test's to compare.)"""
        if self.printed is None:
            return None
        wrong = []
        if self.code not in self.exit_codes():
            wrong.append(f"exit code {self.code}, not {sorted(self.exit_codes())}")
        if self.shown is None and any(line.startswith("Error:") for line in self.printed):
            wrong.append("it printed an error")
        if not wrong:
            return None
        said = "\n".join(f"    {line}" for line in self.printed[:60])
        return f"{self.where}: $ {self.text}\n  {'; '.join(wrong)}:\n{said}"


def _complete(text: str) -> bool:
    """Whether bash runs ``text`` as typed, or waits for more (an open quote, a final ``\\``)."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text)
    except ValueError:  # "No closing quotation"
        return False
    return True


def commands_of(page: str, source: str = "README.md") -> list[Command]:
    """A page's commands in order (``source`` names it): each ``$`` command of a console block
    with the lines it is shown to print, and each bash or sh block whole."""
    return [command for command, _ in _console(page, source)]


def _console(page: str, source: str) -> Iterator[tuple[Command, tuple[int, int] | None]]:
    """A page's commands, each with the lines of the page (0-based, end excluded) that show its
    output; None for a bash or sh block."""
    for block in re.finditer(r"^```(console|bash|sh)\n(.*?)^```$", page, re.M | re.S):
        line = page.count("\n", 0, block.start(2))
        body = block.group(2).splitlines()
        if block.group(1) != "console":
            yield Command(f"{source} line {line + 1}", block.group(2)), None
            continue
        at = 0
        while at < len(body):
            assert body[at].startswith("$ "), f"{source} line {line + at + 1}: not a command"
            start, text = at, body[at][2:]
            at += 1
            while not _complete(text) and at < len(body):
                text += "\n" + body[at]
                at += 1
            first = at
            while at < len(body) and not body[at].startswith("$ "):
                at += 1
            command = Command(f"{source} line {line + start + 1}", text, body[first:at])
            yield command, (line + first, line + at)


def page_commands() -> list[Command]:
    """Every page's commands, the README's first, then the site's pages in their nav's order."""
    return [
        command
        for page in pages()
        for command in commands_of(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    ]


def help_examples() -> list[Command]:
    """The examples of every ``--help`` text, as ``tagger ... --help`` prints them: the main help's
    first, then each command's in the order of the README's command table."""
    import click
    from click.testing import CliRunner

    from tagger.cli import main

    def named(group: click.Group, prefix: str):
        for name, command in group.commands.items():
            yield f"{prefix} {name}", command
            if isinstance(command, click.Group):
                yield from named(command, f"{prefix} {name}")

    readme = README.read_text(encoding="utf-8")
    order = [("tagger", main)] + sorted(
        named(main, "tagger"), key=lambda pair: re.search(rf"`{pair[0]}[ `]", readme).start()
    )
    examples = []
    for name, _command in order:
        result = CliRunner().invoke(main, [*name.split()[1:], "--help"], terminal_width=200)
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
    or, outside a git checkout (a source archive), its tree without the environment and caches."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        ignore = shutil.ignore_patterns(
            ".git", ".venv", "venv", "__pycache__", "*.pyc", ".pytest_cache", ".hypothesis"
        )
        shutil.copytree(ROOT, to, ignore=ignore, dirs_exist_ok=True)
        return to
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
    return to


def left_behind(made: set[str]) -> list[str]:
    """Of the files ``made`` (paths relative to the top folder), those a clone would show as
    untracked: not ignored by the checkout's .gitignore (read without git: a source archive has
    it too)."""
    patterns = [
        line.strip()
        for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def ignored(path: str) -> bool:
        parts = path.split("/")
        for pattern in patterns:
            anchored, name = pattern.startswith("/"), pattern.strip("/")
            if pattern.endswith("/"):  # a directory, and what is under it
                places = [parts[0]] if anchored else parts[:-1]
            else:  # a file: at the top, or anywhere
                places = parts[-1:] if anchored and len(parts) == 1 else [] if anchored else parts
            if any(Path(place).match(name) for place in places):
                return True
        return False

    return sorted(path for path in made if not ignored(path))


def files_in(where: Path) -> set[str]:
    return {str(path.relative_to(where)) for path in where.rglob("*") if not path.is_dir()}


def run_all(commands: list[Command], where: Path, *, quiet: bool = False) -> None:
    """Run the commands not skipped in order in ``where`` with ``bash``, the Python environment's
    ``bin`` first on PATH and no hub access, as a reader whose README environment is active;
    each gets what it printed (stdout and stderr together, as on a terminal) and its exit code."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleaved as on a terminal
    env.pop("VIRTUAL_ENV", None)
    for command in commands:
        if command.skip:
            continue
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command.text],
            cwd=where,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=900,
        )
        command.printed, command.code = done.stdout.splitlines(), done.returncode
        if not quiet:
            print(f"  {command.where}: {command.text[:70]!r}", file=sys.stderr)


# --- what a shown output becomes --------------------------------------------------------------


def _words(line: str) -> str:
    """A printed line with its numbers left out: what finds it again after they changed."""
    return re.sub(r"\d+(?:[.,]\d+)*", "#", line.rstrip())


def refreshed(shown: list[str], printed: list[str]) -> list[str]:
    """What the page should show of ``printed`` where it showed ``shown``: all of it without a
    ``...``; with one, the same number of lines before the first (the first printed) and after
    the last (the last printed), and between them each shown line found again by its words
    (a line not found is left out: the page must then be read again by a person)."""
    printed = [line.rstrip() for line in printed]
    if "..." not in shown:
        return printed
    first, last = shown.index("..."), len(shown) - 1 - shown[::-1].index("...")
    head, middle, tail = shown[:first], shown[first : last + 1], shown[last + 1 :]
    out = printed[: len(head)]
    at, end = len(head), len(printed) - len(tail)
    for line in middle:
        if line == "...":
            if out[-1:] != ["..."]:
                out.append("...")
            continue
        found = next((k for k in range(at, end) if _words(printed[k]) == _words(line)), None)
        if found is not None:
            out.append(printed[found])
            at = found + 1
    if out[-1:] != ["..."]:
        out.append("...")
    return out + printed[end:] if tail else out


def remade_page(text: str, source: str, ran: dict[str, Command]) -> str:
    """The page ``text`` with every console command's shown output remade from ``ran`` (the
    commands run, by where they are); a command not run keeps what it shows."""
    lines = text.split("\n")
    replacements = []
    for command, span in _console(text, source):
        done = ran.get(command.where)
        if span is None or done is None or done.printed is None:
            continue
        replacements.append((span, refreshed(command.shown or [], done.printed)))
    for (start, end), new in reversed(replacements):
        lines[start:end] = new
    return "\n".join(lines)


def remade_python_page(text: str, where: Path) -> tuple[str, list[list[str]]]:
    """The Python page with the comment line after each statement that prints remade (its first
    printed line), its examples run in ``where`` (a copy of the top folder) in order; and what
    each block printed."""
    lines = text.split("\n")
    printed_by_block = []
    with contextlib.chdir(where):
        for block in re.finditer(r"```python\n(.*?)```", text, re.S):
            offset = text.count("\n", 0, block.start(1))
            namespace: dict = {}
            printed: list[str] = []
            for statement in ast.parse(block.group(1)).body:
                # a text stream with a binary buffer beneath, as sys.stdout has
                out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n")
                code = compile(ast.Module([statement], []), str(PYTHON_PAGE), "exec")
                with contextlib.redirect_stdout(out):
                    exec(code, namespace)  # noqa: S102 - our own docs
                out.flush()
                said = out.buffer.getvalue().decode("utf-8").splitlines()
                printed += said
                after = offset + statement.end_lineno  # the line after the statement
                if said and lines[after].startswith("# ") and _prints(statement):
                    lines[after] = f"# {said[0]}"
            printed_by_block.append(printed)
    return "\n".join(lines), printed_by_block


def sample_line(output: str) -> str:
    """The output page's sample: the first line of ``output`` (tagged JSONL) tagged SAMPLE_AREA,
    pretty-printed and trimmed as the page says: the abstract cut, the first two keyphrases with
    their first two spans, that tag alone with its first two pieces of evidence and its first
    neighbour, the first type with its first piece of evidence, and the vector's start."""
    records = [json.loads(line) for line in output.splitlines()]
    line = next(r for r in records if any(t["id"] == SAMPLE_AREA for t in r["tags"]))
    abstract = line["paper"]["abstract"]
    tag = next(t for t in line["tags"] if t["id"] == SAMPLE_AREA)
    trimmed = line | {
        "paper": line["paper"] | {"abstract": abstract[:100].rsplit(" ", 1)[0] + " ..."},
        "keyphrases": [k | {"spans": k["spans"][:2]} for k in line["keyphrases"][:2]],
        "tags": [tag | {"evidence": tag["evidence"][:2], "neighbours": tag["neighbours"][:1]}],
        "facets": [f | {"evidence": f["evidence"][:1]} for f in line["facets"][:1]],
        "vector": line["vector"][:40] + "...",
    }
    return json.dumps(trimmed, indent=2, ensure_ascii=False)


def remade_output_page(text: str, output: str) -> str:
    """The output page with its sample line (its first JSON block) remade from ``output``."""
    block = re.search(r"```json\n(.*?)\n```", text, re.S)
    return text[: block.start(1)] + sample_line(output) + text[block.end(1) :]


def _prints(statement: ast.stmt) -> bool:
    return any(
        isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print"
        for node in ast.walk(statement)
    )


# --- the whole ---------------------------------------------------------------------------------


@dataclass
class Made:
    """What the code makes now of every golden output checked (by path from the top folder),
    and the commands run to make the transcripts (their faults are the test's too)."""

    outputs: dict[str, str]
    commands: list[Command]
    python: list[list[str]]  # what each block of the Python page printed
    left_behind: list[str]  # files the pages' commands leave untracked


def make(where: Path, *, quiet: bool = False) -> Made:
    """Every checked golden output made afresh in ``where`` (an empty directory): a fresh copy of
    the top folder, the pages' commands and then the ``--help`` examples run in it in order."""
    copy = fresh_copy(where / "pages")
    commands = page_commands()
    before = files_in(copy)
    run_all(commands, copy, quiet=quiet)
    untracked = left_behind(files_in(copy) - before)
    seen = {command.text for command in commands}
    examples = [command for command in help_examples() if command.text not in seen]
    run_all(examples, copy, quiet=quiet)
    ran = {command.where: command for command in commands}
    outputs = {}
    for page in pages():
        source = str(page.relative_to(ROOT))
        outputs[source] = remade_page(page.read_text(encoding="utf-8"), source, ran)
    python = fresh_copy(where / "python")
    (python / "scratch").mkdir(exist_ok=True)  # the page says to make it first
    source = str(PYTHON_PAGE.relative_to(ROOT))
    outputs[source], printed = remade_python_page(outputs[source], python)
    tagged = subprocess.run(
        [sys.executable, "-m", "tagger", "tag", EXAMPLE],
        cwd=python,
        capture_output=True,
        text=True,
        check=True,
    )
    outputs[EXAMPLE_OUTPUT] = tagged.stdout
    source = str(OUTPUT_PAGE.relative_to(ROOT))
    outputs[source] = remade_output_page(outputs[source], tagged.stdout)
    return Made(outputs, commands + examples, printed, untracked)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__)
    parser.add_argument("--check", action="store_true", help="Change nothing; say what differs.")
    parser.add_argument("--figures", action="store_true", help="docs/evaluation.md too.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tagger-golden-") as where:
        made = make(Path(where))
    faults = [fault for command in made.commands if (fault := command.fault())]
    for fault in faults:
        print(fault, file=sys.stderr)
    differ = [p for p, text in made.outputs.items() if (ROOT / p).read_text("utf-8") != text]
    if args.check:
        for path in differ:
            print(f"{path}: differs from what the code makes now", file=sys.stderr)
        return 1 if differ or faults else 0
    for path in differ:
        (ROOT / path).write_text(made.outputs[path], encoding="utf-8")
        print(f"remade {path}", file=sys.stderr)
    subprocess.run([sys.executable, str(ROOT / "docs" / "report_screenshot.py")], cwd=ROOT)
    if args.figures:
        subprocess.run(["bash", "docs/make_eval.sh", "data", "--no-references"], cwd=ROOT)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
