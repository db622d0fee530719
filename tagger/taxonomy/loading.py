"""Loading a taxonomy: a YAML file (or an overlay and what it extends) read, validated and
cross-checked, or :class:`~tagger.errors.TaxonomyError` listing every problem with its file and
line."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import TaxonomyError
from ..io.display import short_path
from .model import PACKAGED, Area, Origin, Taxonomy, build_taxonomy
from .overlays import Overlay, apply_overlay
from .problems import cross_check, render_error
from .yamlfile import line_of, read_yaml


def default_taxonomy_path() -> Path:
    """The default taxonomy: the copy installed inside the package, or, when running from a
    source checkout, the repository's top-level ``taxonomy.yaml`` (the file that is packaged)."""
    installed = Path(str(resources.files("tagger"))) / "data" / "taxonomy.yaml"
    return (
        installed if installed.is_file() else Path(__file__).resolve().parents[2] / "taxonomy.yaml"
    )


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """Read, validate and cross-check a taxonomy file, or an overlay and what it extends.
    Raises ``TaxonomyError`` listing every problem, each with its file and line."""
    return _load(Path(path) if path is not None else default_taxonomy_path(), ())


def source_name(path: Path) -> str:
    """How messages name the taxonomy file at ``path``: the default one
    (:func:`default_taxonomy_path`) as "the packaged taxonomy", however tagger is installed, so
    that no message prints a long site-packages path; any other by its path, short
    (io.display.short_path)."""
    try:
        default = path.resolve() == default_taxonomy_path().resolve()
    except OSError:
        default = False
    return PACKAGED if default else short_path(path)


LOCAL_TAXONOMY = Path("taxonomy.yaml")  # the name a taxonomy in the working directory has


def ignored_local_taxonomy(path: str | Path | None) -> Path | None:
    """``taxonomy.yaml`` of the working directory, if tagger does not read it: no ``path`` was
    given, so the packaged taxonomy is in use, and this file holds something else (a copy of
    the repository's file, edited after ``pip install .``, say). None otherwise."""
    if path is not None or not LOCAL_TAXONOMY.is_file():
        return None
    default = default_taxonomy_path()
    try:
        if LOCAL_TAXONOMY.resolve() == default.resolve():
            return None  # a source checkout: the packaged file is this one
        if LOCAL_TAXONOMY.stat().st_size > MAX_TAXONOMY_BYTES:
            return LOCAL_TAXONOMY
        return None if LOCAL_TAXONOMY.read_bytes() == default.read_bytes() else LOCAL_TAXONOMY
    except OSError:
        return None


MAX_TAXONOMY_BYTES = 64 * 2**20  # the shipped taxonomy is under 1 MB


