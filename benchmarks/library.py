"""What reading a reference manager's library costs, and writing it back: a 10 MB BibTeX file
read as papers, the same papers read from JSON Lines (the baseline, in the same run), and the
library written back with two tags on every paper. Tagging is left out: it costs the same
whatever the papers came from.

    python benchmarks/library.py              # 10 MB, 3 runs each, the best kept
    python benchmarks/library.py --mb 2 --runs 1

The library is tests/data/libraries/zotero.bib's entries with abstracts, each again under a new
key until it is ``--mb`` MB (as tests/io/test_libraries.py makes its 10 MB file). Prints a
Markdown table: seconds for each step, papers per second, and reading the library against
reading JSON Lines.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPORT = ROOT / "tests" / "data" / "libraries" / "zotero.bib"


def make_library(directory: Path, megabytes: float) -> tuple[Path, Path]:
    """The library, and the same papers as JSON Lines."""
    from tagger.io import bibtex
    from tagger.io.readers import iter_records
    from tagger.records import Paper

    text = EXPORT.read_text(encoding="utf-8")
    entries = [b.text for b in bibtex.blocks(text) if b.fields and "abstract" in b.fields]
    parts, size, number = [], 0, 0
    while size < megabytes * 2**20:
        entry = entries[number % len(entries)]
        parts.append(re.sub(r"^@(\w+)\{([^,]+),", rf"@\1{{\2-{number},", entry) + "\n\n")
        size += len(parts[-1].encode())
        number += 1
    library = directory / "library.bib"
    library.write_text("".join(parts), encoding="utf-8")
    plain = directory / "papers.jsonl"
    with plain.open("w", encoding="utf-8") as handle:
        for paper in iter_records(library):
            if isinstance(paper, Paper):
                fields = paper.model_dump(include={"id", "title", "abstract", "venue", "year"})
                handle.write(json.dumps(fields | {"keywords": paper.keywords}) + "\n")
    return library, plain


def best(runs: int, step) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = step()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=10.0, help="The library's size (MB).")
    parser.add_argument("--runs", type=int, default=3, help="Runs of each step; the best kept.")
    args = parser.parse_args()
    from tagger.io.libraries import write_back
    from tagger.io.readers import iter_records
    from tagger.records import Paper

    with tempfile.TemporaryDirectory() as temporary:
        library, plain = make_library(Path(temporary), args.mb)
        data = library.read_bytes()
        read_library, papers = best(args.runs, lambda: list(iter_records(library)))
        read_plain, baseline = best(args.runs, lambda: list(iter_records(plain)))
        papers = [p for p in papers if isinstance(p, Paper)]
        assert len(papers) == len(baseline)
        results = [(p.library, ["rl", "graph.gnn"]) for p in papers]
        wrote, out = best(
            args.runs, lambda: b"".join(write_back([("library.bib", data)], "bibtex", results))
        )
        assert out.count(b"tagger:rl") == len(papers)
    count = len(papers)
    rows = [
        ("read the .bib (bibtexparser, LaTeX as text)", read_library),
        ("read the same papers from JSON Lines (baseline)", read_plain),
        ("write the .bib back with two tags each", wrote),
    ]
    print(f"{len(data) / 2**20:.1f} MB, {count:,} entries, the best of {args.runs} runs:\n")
    print("| step | seconds | papers/s |")
    print("| --- | --- | --- |")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} | {count / seconds:,.0f} |")
    print(f"\nReading the library takes {read_library / read_plain:.1f}x reading JSON Lines.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
