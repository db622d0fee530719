"""The README and the documentation site cannot drift from the code: every command is in the
README's command table and has help, every setting is listed with its default, the overlay shown
loads, and the extra the docs name for an example holds what it imports (what the pages' commands
and examples print: tests/test_golden.py)."""

from __future__ import annotations

import re

import click
import pytest

from tagger.cli import main

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON_API = ROOT / "docs" / "reference" / "python.md"
TAXONOMY = ROOT / "docs" / "reference" / "taxonomy.md"
CLUSTER = ROOT / "docs" / "how-to" / "cluster.md"


def _commands(group: click.Group, prefix: str = "tagger"):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix} {name}")
        else:
            yield f"{prefix} {name}", command


@pytest.mark.parametrize(("name", "command"), list(_commands(main)), ids=lambda v: str(v))
def test_every_command_is_in_the_readme_and_has_help(name, command):
    assert f"`{name}" in README, f"{name} is missing from the README's command table"
    assert command.help and len(command.help.strip()) > 20


def test_readme_commands_install_torch_first_and_ci_runs_the_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_command = ci.strip().splitlines()[-1]
    assert test_command in README
    assert "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 && " in test_command
    assert "apt-get install" in test_command  # Chromium, for the report's browser test


def test_the_python_api_page_lists_every_setting_with_its_default():
    import dataclasses

    from tagger import TaggerConfig

    text = " ".join(PYTHON_API.read_text(encoding="utf-8").split())
    for field in dataclasses.fields(TaggerConfig):
        default = f"{field.default:,}" if isinstance(field.default, int) else field.default
        default = default or "empty: the shipped one"
        assert f"`{field.name}` ({default})" in text, field.name


def test_the_docs_overlay_example_loads(tmp_path):
    """The overlay the taxonomy reference shows is a valid overlay of the shipped taxonomy."""
    from tagger.taxonomy.loading import load_taxonomy

    page = TAXONOMY.read_text(encoding="utf-8")
    block = next(b for b in page.split("```yaml\n")[1:] if b.startswith("extends: builtin"))
    path = tmp_path / "ourlab.yaml"
    path.write_text(block.split("```")[0])
    taxonomy = load_taxonomy(path)
    assert "cv.3d.dynamic_scenes" in taxonomy.by_id and "type.survey" not in taxonomy.by_id
    assert taxonomy.by_id["safety.llm"].parent == "llm"


def test_the_extra_the_duckdb_example_names_installs_duckdb():
    """The docs' DuckDB query names the extra that installs DuckDB, and that extra does (it was
    only in [test], which a user running the cluster how-to does not install)."""
    import tomllib

    page = CLUSTER.read_text(encoding="utf-8")
    assert "import duckdb" in page
    extra = re.search(r'DuckDB \(`pip install "\.\[(\w+)\]"`', page).group(1)
    with open(ROOT / "pyproject.toml", "rb") as file:
        extras = tomllib.load(file)["project"]["optional-dependencies"]
    assert any(re.match(r"duckdb\b", requirement) for requirement in extras[extra]), extras[extra]


def test_the_readme_quotes_no_figure():
    """Figures (evaluation, speed, timings) are in the generated pages the README links to, where
    they cannot drift from what was measured; a number in the README's prose is a setting's
    default (checked against TaggerConfig) or a count shown by a command it runs."""
    import dataclasses

    from tagger import TaggerConfig

    prose = re.sub(r"^```.*?^```$", "", README, flags=re.M | re.S)  # transcripts are run
    prose = re.sub(r"`[^`]*`", "", prose)  # commands and options
    prose = re.sub(r"\b\d+(?:\.\d+){2,}\b", "", prose)  # addresses and versions: 127.0.0.1
    defaults = {str(field.default) for field in dataclasses.fields(TaggerConfig)}
    assert set(re.findall(r"\b\d+\.\d+\b", prose)) <= defaults
    unit = r"\d\s*(?:%|×|x\b|s\b|ms\b|min\b|minutes|seconds|hours|abstracts/s|papers/s)"
    assert not re.findall(rf".{{0,30}}{unit}", prose)


