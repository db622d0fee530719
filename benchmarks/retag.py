"""`tagger retag` against `tagger tag` with the same taxonomy overlay, on the same papers, in one
run; and whether retag wrote the bytes tag wrote.

    python benchmarks/retag.py                    # data/iclr2024-topics.jsonl
    python benchmarks/retag.py --input papers.jsonl --overlay my-overlay.yaml

Steps, each a fresh `tagger` process timed from start to exit (start-up included: what a user
waits for), peak RSS of its process tree sampled every 0.2 s:
  1. tag the papers with the shipped taxonomy (the corpus a group already has);
  2. tag them with the overlay (what retag must reproduce);
  3. retag step 1's output with the overlay, one process and two;
  4. compare the bytes of 2 and 3, and diff 1 against 3;
  5. for each area the overlay adds: the papers whose title or abstract names one of its
     aliases (word by word, case aside, a plural 's' allowed), and how many of them, and of
     all papers, list it.
Every run uses its best setting on this machine: `tag` one worker per core (its default), retag
as given. The ratio is step 2's wall time over step 3's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import measure, tagger_command  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, default=ROOT / "data" / "iclr2024-topics.jsonl")
    parser.add_argument("--overlay", type=Path, default=ROOT / "examples" / "overlay.yaml")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tagger-retag-bench-"))
    base, tagged, papers = (
        work / "base.jsonl",
        work / "tagged.jsonl",
        sum(1 for line in args.input.open("rb") if line.strip()),
    )
    overlay = ["--taxonomy", str(args.overlay)]
    rows = []
    for name, command in [
        ("tag, shipped taxonomy", ["tag", str(args.input), "-o", str(base), "--no-progress"]),
        (
            "tag, with the overlay",
            ["tag", str(args.input), "-o", str(tagged), "--no-progress", *overlay],
        ),
        *(
            (
                f"retag, with the overlay, {workers} worker{'s' * (workers > 1)}",
                ["retag", str(base), "-o", str(work / f"retag-{workers}.jsonl"), *overlay]
                + ["--workers", str(workers), "--no-progress"],
            )
            for workers in (1, 2)
        ),
    ]:
        _, wall, peak = measure(tagger_command(*command))
        rows.append((name, wall, peak))
    same = {
        workers: (work / f"retag-{workers}.jsonl").read_bytes() == tagged.read_bytes()
        for workers in (1, 2)
    }
    diff = subprocess.run(
        tagger_command("diff", str(base), str(work / "retag-1.jsonl"), "--limit", "0"),
        capture_output=True,
        text=True,
    )
    print(f"{papers:,} papers of {args.input.name}; overlay {args.overlay.name}; work in {work}\n")
    print("| step | wall s | papers/s | peak RSS MiB |")
    print("| --- | --- | --- | --- |")
    for name, wall, peak in rows:
        print(f"| {name} | {wall:.1f} | {papers / wall:.0f} | {peak / 2**20:.0f} |")
    tag_wall = rows[1][1]
    print(
        f"\nretag / tag speed (the same overlay): {tag_wall / rows[2][1]:.1f}x with 1 worker, "
        f"{tag_wall / rows[3][1]:.1f}x with 2; retag's output byte-identical to tag's: "
        f"{same[1]} (1 worker), {same[2]} (2 workers)\n"
    )
    print(diff.stdout.rstrip())
    print()
    print(new_areas(args.overlay, tagged))


def new_areas(overlay: Path, tagged: Path) -> str:
    """A table: each area the overlay adds, the papers that name it and those that list it."""
    import json
    import re

    from tagger.taxonomy.loading import load_taxonomy

    base, new = load_taxonomy(), load_taxonomy(overlay)
    records = [json.loads(line) for line in tagged.open(encoding="utf-8")]
    lines = [
        "| new area | papers naming it | ... listing it | papers listing it |",
        "| --- | --- | --- | --- |",
    ]
    for area in new.areas:
        if area.id in base.by_id:
            continue
        names = re.compile(
            r"(?i)\b(?:" + "|".join(re.escape(a) + "s?" for a in area.aliases) + r")\b"
        )
        naming = [
            r
            for r in records
            if names.search(f"{r['paper'].get('title') or ''} {r['paper']['abstract']}")
        ]
        listing = [r for r in records if any(t["id"] == area.id for t in r["tags"])]
        named_and_listed = sum(any(t["id"] == area.id for t in r["tags"]) for r in naming)
        lines.append(f"| {area.id} | {len(naming)} | {named_and_listed} | {len(listing)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
