"""The ``tagger`` command line. Data goes to stdout and only data; messages go to stderr.

Exit codes: 0 success, 1 an error (or, for ``tag``, some records were rejected), 2 a usage error.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from .errors import InputError, TaggerError

def _example(*commands: str) -> str:
    """A help epilog: the runnable example every command's help ends with."""
    return "\b\nExample:\n" + "\n".join(f"  {command}" for command in commands)


def taxonomy_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--taxonomy FILE, shared by every command that uses a taxonomy."""
    return click.option(
        "--taxonomy", "taxonomy_path", type=click.Path(dir_okay=False, path_type=Path),
        default=None, metavar="FILE",
        help="Taxonomy YAML file. Default: the taxonomy.yaml shipped with tagger.")(command)


def reports_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn TaggerError into 'Error: ...' on stderr and exit code 1; a closed stdout ends quietly."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except TaggerError as exc:
            for line in str(exc).splitlines():
                click.echo(f"Error: {line}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted. Lines already written are complete; `tagger tag ... -o FILE "
                       "--resume` continues a run.", err=True)
            sys.exit(130)
        except BrokenPipeError:
            sys.stderr.close()  # `tagger ... | head`: the reader left, nothing is wrong
            sys.exit(0)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             epilog=_example("tagger tag examples/icml2025-abstracts.txt -o tagged.jsonl",
                             "tagger filter tagged.jsonl --area rl"))
@click.version_option(package_name="tagger")
def main() -> None:
    """Tag research papers with keyphrases and research areas.

    Reads paper lists (the plain-text format, JSONL, JSON, CSV), extracts keyphrases with KeyBERT,
    maps them onto a YAML taxonomy and writes tagged JSONL.
    """


@main.command(epilog=_example("tagger tag examples/icml2025-abstracts.txt -o tagged.jsonl"))
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write JSONL here instead of stdout.")
@click.option("--format", "input_format", type=click.Choice(["auto", "text", "jsonl", "json", "csv"]),
              default="auto", show_default=True, help="Input format; auto guesses from the file.")
@taxonomy_option
@click.option("--top-n", type=click.IntRange(min=1), default=10, show_default=True,
              help="Keyphrases per paper.")
@click.option("--diversity", type=click.FloatRange(0, 1), default=0.2, show_default=True,
              help="MMR diversity of the keyphrases; 0 ranks by relevance alone.")
@click.option("--min-score", type=click.FloatRange(0, 1), default=0.25, show_default=True,
              help="Drop tags scoring below this.")
@click.option("--max-tags", type=click.IntRange(min=1), default=10, show_default=True,
              help="Keep at most this many tags per paper.")
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True,
              help="Papers embedded together.")
@click.option("-w", "--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes tagging in parallel; output is identical for any number.")
@click.option("--errors", "errors_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write rejected records here as JSONL (source, line, reason).")
@click.option("--resume", is_flag=True,
              help="Continue an interrupted run: keep the complete lines of -o FILE, tag the rest.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr. Default: when stderr is a terminal.")
@reports_errors
def tag(inputs: tuple[str, ...], output: Path | None, input_format: str,
        taxonomy_path: Path | None, top_n: int, diversity: float, min_score: float,
        max_tags: int, batch_size: int, workers: int, errors_path: Path | None, resume: bool,
        progress: bool | None) -> None:
    """Tag papers: one JSONL line per input paper, in input order.

    INPUT is a paper file (paper-list text, JSONL, JSON array or CSV), or - for stdin. Records
    that cannot be read are reported on stderr (and in --errors FILE) and the run goes on; the
    exit code is then 1. Output is written line by line: after a crash or Ctrl-C, the same
    command with --resume finishes the file as one uninterrupted run would have written it.
    """
    from .pipeline import Tagger
    from .readers import iter_records
    from .writers import JsonlWriter, dumps, resume_point

    if resume and output is None:
        raise click.UsageError("--resume needs -o FILE: the output of the run to continue")
    done = resume_point(output) if resume else []

    tagger = Tagger.from_taxonomy(taxonomy_path, top_n=top_n, diversity=diversity,
                                  min_score=min_score, max_tags=max_tags, batch_size=batch_size)
    fmt = None if input_format == "auto" else input_format
    # Checking every input now makes a missing file fail before the models load.
    readers = [iter_records(source, format=fmt) for source in inputs]
    errors = errors_path.open("wb", buffering=0) if errors_path else None
    rejected = duplicates = 0
    seen_ids: set[str] = set()

    def papers() -> Iterator[Any]:
        nonlocal rejected, duplicates
        resumed = 0
        for item in itertools.chain.from_iterable(readers):
            if isinstance(item, InputError):
                rejected += 1
                click.echo(f"Warning: skipped {item}", err=True)
                if errors:
                    errors.write(dumps({"source": item.source, "line": item.line,
                                        "record": item.record, "id": item.record_id,
                                        "reason": item.reason}))
                continue
            if item.id in seen_ids:
                duplicates += 1
                click.echo(f"Warning: paper id {item.id!r} appears again; both records are "
                           "tagged and kept, in input order", err=True)
            seen_ids.add(item.id)
            if resumed < len(done):  # tagged by the run being resumed
                if item.id != done[resumed]:
                    raise InputError(
                        f"line {resumed + 1} holds paper {done[resumed]!r} but the inputs' paper "
                        f"{resumed + 1} is {item.id!r}: this file is not an earlier run over "
                        "these inputs (remove it, or drop --resume)", source=str(output))
                resumed += 1
                continue
            yield item

    show = sys.stderr.isatty() if progress is None else progress
    # unbuffered: each line goes to the file in one write, so a killed run leaves whole lines
    stream = output.open("ab" if resume else "wb", buffering=0) if output else sys.stdout.buffer
    try:
        writer = JsonlWriter(stream)
        results = tagger.tag_many(papers(), workers=workers)
        if show:
            from tqdm import tqdm
            results = tqdm(results, unit=" papers", file=sys.stderr, dynamic_ncols=True)
        for tagged in results:
            writer.write(tagged)
        writer.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # a full disk, a vanished mount
        raise TaggerError(f"cannot write {output or 'to stdout'}: {exc.strerror or exc}. The "
                          f"{writer.count:,} lines written are complete; fix this and run the "
                          "same command with --resume to continue") from None
    finally:
        tagger.close()
        if errors:
            errors.close()
        if output:
            with contextlib.suppress(OSError):  # already reported above
                stream.close()
    where = f" to {output}" if output else ""
    summary = f"tagged {writer.count:,} papers{where}"
    if done:
        summary += f" after the {len(done):,} already there"
    if duplicates:
        summary += f" ({duplicates:,} with an id seen before)"
    if rejected:
        summary += f", {rejected:,} rejected" + (f": see {errors_path}" if errors_path else "")
    click.echo(summary, err=True)
    if rejected:
        sys.exit(1)


@main.command(name="filter", epilog=_example(
    "tagger filter examples/tagged/icml2025-abstracts.jsonl --area rl --area llm.agents",
    "tagger filter tagged.jsonl --where \"rl and not llm\" --venue ICML --format titles"))
@click.argument("tagged", metavar="FILE")
@click.option("--area", "areas", multiple=True, metavar="ID",
              help="Keep papers tagged with this area or one below it. Repeat for any of several.")
@click.option("--where", "where", default=None, metavar="EXPR",
              help="A boolean expression over area ids: \"gnn or (graph and theory)\".")
@click.option("--venue", default=None, help="Only papers of this venue (case-insensitive).")
@click.option("--year", type=int, default=None, help="Only papers of this year.")
@click.option("--min-score", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Only count tags scoring at least this.")
@click.option("--format", "output_format", type=click.Choice(["jsonl", "csv", "ids", "titles"]),
              default="jsonl", show_default=True, help="What to print for each paper kept.")
@taxonomy_option
@reports_errors
def filter_(tagged: str, areas: tuple[str, ...], where: str | None, venue: str | None,
            year: int | None, min_score: float, output_format: str,
            taxonomy_path: Path | None) -> None:
    """Keep the tagged papers in some research areas. FILE is tagged JSONL, or - for stdin.

    --area (any of) and --where (an expression with and, or, not and parentheses) may be given
    together: a paper must pass both. An area always includes the areas below it.
    """
    import csv

    from .query import parse_query
    from .taxonomy import load_taxonomy

    known = load_taxonomy(taxonomy_path).by_id
    any_of = parse_query(" or ".join(areas), known) if areas else None
    expression = parse_query(where, known) if where is not None else None
    out = sys.stdout.buffer
    table = csv.writer(sys.stdout, lineterminator="\n") if output_format == "csv" else None
    if table:
        table.writerow(["id", "title", "venue", "year", "tags"])
    for line, record in _read_tagged(tagged):
        paper = record["paper"]
        if venue is not None and str(paper.get("venue") or "").lower() != venue.lower():
            continue
        if year is not None and paper.get("year") != year:
            continue
        tagged_areas = {area for tag in record["tags"] if tag["score"] >= min_score
                        for area in tag["path"]}
        if any_of and not any_of(tagged_areas) or expression and not expression(tagged_areas):
            continue
        if output_format == "jsonl":
            out.write(line if line.endswith(b"\n") else line + b"\n")
        elif table:
            table.writerow([paper.get("id"), paper.get("title") or "", paper.get("venue") or "",
                            paper.get("year") or "", ";".join(t["id"] for t in record["tags"])])
        else:
            text = paper.get("id") if output_format == "ids" else (
                paper.get("title") or paper.get("abstract", "")[:100])
            click.echo(text)
    out.flush()


def _read_tagged(source: str) -> Iterator[tuple[bytes, dict]]:
    """Each line of a tagged JSONL file (`tagger tag` output), with its record."""
    import orjson

    for number, line in _lines(source):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if not (isinstance(record, dict) and "paper" in record
                and isinstance(record.get("tags"), list)):
            raise InputError("not a line of tagged JSONL (run `tagger tag` first)",
                             source=source, line=number)
        yield line, record


def _lines(source: str) -> Iterator[tuple[int, bytes]]:
    if source == "-":
        handle = sys.stdin.buffer
    else:
        try:
            handle = open(source, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            raise InputError("no such file", source=source) from None
        except IsADirectoryError:
            raise InputError("is a directory, not a file", source=source) from None
    try:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


@main.command(epilog=_example("tagger stats examples/tagged/icml2025-abstracts.jsonl",
                              "tagger stats tagged.jsonl --json"))
@click.argument("tagged", metavar="FILE")
@taxonomy_option
@click.option("--pairs", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many of the most frequent area pairs to show.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@reports_errors
def stats(tagged: str, taxonomy_path: Path | None, pairs: int, as_json: bool) -> None:
    """Count a tagged corpus by area: the area tree with papers and shares (per venue when
    there are several), the most frequent pairs of top-level areas, and untagged papers.
    FILE is tagged JSONL, or - for stdin."""
    import orjson

    from .stats import corpus_stats, render
    from .taxonomy import load_taxonomy

    taxonomy = load_taxonomy(taxonomy_path)
    result = corpus_stats((record for _, record in _read_tagged(tagged)), taxonomy)
    if as_json:
        click.echo(orjson.dumps(result.as_dict(taxonomy, top_pairs=pairs),
                                option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render(result, taxonomy, top_pairs=pairs), nl=False)


@main.command(epilog=_example(
    "tagger report examples/tagged/icml2025-abstracts.jsonl -o report.html"))
@click.argument("tagged", metavar="FILE")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the page here instead of to stdout.")
@click.option("--title", default=None, help="The page's title. Default: from FILE's name.")
@taxonomy_option
@reports_errors
def report(tagged: str, output: Path | None, title: str | None,
           taxonomy_path: Path | None) -> None:
    """Write one self-contained HTML page about a tagged corpus: papers per area (the tree), a
    heatmap of top-level areas tagged together, the top keyphrases per area, and a searchable,
    filterable paper list with each tag's evidence highlighted. Opens without a network.
    FILE is tagged JSONL, or - for stdin."""
    from .report import build_report, render_html
    from .taxonomy import load_taxonomy

    taxonomy = load_taxonomy(taxonomy_path)
    name = "stdin" if tagged == "-" else Path(tagged).name
    data = build_report((record for _, record in _read_tagged(tagged)), taxonomy, source=name)
    page = render_html(data, title=title or f"Tagged papers: {name}")
    if output is None:
        click.echo(page, nl=False)
        return
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise TaggerError(f"{output}: cannot write the report: {exc.strerror}") from None
    click.echo(f"{output}: {data['papers_total']:,} papers, {len(data['areas'])} areas", err=True)


@main.command(epilog=_example("tagger suggest tagged.jsonl > suggestions.yaml",
                              "tagger suggest tagged.jsonl --weak-below 0.7 --min-papers 5"))
@click.argument("tagged", metavar="FILE")
@taxonomy_option
@click.option("--weak-below", type=click.FloatRange(0, 1), default=0.6, show_default=True,
              help="A paper is weakly tagged when its best tag scores below this.")
@click.option("--min-papers", type=click.IntRange(min=1), default=3, show_default=True,
              help="Suggest a phrase group found in at least this many weakly tagged papers.")
@click.option("--group-similarity", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              help="Cosine at which two keyphrases count as near-duplicates.")
@click.option("--alias-similarity", type=click.FloatRange(0, 1), default=0.7, show_default=True,
              help="Cosine to an area's aliases from which a group is proposed as its aliases; "
                   "below it, as a new area.")
@click.option("--limit", type=click.IntRange(min=1), default=25, show_default=True,
              help="At most this many alias and this many new-area suggestions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
@reports_errors
def suggest(tagged: str, taxonomy_path: Path | None, weak_below: float, min_papers: int,
            group_similarity: float, alias_similarity: float, limit: int, as_json: bool) -> None:
    """Suggest how to grow the taxonomy: keyphrases frequent in papers with no tag or only weak
    tags, near-duplicates grouped, proposed as aliases of the area whose aliases they are nearest
    to (by all-MiniLM-L6-v2 embeddings) or as new areas, each with its papers and their count.
    Prints a YAML snippet to merge into the taxonomy. FILE is tagged JSONL, or - for stdin."""
    import orjson

    from .embedders import make_embedder
    from .suggest import render_yaml
    from .suggest import suggest as find_suggestions
    from .taxonomy import load_taxonomy

    taxonomy = load_taxonomy(taxonomy_path)
    result = find_suggestions(
        (record for _, record in _read_tagged(tagged)), taxonomy, make_embedder(), source="stdin" if tagged == "-" else tagged,
        weak_below=weak_below, min_papers=min_papers, group_similarity=group_similarity,
        alias_similarity=alias_similarity, limit=limit)
    if as_json:
        click.echo(orjson.dumps(result.as_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render_yaml(result, taxonomy), nl=False)


@main.command(epilog=_example("tagger schema > tagged.schema.json"))
@reports_errors
def schema() -> None:
    """Print the JSON Schema of one line of `tagger tag` output."""
    from .records import TaggedPaper

    click.echo(json.dumps(TaggedPaper.model_json_schema(), indent=2, ensure_ascii=False))


@main.group(epilog=_example("tagger taxonomy check"))
def taxonomy() -> None:
    """Work with taxonomy files."""


@taxonomy.command(epilog=_example("tagger taxonomy check --taxonomy my-taxonomy.yaml"))
@taxonomy_option
@reports_errors
def check(taxonomy_path: Path | None) -> None:
    """Validate a taxonomy and print its tree of areas with their rule counts."""
    from .taxonomy import load_taxonomy

    tax = load_taxonomy(taxonomy_path)
    for depth, area in tax.walk():
        rules = len(area.aliases) + len(area.cues) + len(area.acronyms) + len(area.patterns)
        click.echo(f"{'  ' * depth}{area.id}  {area.name}  ({rules} rules)")
    depth = max((d for d, _ in tax.walk()), default=0) + 1
    click.echo(f"{tax.source}: version {tax.version}, {len(tax.areas)} areas, "
               f"{len(tax.roots)} roots, {depth} levels: OK", err=True)


@taxonomy.command(epilog=_example(
    "tagger taxonomy lint --taxonomy my-taxonomy.yaml",
    "tagger taxonomy lint --corpus examples/tagged/icml2025-abstracts.jsonl"))
@taxonomy_option
@click.option("--corpus", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, metavar="FILE",
              help="Tagged JSONL (`tagger tag` output): also report rules that never fired and "
                   "areas never tagged.")
@reports_errors
def lint(taxonomy_path: Path | None, corpus: Path | None) -> None:
    """Find faults in a taxonomy, one line each with its YAML line number.

    Errors (the file does not load) make the exit code 1; warnings (the same alias in two areas,
    acronyms that are English words, regular expressions that can backtrack catastrophically,
    areas with no rules or no crosswalk, rules that never fire) are printed and exit 0.
    """
    from .lint import lint_taxonomy

    findings = lint_taxonomy(taxonomy_path, corpus=corpus)
    for finding in findings:
        click.echo(str(finding))
    errors = sum(f.severity == "error" for f in findings)
    click.echo(f"{errors} errors, {len(findings) - errors} warnings", err=True)
    if errors:
        sys.exit(1)


@main.command(name="eval", epilog=_example(
    "tagger eval ../shared/data/iclr2026-dev.jsonl --gold-field primary_area --scheme iclr",
    "tagger eval tagged.jsonl --scheme iclr_topic --json"))
@click.argument("papers", metavar="FILE")
@click.option("--gold-field", default="primary_area", show_default=True,
              help="The field of each paper that holds the author's label.")
@click.option("--scheme", type=click.Choice(["iclr", "icml", "iclr_topic"]), required=True,
              help="Which crosswalk of the taxonomy the labels are in.")
@taxonomy_option
@click.option("--references", is_flag=True,
              help="Also score YAKE and plain KeyBERT keyphrases on the same papers (slow).")
@click.option("--save-tagged", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the tagged papers here, to evaluate again without tagging.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@reports_errors
def eval_(papers: str, gold_field: str, scheme: str, taxonomy_path: Path | None,
          references: bool, save_tagged: Path | None, as_json: bool) -> None:
    """Measure tags against authors' labels and keyphrases against authors' keywords.

    FILE holds labelled papers (any input format: they are tagged first) or the output of
    `tagger tag` (evaluated as it is).
    """
    import time

    import orjson

    from .evaluate import evaluate_records, keybert_keyphrases, render, yake_keyphrases

    seconds = None
    records = _tagged_records(papers)
    if records is None:
        from .pipeline import Tagger
        from .readers import read_papers
        from .writers import dumps

        tagger = Tagger.from_taxonomy(taxonomy_path)
        inputs = list(read_papers(papers))
        started = time.perf_counter()
        records = [t.model_dump(mode="json") for t in tagger.tag_many(inputs)]
        seconds = time.perf_counter() - started
        if save_tagged:
            save_tagged.write_bytes(b"".join(dumps(r) for r in records))
    refs = None
    if references:
        texts = [f"{r['paper'].get('title') or ''}. {r['paper']['abstract']}" for r in records]
        refs = {"YAKE (n=3)": yake_keyphrases(texts),
                "KeyBERT (1-2 grams)": keybert_keyphrases(texts)}
    result = evaluate_records(records, scheme=scheme, gold_field=gold_field, source=papers,
                              references=refs, seconds=seconds)
    if as_json:
        click.echo(orjson.dumps(result.as_dict(), option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render(result), nl=False)


def _tagged_records(source: str) -> list[dict] | None:
    """The records of a `tagger tag` output file, or None when the file holds plain papers."""
    try:
        next(_read_tagged(source), None)
    except InputError:
        return None
    return [record for _, record in _read_tagged(source)]
