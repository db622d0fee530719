"""The golden outputs (tests/golden.py) are what the code makes now: the example output, the
README's and the documentation pages' transcripts and the Python page's printed lines, every
command on a page running as pasted, and every ``--help`` example too. When one differs, ``python
-m tests.golden`` remakes them all; a person reads the diff.

A reader who has run the README's setup command (its virtual environment active, so that bare
``tagger`` and ``python3`` are the environment's) pastes the commands into a fresh clone, the
README's first, then each page's in the order of the site's navigation (mkdocs.yml), one file
feeding the next: a console block is a session, a line ``$ CMD`` a command and the lines up to the
next what it prints (stdout and stderr together, as on a terminal; ``...`` stands for lines left
out); a bash or sh block is pasted whole and must exit 0. A command exits 0, or 1 when what the
page shows it print holds an ``Error:`` line, or as EXIT_CODES says. What the commands write must
be what .gitignore ignores (``tagged.jsonl``, ``scratch/``): pasting them leaves no untracked file.
"""

from __future__ import annotations

import pytest

from . import golden
from .conftest import ROOT


def test_the_skip_list_is_not_stale():
    everything = [c.text for c in golden.page_commands() + golden.help_examples()]
    for key in golden.SKIPPED:
        assert any(key in text for text in everything), f"nothing the pages run holds {key!r}"
    for key in golden.EXIT_CODES:
        assert any(key in text for text in everything), f"nothing the pages run holds {key!r}"


def test_the_pages_commands_are_collected_in_the_order_a_reader_meets_them():
    """The README's commands come first, then each page's in nav order; a page's line numbers
    are its own. The tutorial makes the scratch folder before anything writes into it."""
    commands = golden.page_commands()
    sources = [c.where.split(" line ")[0] for c in commands]
    assert sources[0] == "README.md"
    order = {str(page.relative_to(ROOT)): k for k, page in enumerate(golden.pages())}
    assert [order[s] for s in sources] == sorted(order[s] for s in sources)
    tutorial = [c for c in commands if c.where.startswith("docs/tutorial.md")]
    assert tutorial[0].text == "mkdir -p scratch"
    first = golden.commands_of("text\n```console\n$ true\n```\n", "docs/x.md")[0]
    assert first.where == "docs/x.md line 3"


def test_files_left_behind_are_those_gitignore_does_not_ignore():
    made = {"scratch/report.html", "tagged.jsonl", "report.html", "a/__pycache__/b.pyc"}
    assert golden.left_behind(made) == ["report.html"]
    assert golden.left_behind({"docs/tagged.jsonl"}) == ["docs/tagged.jsonl"]  # anchored
    assert golden.left_behind(set()) == []


def test_commands_are_read_as_a_reader_pastes_them():
    text = (
        "```console\n$ tagger tag a.txt -o t.jsonl\ntagged 1 papers to t.jsonl\n"
        "$ tagger filter t.jsonl | python3 -c 'import sys\nprint(1)'\n1\n...\n```\n"
        "```bash\npip install x\n```\n"
    )
    first, second, third = golden.commands_of(text)
    assert (first.text, first.shown) == (
        "tagger tag a.txt -o t.jsonl",
        ["tagged 1 papers to t.jsonl"],
    )
    assert second.text == "tagger filter t.jsonl | python3 -c 'import sys\nprint(1)'"
    assert second.shown == ["1", "..."] and second.skip is None
    assert third.shown is None and third.skip == golden.SKIPPED["pip install"]
    assert golden.matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert golden.matches(["a", "...", "d"], ["a", "d"]) and golden.matches(["a", "..."], ["a"])
    assert not golden.matches(["a", "...", "d"], ["a", "b", "d", "e"])
    assert not golden.matches(["a", "b"], ["a", "b", "c"]) and not golden.matches(["a 1"], ["a 2"])


@pytest.mark.parametrize(
    ("shown", "printed", "expected"),
    [
        (["a 1", "b 2"], ["a 3", "b 4", "c 5"], ["a 3", "b 4", "c 5"]),  # all of it
        (["head 1", "..."], ["head 2", "x", "y"], ["head 2", "..."]),
        (["...", "end 1"], ["x", "y", "end 9"], ["...", "end 9"]),
        # a line between two ellipses is found again by its words, its numbers changed
        (
            ["top 1", "...", "type 50 100.0%", "...", "last 3"],
            ["top 2", "rl 8", "type 49 100.0%", "x", "last 4"],
            ["top 2", "...", "type 49 100.0%", "...", "last 4"],
        ),
        # one no longer printed is left out
        (["top", "...", "gone 1", "...", "end"], ["top", "x", "end"], ["top", "...", "end"]),
    ],
)
def test_a_shown_output_is_remade_from_what_is_printed(shown, printed, expected):
    remade = golden.refreshed(shown, printed)
    assert remade == expected
    assert golden.matches(remade, printed)


def test_a_page_is_remade_command_by_command():
    page = "Say:\n\n```console\n$ echo 1\n2\n$ echo a\nb\n```\n\nand `$ echo 3` stays.\n"
    commands = golden.commands_of(page, "p.md")
    commands[0].printed, commands[1].printed = ["1"], ["a", "a"]
    ran = {command.where: command for command in commands}
    remade = golden.remade_page(page, "p.md", ran)
    assert (
        remade == "Say:\n\n```console\n$ echo 1\n1\n$ echo a\na\na\n```\n\nand `$ echo 3` stays.\n"
    )


@pytest.mark.models
@pytest.mark.slow
def test_every_golden_output_is_what_the_code_makes_now(tmp_path, embedder):
    """The pages' commands in order in one fresh copy, then the ``--help`` examples (one a page
    ran is not run again), the Python page's examples, and the examples tagged: each command
    exits as it should, leaves nothing untracked, and every golden output equals what was made.
    ``embedder`` has exported the model into this session's cache, as the setup command's first
    run does, so that no command here says it is exporting."""
    embedder.embed(["the export happens on first use"])
    made = golden.make(tmp_path, quiet=True)
    run = [c for c in made.commands if not c.skip]
    assert len(run) >= 30
    # only eval's three examples are left out (SKIPPED: they tag hundreds of papers), review's (it
    # serves until Ctrl-C) and fit's (the fit how-to runs the same fit)
    helps = [c.where for c in made.commands if c.skip and c.where.startswith("`")]
    assert helps == ["`tagger eval --help`"] * 3 + ["`tagger review --help`", "`tagger fit --help`"]
    faults = [fault for c in made.commands if (fault := c.fault())]
    assert not faults, "\n\n".join(faults)
    assert not made.left_behind, f"the pages' commands leave untracked files: {made.left_behind}"
    # the Python page: its first example tags one paper, then each of the 19 of a paper list
    assert len(made.python) == 4 and len(made.python[0]) == 1 + 19
    assert made.python[2][1].startswith(("True [", "False ["))  # diff_tagged said something
    differ = [
        path
        for path, text in made.outputs.items()
        if (ROOT / path).read_text(encoding="utf-8") != text
    ]
    assert not differ, f"{differ} differ from what the code makes now: run python -m tests.golden"
