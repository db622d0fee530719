"""Every default is written down once, in tagger/config.py: the command line and the library read
it there, so they cannot drift apart (as tag --workers did: one per core on the command line, 1
in tag_files; and the phrase cache: 20,000 in the config, 100,000 in CachedEmbedder).

The check reads the source with ``ast`` (no model, no module imported) and reports, in every
module but config.py:
- an option of a command (click's, or a script's argparse) whose ``default=`` is a number or a
  non-empty string;
- a parameter, or a field of a class, named like a setting, with such a default: a setting is a
  field of TaggerConfig or SuggestConfig, or any name that somewhere reads its default from
  config.py (``top_pairs: int = STATS_PAIRS`` makes every ``top_pairs`` one);
- a second copy of a constant config.py holds, with a value of its own.
A name the module binds to a literal at its top counts as the literal.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Iterator

import pytest

from tagger import config
from tagger.cli import main
from tagger.config import SuggestConfig, TaggerConfig

from .conftest import ROOT

PACKAGE = ROOT / "tagger"
CONFIG = PACKAGE / "config.py"
# (module, what): why a literal default there is no setting's, whatever its name says
ALLOWED = {
    ("corpus/judged.py", "calibration(min_tags)"): "the tags a calibration bin needs to be listed",
    ("corpus/judged.py", "largest_gap(min_tags)"): "the tags a bin needs to count toward the gap",
    ("corpus/query.py", "meant(limit)"): "the guesses a 'did you mean' names, no option's",
    ("language/static_export.py", "--pca-dims"): "the shipped static table's width, an option of "
    "the script that made it (docs/static-embeddings.md)",
    ("tagging/pipeline.py", "tag_many(workers)"): "Tagger.tag_many tags in this process unless "
    "asked: an embedder object given to the Tagger cannot go to workers (a run's: TAG_WORKERS)",
}


def _modules() -> dict[str, str]:
    """The source of every module but config.py, by its path below tagger/."""
    return {
        path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != CONFIG
    }


def _top(tree: ast.Module) -> dict[str, ast.expr]:
    """The names a module binds at its top level, each to its value."""
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update({t.id: node.value for t in targets if isinstance(t, ast.Name)})
    return found


def _literal(
    node: ast.expr | None, top: dict[str, ast.expr], seen: frozenset = frozenset()
) -> bool:
    """Whether ``node`` writes a value down: a number, a non-empty string, arithmetic or a tuple
    of them, or a name the module binds to one (None, True, False and empty say "not given")."""
    if isinstance(node, ast.Constant):
        value = node.value
        return isinstance(value, (int, float, str)) and not isinstance(value, bool) and value != ""
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand, top, seen)
    if isinstance(node, ast.BinOp):
        return _literal(node.left, top, seen) and _literal(node.right, top, seen)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_literal(item, top, seen) for item in node.elts)
    if isinstance(node, ast.Name) and node.id in top and node.id not in seen:
        return _literal(top[node.id], top, seen | {node.id})
    return False


def _from_config(tree: ast.Module) -> set[str]:
    """The names a module imports from config.py, config itself included."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in ("config", "tagger.config"):
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module in (None, "tagger"):
            names.update(
                alias.asname or alias.name for alias in node.names if alias.name == "config"
            )
    return names