def _load(
    path: Path, extending: tuple[Path, ...], base: tuple[Origin, str] | None = None
) -> Taxonomy:
    """The taxonomy at ``path``; ``base``: where an overlay extends it, and how (see _base)."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise TaxonomyError([f"{path}: is not a regular file (a device or a pipe?)"])
        if path.is_file() and path.stat().st_size > MAX_TAXONOMY_BYTES:
            raise TaxonomyError(
                [f"{path}: is larger than {MAX_TAXONOMY_BYTES // 2**20} MB; not a taxonomy"]
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TaxonomyError([f"{path}: no such taxonomy file"]) from None
    except IsADirectoryError:
        raise TaxonomyError([f"{path}: is a directory, not a taxonomy file"]) from None
    except OSError as exc:
        raise TaxonomyError([f"{path}: cannot be read: {exc.strerror}"]) from None
    return _parse(raw, source_name(path), path.parent, (*extending, path.resolve()), base)


def parse_taxonomy(raw: bytes | str, *, source: str = "<taxonomy>") -> Taxonomy:
    """Validate a taxonomy given as YAML text; ``source`` names it in messages. An overlay's
    ``extends`` path is read relative to the current directory."""
    return _parse(raw, source, Path.cwd(), ())


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str
    areas: list[Area]


MAX_EXTENDS = 16  # overlays of overlays: a chain this long is a mistake
BUILTIN = "builtin"  # `extends: builtin`: the taxonomy shipped with tagger


def _parse(
    raw: bytes | str,
    source: str,
    directory: Path,
    extending: tuple[Path, ...],
    base: tuple[Origin, str] | None = None,
) -> Taxonomy:
    if base is None:
        data, lines = read_yaml(raw, source)
    else:  # what an overlay extends: nothing of it is shown before it proves a taxonomy
        try:
            data, lines = read_yaml(raw, source)
        except TaxonomyError:
            data, lines = None, {}
        if not _is_taxonomy(data):
            raise TaxonomyError([_not_a_taxonomy(*base, source)])
    if not isinstance(data, dict):
        raise TaxonomyError([f"{source}: expected a mapping with 'version' and 'areas' at the top"])
    if "extends" in data:
        return _overlay(data, lines, source, directory, extending)
    try:
        parsed = _File.model_validate(data)
    except ValidationError as exc:
        raise TaxonomyError(
            [render_error(error, source, lines, data, _File) for error in exc.errors()]
        ) from None
    origins = {path: Origin(source, line) for path, line in lines.items()}
    problems = cross_check(parsed.areas, origins, source)
    if problems:
        raise TaxonomyError(problems)
    return build_taxonomy(parsed.version, parsed.areas, source, origins)


def _is_taxonomy(data: Any) -> bool:
    """Whether a YAML document is a taxonomy (a mapping with 'version' and 'areas') or an
    overlay (a mapping with 'extends'), by its top-level keys alone."""
    return isinstance(data, dict) and ("extends" in data or {"version", "areas"} <= data.keys())


def _not_a_taxonomy(where: Origin, extends: str, source: str) -> str:
    return (
        f"{where}: extends {extends!r}, and {source} is not a taxonomy: {_EXTENDS_RULE}; nothing "
        f"of what it holds is shown (if it is your taxonomy, `tagger taxonomy check --taxonomy "
        f"{source}` says what is wrong with it)"
    )


_EXTENDS_RULE = (
    "an overlay extends 'builtin', or a YAML file (.yaml or .yml) whose top level is a mapping "
    "with 'version' and 'areas' (a taxonomy) or with 'extends' (another overlay)"
)
_YAML_SUFFIXES = (".yaml", ".yml")


def _overlay(
    data: dict[str, Any],
    lines: dict[tuple[Any, ...], int],
    source: str,
    directory: Path,
    extending: tuple[Path, ...],
) -> Taxonomy:
    """The taxonomy an overlay makes of what it extends (overlays.apply_overlay), checked as
    a whole."""
    try:
        parsed = Overlay.model_validate(data)
    except ValidationError as exc:
        raise TaxonomyError(
            [render_error(error, source, lines, data, Overlay) for error in exc.errors()]
        ) from None
    where = Origin(source, line_of(lines, ("extends",)) or 1)
    base = _base(parsed.extends, where, directory, extending)
    areas, origins, dropped, problems = apply_overlay(parsed, base, source, lines)
    problems += cross_check(areas, origins, source, dropped)
    if problems:
        raise TaxonomyError(problems)
    version = f"{base.version}+{parsed.version or Path(source).stem}"
    return build_taxonomy(version, areas, source, origins, extends=base)


def _base(extends: str, where: Origin, directory: Path, extending: tuple[Path, ...]) -> Taxonomy:
    """What an overlay extends: 'builtin', or a taxonomy file (by its name's extension, then by
    its content; a file that is none is refused without a word of what it holds, since an
    overlay can name any path: /etc/shadow, ../../secrets)."""
    path = default_taxonomy_path() if extends == BUILTIN else directory / extends
    if extends != BUILTIN and path.suffix.lower() not in _YAML_SUFFIXES:
        raise TaxonomyError([f"{where}: extends {extends!r}: {_EXTENDS_RULE}"])
    if path.resolve() in extending:
        chain = " -> ".join(p.name for p in (*extending, path.resolve()))
        raise TaxonomyError([f"{where}: extends {extends!r}, which leads back to itself ({chain})"])
    if len(extending) > MAX_EXTENDS:
        raise TaxonomyError(
            [f"{where}: more than {MAX_EXTENDS} overlays extend one another; merge some of them"]
        )
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise TaxonomyError(
            [
                f"{where}: extends {extends!r}, and {short_path(path)} {what} ('builtin' is the "
                "shipped taxonomy)"
            ]
        )
    return _load(path, extending, base=(where, extends))
