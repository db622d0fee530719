"""MkDocs hooks (mkdocs.yml ``hooks:``): the parts of the site that the code says, rendered from
the code at build time, so they cannot drift from it. A page asks for one with a marker line:

- ``<!-- cli-reference -->``: ``tagger --help`` and every command's ``--help``, exactly as the
  command line prints them, examples included (mkdocs-click leaves out a help's epilog, which is
  where each command's runnable example is);
- ``<!-- python-api -->``: a mkdocstrings entry for each public name, in the order of
  ``tagger.PUBLIC`` (their docstrings are the reference);
- ``<!-- json-schema -->``: what ``tagger schema`` prints, the JSON Schema of an output line.

A marker no hook knows is an error, so a misspelt one fails the build instead of vanishing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import click

MARKER = re.compile(r"^<!-- ([a-z-]+) -->$", re.M)
WIDTH = 100  # the help's line width on the page


def _commands(group: click.Group, prefix: str) -> Iterator[tuple[str, click.Command]]:
    for name in sorted(group.commands):
        command = group.commands[name]
        yield f"{prefix} {name}", command
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix} {name}")


def cli_reference() -> str:
    from click.testing import CliRunner

    from tagger.cli import main

    sections = []
    for name, _command in [("tagger", main), *_commands(main, "tagger")]:
        result = CliRunner().invoke(
            main, [*name.split()[1:], "--help"], prog_name="tagger", terminal_width=WIDTH
        )
        if result.exit_code != 0:
            raise RuntimeError(f"`{name} --help` exited {result.exit_code}: {result.output}")
        sections.append(f"## `{name}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "\n".join(sections)


def python_api() -> str:
    import tagger

    entries = []
    for name, module in tagger.PUBLIC.items():
        entries.append(f"::: tagger.{module}.{name}\n    options:\n      heading_level: 2\n")
    return "\n".join(entries)


def json_schema() -> str:
    from click.testing import CliRunner

    from tagger.cli import main

    result = CliRunner().invoke(main, ["schema"], prog_name="tagger")
    if result.exit_code != 0:
        raise RuntimeError(f"`tagger schema` exited {result.exit_code}: {result.output}")
    return f"```json\n{result.stdout.rstrip()}\n```\n"


RENDER = {"cli-reference": cli_reference, "python-api": python_api, "json-schema": json_schema}


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    def render(marker: re.Match[str]) -> str:
        if marker.group(1) not in RENDER:
            raise ValueError(f"{page.file.src_path}: no hook renders <!-- {marker.group(1)} -->")
        return RENDER[marker.group(1)]()

    return MARKER.sub(render, markdown)