@pytest.mark.models
def test_how_it_works_counts_the_papers_the_packaged_model_holds():
    """The explanation page names how many papers the packaged model's neighbour indexes hold
    (the shipped papers, the judged ones): the counts of the model's files, not of a memory."""
    from tagger import TaggerConfig
    from tagger.tagging.model import FittedModel

    config = TaggerConfig()
    page = (ROOT / "docs" / "explanation" / "how-it-works.md").read_text(encoding="utf-8")
    page = " ".join(page.split())
    model = FittedModel.load()
    shipped = len(model.part("corpus"))
    judged = len(model.part("judged"))
    assert judged == model.record["fitted_on"]["papers"]
    assert f"the {config.neighbours} closest of the {shipped:,} papers shipped in" in page
    assert f"the {config.judged_neighbours} closest of the {judged:,} judged papers" in page


_OUT_OF_REACH = "## Why the targets are out of reach"
_FRONTIER_ROWS = r"\| (combined|readers'|0\.11|the fine-tuned)"


@pytest.mark.parametrize(
    ("heading", "tables", "rows", "at_least"),
    [
        ("## The frontier, second round", ("context.md",), _FRONTIER_ROWS, 9),
        ("## The frontier, third round", ("margins.md", "finetuned.md"), _FRONTIER_ROWS, 9),
        (_OUT_OF_REACH, ("agreement.md",), r"\| (the (first|second) judge|both|tagger \d)", 5),
        (_OUT_OF_REACH, ("learning.md",), r"\| [01][.0-9]* \|", 5),
        (_OUT_OF_REACH, ("learning.md",), r"- (ACCEPT|GEN) = ", 2),
        (_OUT_OF_REACH, ("untitled.md",), r"\| (titled papers|the same papers|papers drawn)", 3),
        (
            _OUT_OF_REACH,
            ("claim.md",),
            r"\| (as in margins|with the claim|in it|only before|elsewhere)",
            7,
        ),
    ],
)
def test_the_keyphrase_frontiers_rows_are_the_ones_its_script_wrote(
    heading, tables, rows, at_least
):
    """judged/keyphrases3/README.md quotes rows of the tables its scripts wrote (context.md,
    margins.md, finetuned.md, agreement.md, learning.md, untitled.md): each quoted row is there,
    figure for figure."""
    judged = ROOT / "judged" / "keyphrases3"
    written = {
        line for table in tables for line in (judged / table).read_text("utf-8").splitlines()
    }
    readme = (judged / "README.md").read_text(encoding="utf-8")
    section = readme.split(heading, 1)[1].split("\n## ", 1)[0]
    quoted = [line for line in section.splitlines() if re.match(rows, line)]
    assert len(quoted) >= at_least
    assert [line for line in quoted if line not in written] == []


def test_the_readers_ranking_pages_give_what_the_packaged_model_records():
    """docs/keyphrase-ranking.md's held-out figures are those its fit recorded in the packaged
    model, and the explanation's weights and counts are the model's."""
    from tagger.language.keyphrases import AcceptanceModel

    model = AcceptanceModel.load()
    recorded = model.about["ranking"]
    held_out = recorded["held_out"]
    page = (ROOT / "docs" / "keyphrase-ranking.md").read_text(encoding="utf-8")
    codes = ", ".join(f"{code} {share:.3f}" for code, share in held_out["read_as_readers"].items())
    assert f"): {codes}." in page
    assert f"F1@5 {held_out['f1_at_5']:.3f}." in page
    assert f"on {recorded['listed_papers']} papers of data/ with keywords" in page
    how = " ".join((ROOT / "docs" / "explanation" / "how-it-works.md").read_text().split())
    r = model.ranking
    assert f"`old ** {r.t:g} * readers ** {1 - r.t:g} * (1 + {r.w:g} * authors)`" in how
    assert f"a single word's rank times {r.single:g}" in how
    assert f"the keywords authors chose for {recorded['listed_papers']:,} papers" in how
