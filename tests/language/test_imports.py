"""Importing the libraries tagger needs without the parts it never runs (language.imports)."""

from __future__ import annotations

import subprocess
import sys


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_spacy_pipeline_loads_without_spacys_command_line():
    """spaCy's __init__ imports every command of its CLI (typer, weasel, httpx: about half of
    importing spaCy); tagger's pipeline loads and tags without them."""
    out = run(
        "import sys\n"
        "from tagger.language.text import load_spacy\n"
        "doc = load_spacy()('We study graph neural networks.')\n"
        "print([t.pos_ for t in doc][-2:])\n"
        "print(sorted(m for m in ('spacy.cli', 'typer', 'weasel', 'httpx') if m in sys.modules))\n"
    )
    assert out.splitlines() == ["['NOUN', 'PUNCT']", "[]"]


def test_spacys_command_line_still_imports_when_asked_for():
    out = run(
        "from tagger.language.text import load_spacy\n"
        "load_spacy()\n"
        "import spacy\n"
        "import spacy.cli\n"
        "from spacy.cli.info import info\n"
        "print(callable(spacy.cli.download), spacy.cli.info is info)\n"
        "print('spaCy version' in spacy.info(markdown=True))\n"
    )
    assert out.splitlines() == ["True True", "True"]