def _defaults(tree: ast.Module) -> Iterator[tuple[str, str, ast.expr]]:
    """Every parameter and class field with a default: its name, where it is (``tag_many``,
    ``Review``) and its default."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args, where = node.args, getattr(node, "name", "lambda")
            positional = [*args.posonlyargs, *args.args]
            given = [*positional[len(positional) - len(args.defaults) :], *args.kwonlyargs]
            for arg, default in zip(given, [*args.defaults, *args.kw_defaults], strict=True):
                if default is not None:
                    yield arg.arg, f"{where}({arg.arg})", default
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    value = item.value
                    if isinstance(value, ast.Call):  # dataclasses.field(default=...)
                        value = next((k.value for k in value.keywords if k.arg == "default"), None)
                    if value is not None:
                        yield item.target.id, f"{node.name}.{item.target.id}", value


def settings_of(sources: dict[str, str]) -> set[str]:
    """The names of settings: TaggerConfig's and SuggestConfig's fields, and every parameter or
    field in ``sources`` whose default reads config.py."""
    names = {f.name for cls in (TaggerConfig, SuggestConfig) for f in dataclasses.fields(cls)}
    for source in sources.values():
        tree = ast.parse(source)
        imported = _from_config(tree)
        for name, _, default in _defaults(tree):
            if any(isinstance(n, ast.Name) and n.id in imported for n in ast.walk(default)):
                names.add(name)
    return names


def stray_defaults(
    module: str, source: str, settings: set[str], constants: set[str], allowed=ALLOWED
) -> list[str]:
    """What ``source`` (the module ``module``, below tagger/) writes down that config.py should:
    ``module:line: what = value``, one each, but for what ``allowed`` lets be."""
    tree = ast.parse(source)
    top = _top(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func
            called = called.id if isinstance(called, ast.Name) else called
            if isinstance(called, str) and called.endswith(("option", "argument")):
                named = [a.value for a in node.args if isinstance(a, ast.Constant)]
                for keyword in node.keywords:
                    if keyword.arg == "default" and _literal(keyword.value, top):
                        what = str(named[0]) if named else f"{called}()"
                        found.append((node.lineno, what, keyword.value))
    for name, what, default in _defaults(tree):
        if name in settings and _literal(default, top):
            found.append((default.lineno, what, default))
    for name, value in top.items():
        if name in constants and _literal(value, top):
            found.append((value.lineno, f"{name} (config.{name})", value))
    return [
        f"{module}:{line}: {what} = {ast.unparse(value)}"
        for line, what, value in sorted(found, key=lambda item: item[:2])
        if (module, what) not in allowed
    ]


SOURCES = _modules()
SETTINGS = settings_of(SOURCES)
CONSTANTS = {name for name in _top(ast.parse(CONFIG.read_text(encoding="utf-8"))) if name.isupper()}


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_no_module_but_config_writes_a_default_down(module):
    assert stray_defaults(module, SOURCES[module], SETTINGS, CONSTANTS) == []


@pytest.mark.parametrize(("module", "what"), sorted(ALLOWED))
def test_what_is_allowed_is_still_there(module, what):
    found = stray_defaults(module, SOURCES[module], SETTINGS, CONSTANTS, allowed={})
    assert any(f": {what} = " in line for line in found), f"{module}: {what} is gone: unlist it"


STRAYS = """
import click
from ..config import DIFF_LIMIT, TaggerConfig
PAGE = 50
STATS_PAIRS = 30

@click.option("--limit", default=20, show_default=True)
@click.option("--pairs", default=PAGE)
@click.option("--json", is_flag=True, default=False)
@click.option("--title", default=None)
def render(diff, *, limit: int = DIFF_LIMIT, top_n=3, min_score: float = -0.5, title="x") -> str:
    return sort(diff, key=lambda row, max_tags=2 * 5: row)

def page(rows, limit=PAGE, phrase_cache=TaggerConfig().phrase_cache, workers=None):
    pass

@dataclass
class Run:
    workers: int = field(default=4)
    batch_size: int = 64
    name: str = "run"
