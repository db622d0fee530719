"""The documentation site builds with warnings as errors, every page is in its navigation, its
links and the README's resolve, and the parts made from the code at build time are there.

``mkdocs build --strict`` fails on a relative link to a page or a heading that does not exist, a
page left out of the nav and a snippet that names no file (mkdocs.yml's ``validation`` and
``check_paths``); the build goes to ``tmp_path``, never into the checkout. It needs no model, so
it runs in the fast lane.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys

import pytest

from tagger.cli import main

from .conftest import ROOT, docs_pages


def _commands(group, prefix="tagger"):
    for name, command in group.commands.items():
        yield f"{prefix} {name}"
        if hasattr(command, "commands"):
            yield from _commands(command, f"{prefix} {name}")


def _text(page) -> str:
    """A built page's words, without markup."""
    body = re.sub(r"<script.*?</script>", "", page.read_text(encoding="utf-8"), flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    where = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(where)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr
    assert "Documentation built" in built.stderr
    return where


@pytest.mark.slow
def test_the_site_builds_strictly_into_a_temporary_folder(site):
    assert (site / "index.html").is_file()
    for page in docs_pages():
        relative = page.relative_to(ROOT / "docs").with_suffix("")
        built = site / "index.html" if relative.name == "index" else site / relative / "index.html"
        assert built.is_file(), f"{page} was not built"
    assert not (ROOT / "site").exists(), "the site is built elsewhere, never into the checkout"


def test_every_docs_page_is_in_the_nav():
    pages = {path.resolve() for path in (ROOT / "docs").rglob("*.md")}
    nav = [path.resolve() for path in docs_pages()]
    assert sorted(pages - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - pages) == [], "the nav names pages that do not exist"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_the_readme_links_resolve():
    """The README is read on its own (on a forge, in the sdist): its relative links must name
    files of the repository, the docs pages among them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") for link in local)
    for link in local:
        assert (ROOT / link).exists(), f"README.md links to {link}, which does not exist"


@pytest.mark.slow
def test_the_cli_reference_is_every_commands_help(site):
    """The command line reference is made from the commands: each one's help with its example."""
    text = _text(site / "reference" / "cli" / "index.html")
    for name in _commands(main):
        assert f"Usage: {name} [OPTIONS]" in text, name
    assert text.count("Example:") == 1 + len(list(_commands(main)))


@pytest.mark.slow
def test_the_python_reference_documents_every_public_name(site):
    """Every name of tagger.PUBLIC has its entry, with its docstring's first words."""
    import importlib

    import tagger

    text = " ".join(_text(site / "reference" / "python" / "index.html").split())
    for name, module in tagger.PUBLIC.items():
        value = getattr(importlib.import_module(f"tagger.{module}"), name)
        first = " ".join((value.__doc__ or "").split()[:4])
        assert first, f"tagger.{name} has no docstring"
        first = re.sub(r"``?([^`]*)``?", r"\1", first)  # inline code is shown as code
        assert first in text, f"tagger.{name}: {first!r} is not on the Python API page"


@pytest.mark.slow
def test_the_figure_pages_are_the_generated_files(site):
    """The evaluation and benchmark pages are the files their scripts write, not copies: a table
    row of each generated file is on its page as written."""
    for name in ("evaluation", "benchmarks", "calibration", "keyphrase-calibration"):
        source = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
        row = next(line for line in source.splitlines() if re.match(r"\| [\w@.]+ \| [\d.]", line))
        text = _text(site / name / "index.html")
        # a table's cells, or a row of output in a code block: the same words, in order
        assert re.sub(r"[\s|]", "", row) in re.sub(r"[\s|]", "", text), f"{name}.md: {row!r}"
