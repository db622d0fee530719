"""``tagger taxonomy``: check a taxonomy, lint it, or show the one an overlay makes (taxonomy)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .options import FILE, Skipped, example, json_option, taxonomy_option, warning


@click.group(**example("tagger taxonomy check"))
def taxonomy() -> None:
    """Work with taxonomy files: check one, lint it, or show the taxonomy an overlay makes."""


@taxonomy.command(**example("tagger taxonomy check --taxonomy examples/overlay.yaml"))
@taxonomy_option
def check(taxonomy_path: Path | None) -> None:
    """Validate a taxonomy and print its tree of areas with their rule counts."""
    from ..taxonomy.loading import load_taxonomy

    loaded = load_taxonomy(taxonomy_path)
    click.echo(loaded.render_tree(), nl=False)
    click.echo(f"{loaded.summary()}: OK", err=True)


@taxonomy.command(
    **example(
        "tagger taxonomy show --taxonomy examples/overlay.yaml > effective.yaml",
        "tagger taxonomy show --taxonomy examples/overlay.yaml --json | sha256sum",
    )
)
@taxonomy_option
@json_option
def show(taxonomy_path: Path | None, as_json: bool) -> None:
    """Print the effective taxonomy: an overlay applied to what it extends, as one YAML file
    that loads to the same taxonomy. --json prints the one line of JSON whose sha256 tagged
    lines record as their taxonomy's (provenance.taxonomy_sha256)."""
    from ..taxonomy.loading import load_taxonomy

    loaded = load_taxonomy(taxonomy_path)
    if as_json:
        sys.stdout.buffer.write(loaded.canonical())
    else:
        click.echo(f"# {loaded.summary()}, sha256 {loaded.sha256}")
        click.echo(loaded.to_yaml(), nl=False)


@taxonomy.command(
    **example(
        "tagger taxonomy lint --taxonomy examples/overlay.yaml",
        "tagger taxonomy lint --corpus examples/tagged/icml2025-abstracts.jsonl",
    )
)
@taxonomy_option
@click.option(
    "--corpus",
    type=FILE,
    metavar="FILE",
    help="Tagged output (`tagger tag`): also report rules that never fired and areas never tagged.",
)
def lint(taxonomy_path: Path | None, corpus: Path | None) -> None:
    """Find faults in a taxonomy, one line each with its YAML line number.

    Errors (the file does not load) make the exit code 1; warnings (the same alias in two areas,
    acronyms that are English words, regular expressions that can backtrack catastrophically,
    areas with no rules or no crosswalk, rules that never fire) are printed and exit 0.
    """
    from ..taxonomy.lint import lint_taxonomy

    skipped = Skipped()
    findings = lint_taxonomy(taxonomy_path, corpus=corpus, skip=skipped, warn=warning)
    for finding in findings:
        click.echo(str(finding))
    errors = sum(f.severity == "error" for f in findings)
    click.echo(f"{errors} errors, {len(findings) - errors} warnings", err=True)
    if errors:
        sys.exit(1)
    skipped.exit_if_any()