"""


def test_a_stray_default_is_reported_where_it_is():
    settings = settings_of({"cli/x.py": STRAYS})
    assert {"limit", "phrase_cache"} <= settings  # read from config: settings by their names
    constants = {"DIFF_LIMIT", "STATS_PAIRS"}
    assert stray_defaults("cli/x.py", STRAYS, settings | {"workers"}, constants) == [
        "cli/x.py:5: STATS_PAIRS (config.STATS_PAIRS) = 30",
        "cli/x.py:7: --limit = 20",
        "cli/x.py:8: --pairs = PAGE",
        "cli/x.py:11: render(min_score) = -0.5",
        "cli/x.py:11: render(top_n) = 3",
        "cli/x.py:12: lambda(max_tags) = 2 * 5",
        "cli/x.py:14: page(limit) = PAGE",
        "cli/x.py:19: Run.workers = 4",
        "cli/x.py:20: Run.batch_size = 64",
    ]


# (command, its option) and the library's (function, parameter) that default to one constant
AGREE = [
    ("tag", "input_format", [], config.INPUT_FORMAT),
    ("tag", "workers", [("tagger.runs.local:tag_files", "workers")], config.TAG_WORKERS),
    (
        "tag",
        "partition_size",
        [("tagger.runs.cluster:tag_on_cluster", "size"), ("tagger.runs.partitions:plan", "size")],
        config.PARTITION_SIZE,
    ),
    (
        "tag",
        "part_format",
        [("tagger.runs.cluster:tag_on_cluster", "part_format")],
        config.PART_FORMAT,
    ),
    (
        "retag",
        "workers",
        [
            ("tagger.runs.local:retag_files", "workers"),
            ("tagger.tagging.retag:Retagger.retag_many", "workers"),
        ],
        config.RETAG_WORKERS,
    ),
    (
        "stats",
        "pairs",
        [
            ("tagger.corpus.stats:render", "top_pairs"),
            ("tagger.corpus.stats:CorpusStats.as_dict", "top_pairs"),
        ],
        config.STATS_PAIRS,
    ),
    ("diff", "limit", [("tagger.corpus.diff:render", "limit")], config.DIFF_LIMIT),
    (
        "filter",
        "min_score",
        [
            ("tagger.corpus.query:filter_tagged", "min_score"),
            ("tagger.corpus.query:paper_filter", "min_score"),
        ],
        config.FILTER_MIN_SCORE,
    ),
    (
        "filter",
        "output_format",
        [("tagger.corpus.query:format_selected", "format")],
        config.FILTER_FORMAT,
    ),
    (
        "review",
        "order",
        [
            ("tagger.corpus.review:Review.open", "order"),
            ("tagger.corpus.review:review_order", "order"),
        ],
        config.REVIEW_ORDER,
    ),
    ("review", "port", [("tagger.corpus.review:Review.serve", "port")], config.REVIEW_PORT),
    (
        "eval",
        "gold_field",
        [("tagger.corpus.evaluate:evaluate_file", "gold_field")],
        config.GOLD_FIELD,
    ),
    ("fit", "folds", [("tagger.fitting.fit:fit_model", "folds")], config.FOLDS),
    (
        "fit",
        "workers",
        [
            ("tagger.fitting.fit:fit_model", "workers"),
            ("tagger.fitting.papers:read_index_papers", "workers"),
        ],
        config.FIT_WORKERS,
    ),
]


def _function(name: str):
    from importlib import import_module

    module, _, path = name.partition(":")
    found = import_module(module)
    for part in path.split("."):
        found = getattr(found, part)
    return found


@pytest.mark.parametrize(("command", "option", "library", "value"), AGREE, ids=lambda v: str(v))
def test_a_command_and_the_library_behind_it_default_alike(command, option, library, value):
    params = {param.name: param for param in main.commands[command].params}
    assert params[option].default == value
    for function, parameter in library:
        assert inspect.signature(_function(function)).parameters[parameter].default == value


def test_what_a_fit_and_the_phrase_cache_default_to_is_the_shipped_paths():
    """The shipped model was fitted with C 0.3 (fitting.folds.Settings, every stage of it); the
    tagger caches 20,000 phrase embeddings (TaggerConfig.phrase_cache)."""
    from tagger.fitting.folds import Settings
    from tagger.fitting.weighing import fit_weigher
    from tagger.language.embedding_cache import CachedEmbedder
    from tagger.tagging.weigher import fitted

    assert Settings().c == config.WEIGHER_C == 0.3
    for function in (fitted, fit_weigher):
        assert inspect.signature(function).parameters["c"].default == config.WEIGHER_C
    cache = inspect.signature(CachedEmbedder).parameters["max_entries"].default
    assert cache == TaggerConfig().phrase_cache == 20_000


def test_the_export_scripts_name_the_model_config_names():
    """The two export scripts keep the model's name written down (each records its own sha256 in
    the export it made, which an edit would leave stale): it must be the one config.py names."""
    from tagger.language import static_export

    assert static_export.MODEL_NAME == config.EMBEDDING_MODEL_ID
    onnx = (PACKAGE / "language" / "onnx_export.py").read_text(encoding="utf-8")
    assert f'"model": "{config.EMBEDDING_MODEL_ID}",' in onnx
