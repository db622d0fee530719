"""A taxonomy's YAML, read safely: no objects built, no alias bombs, no nesting that would exhaust
the stack, no key given twice; and the line of every node, for messages that name it.

A document read once is kept in the cache (io.cache) as JSON, under the sha256 of its text and of
this module: the packaged taxonomy's YAML takes 0.15 s to read and check, its JSON 0.01 s, and
every command reads it (``tagger filter`` on a thousand lines spent a third of its time here). A
document that JSON would not give back as it is (a date, a number as a key) is not kept."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from ..errors import TaxonomyError
from ..io import cache

MAX_YAML_NODES = 1_000_000  # the shipped taxonomy has some 40,000
MAX_YAML_DEPTH = 32  # a taxonomy file nests 6 deep: areas, an area, crosswalk, a scheme, a label


def read_yaml(raw: bytes | str, source: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """The document and the line of each of its nodes, safely: no objects built, no alias
    bombs, no nesting that would exhaust the stack."""
    text = _decode(raw, source) if isinstance(raw, bytes) else raw
    entry = _cache_entry(text)
    kept = _kept(*entry) if entry is not None else None
    if kept is not None:
        return kept
    data, lines = _read(text, source)
    if entry is not None:
        _keep(*entry, data, lines)
    return data, lines


def _read(text: str, source: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    try:
        # one parse gives both the node tree (for line numbers) and the data; the C loader is
        # the same safe loader, ten times faster, when PyYAML was built with libyaml
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_size(node, source)  # before anything walks the tree its aliases make
                _duplicate_keys(node, source)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except RecursionError:
        raise TaxonomyError([f"{source}: the YAML nests too deeply to read"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "could not determine a constructor" in str(exc):
            problem = (
                f"{problem}: YAML tags that build objects are not allowed; "
                "write plain strings, lists and mappings"
            )
        raise TaxonomyError([f"{source}{where}: {problem}"]) from None
    return data, (_line_numbers(node) if node is not None else {})


def _cache_entry(text: str) -> tuple[Path, str] | None:
    """Where a document read from ``text`` is kept, and its key; None without a usable cache."""
    where = cache.subdirectory("yaml")
    if where is None:
        return None
    key = hashlib.sha256(
        json.dumps(
            [
                hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
                hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
                yaml.__version__,
            ]
        ).encode()
    ).hexdigest()
    return where / f"{key}.json", key


def _kept(path: Path, key: str) -> tuple[Any, dict[tuple[Any, ...], int]] | None:
    raw = cache.load(path, key)
    if raw is None:
        return None
    try:
        kept = json.loads(raw)
        return kept["data"], {tuple(loc): line for loc, line in kept["lines"]}
    except (ValueError, TypeError, KeyError):
        return None


def _keep(path: Path, key: str, data: Any, lines: dict[tuple[Any, ...], int]) -> None:
    """Keep the document, if JSON gives it back exactly (types too: 1 and 1.0, True and 1)."""
    try:
        raw = json.dumps({"data": data, "lines": [[list(loc), n] for loc, n in lines.items()]})
    except (TypeError, ValueError):  # a date, a set: not JSON
        return
    if _typed(json.loads(raw)["data"]) != _typed(data):
        return
    cache.save(path, key, raw.encode())


def _typed(value: Any) -> Any:
    """``value`` with the type of every scalar beside it, so that equal means the same."""
    if isinstance(value, dict):
        return {(type(k).__name__, k): _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def line_of(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def _decode(raw: bytes, source: str) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TaxonomyError([f"{source}: the file is UTF-16; save it as UTF-8"])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, byte = raw.count(b"\n", 0, exc.start) + 1, raw[exc.start]
        problem = f"invalid UTF-8 (byte 0x{byte:02X}); save the file as UTF-8"
        raise TaxonomyError([f"{source} line {line}: {problem}"]) from None


def _check_size(node: yaml.Node, source: str) -> None:
    """Refuse a document that its aliases expand beyond MAX_YAML_NODES nodes (a 'billion laughs'),
    that nests deeper than MAX_YAML_DEPTH, or whose anchor refers to itself: sizes are counted
    once per node, so the check costs what the text does, not what it expands to. A document
    without aliases (every node met once) is checked in one quick pass."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(node, 1)]
    while stack:
        current, level = stack.pop()
        if id(current) in seen:
            return _check_expanded_size(node, source)  # an alias: count what it expands to
        seen.add(id(current))
        if level > MAX_YAML_DEPTH:
            line = current.start_mark.line + 1
            raise TaxonomyError(
                [f"{source} line {line}: the YAML nests more than {MAX_YAML_DEPTH} levels deep"]
            )
        if isinstance(current, yaml.MappingNode):
            for pair in current.value:
                stack.append((pair[0], level + 1))
                stack.append((pair[1], level + 1))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend((kid, level + 1) for kid in current.value)
    if len(seen) > MAX_YAML_NODES:
        raise TaxonomyError([f"{source}: more than {MAX_YAML_NODES:,} YAML values"])


def _check_expanded_size(node: yaml.Node, source: str) -> None:
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        key, kids = id(current), _kids(current)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(kid)] for kid in kids)
            depth[key] = 1 + max((depth[id(kid)] for kid in kids), default=0)
            line = current.start_mark.line + 1
            if size[key] > MAX_YAML_NODES:
                raise TaxonomyError(
                    [
                        f"{source} line {line}: YAML aliases expand this to more than "
                        f"{MAX_YAML_NODES:,} values; write the values out instead"
                    ]
                )
            if depth[key] > MAX_YAML_DEPTH:
                raise TaxonomyError(
                    [f"{source} line {line}: the YAML nests more than {MAX_YAML_DEPTH} levels deep"]
                )
            continue
        if key in size:
            continue
        if key in on_path:
            line = current.start_mark.line + 1
            raise TaxonomyError([f"{source} line {line}: a YAML anchor refers to itself"])
        on_path.add(key)
        stack.append((current, True))
        stack.extend((kid, False) for kid in kids)


def _kids(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _duplicate_keys(node: yaml.Node, source: str) -> None:
    """Refuse a mapping that gives a key twice: YAML would keep the last silently (an overlay's
    second edit of an area would replace its first)."""
    problems = []
    stack = [node]
    seen_nodes: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen_nodes:
            continue
        seen_nodes.add(id(current))
        if isinstance(current, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key, _ in current.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue
                line = key.start_mark.line + 1
                if key.value in first:
                    problems.append(
                        f"{source} line {line}: {key.value!r} is given twice in one mapping "
                        f"(first on line {first[key.value]}); YAML would keep only the last"
                    )
                first.setdefault(key.value, line)
        stack.extend(_kids(current))
    if problems:
        raise TaxonomyError(problems)


def _line_numbers(node: yaml.Node) -> dict[tuple[Any, ...], int]:
    """Map each path in the document (('areas', 3, 'parent'), ...) to its 1-based line."""
    lines: dict[tuple[Any, ...], int] = {}

    def visit(current: yaml.Node, path: tuple[Any, ...]) -> None:
        lines[path] = current.start_mark.line + 1
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                visit(value, path + (key.value,))
                lines[path + (key.value,)] = (
                    key.start_mark.line + 1
                )  # the key's line, not the value's
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                visit(item, path + (index,))

    visit(node, ())
    return lines
