"""The house shows its stages: imports flow one way, from the command line down to the core, and
no module imports one above it (not even under TYPE_CHECKING) or forms a circle with another."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import ROOT

PACKAGE = ROOT / "tagger"
# Each stage and what it may import, besides itself: the order of the layers, top to bottom.
LAYERS = [
    {"cli", "__init__", "__main__"},
    {"runs", "fitting"},
    {"corpus"},
    {"tagging"},
    {"taxonomy"},
    {"language"},
    {"io"},
    {"config", "errors", "records"},
]


def _stage(module: str) -> str:
    """The stage of a module: its package below tagger/ (cli.tag: cli), or itself (config)."""
    return module.split(".")[0]


def _layer(stage: str) -> int:
    return next(k for k, names in enumerate(LAYERS) if stage in names)


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path) -> set[str]:
    """Every tagger module ``module`` imports, anywhere in it (functions and TYPE_CHECKING
    blocks included)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.split(".")[0] == "tagger":
                target = node.module.split(".")[1:]
            else:
                continue
            names = [".".join(target)] if target else []
            names += [".".join([*target, alias.name]) for alias in node.names]
            found.update(name for name in names if name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "tagger":
                    found.add(".".join(alias.name.split(".")[1:]))
    return found


MODULES = _modules()
GRAPH = {
    module: {name for name in _imports(module, path) if name in MODULES and name != module}
    for module, path in MODULES.items()
}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_nothing_above_its_stage(module):
    here = _layer(_stage(module))
    for target in GRAPH[module]:
        there = _layer(_stage(target))
        same_stage = _stage(target) == _stage(module)
        peers_allowed = here == there and here in (0, len(LAYERS) - 1)  # the top, the core
        assert there > here or same_stage or peers_allowed, (
            f"{module} imports {target}, which is not below it"
        )


def test_no_import_circles():
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(GRAPH[module]):
            if target not in MODULES or _is_package(target):
                continue
            if state.get(target) == 1:
                raise AssertionError("import circle: " + " -> ".join([*path, target]))
            if target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(MODULES):
        if module not in state and not _is_package(module):
            visit(module, [module])


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def test_every_stage_says_what_it_does():
    for stage in sorted({"io", "language", "taxonomy", "tagging", "runs", "corpus", "fitting"}):
        init = PACKAGE / stage / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree)
        assert doc and len(doc.split()) > 30, f"{init} should say what the stage does"
        assert all(isinstance(node, ast.Expr) for node in tree.body), (
            f"{init} holds more than its docstring: the stages export nothing"
        )


def test_the_command_line_is_a_package_of_one_module_per_command():
    """cli/ is a stage like the others: `tagger NAME` is cli/NAME.py, its subcommands in it."""
    from tagger.cli import main

    assert "cli" in MODULES and _is_package("cli") and not (PACKAGE / "cli.py").exists()
    for name, command in main.commands.items():
        assert command.callback.__module__ == f"tagger.cli.{name}", name
        for sub in getattr(command, "commands", {}).values():
            assert sub.callback.__module__ == f"tagger.cli.{name}", f"{name} {sub.name}"
