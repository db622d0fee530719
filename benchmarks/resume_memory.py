"""Peak memory of `tagger tag --resume` over a complete output, at 5,000 and at 50,000 lines.

    python benchmarks/resume_memory.py            # 5,000 and 50,000 lines
    python benchmarks/resume_memory.py --lines 1000 10000

A resume keeps an interrupted run's lines once it has proved them this run's; it held all of them
in memory (296 MB at 5,000 lines, over 982 MB at 50,000) before it read the output in step with
the inputs. The papers of examples/icml2025-abstracts.txt are tagged once (the real model), then
their lines are repeated with new ids into outputs of each size, beside the papers they hold: a
complete output, so the resume tags nothing and loads no model (checked: it must say "tagged 0
papers ... after the N already there"). Each resume runs in a fresh process; its peak resident
memory is getrusage's ru_maxrss of that process (RUSAGE_CHILDREN of a wrapper that runs only it).
Prints each size's peak and the ratio of the largest to the smallest: about 1 when nothing grows
with the output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "examples" / "icml2025-abstracts.txt"

# Runs its arguments as a command and prints that command's peak RSS in KB: the wrapper's only
# child, so RUSAGE_CHILDREN is that command's alone.
PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, "
    "text=True)\n"
    "sys.stderr.write(done.stderr)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(done.returncode)\n"
)


def tagger(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "tagger", *arguments, "--no-progress"]


def complete_run(work: Path, records: list[dict], lines: int) -> tuple[Path, Path]:
    """Papers and a complete output of them, ``lines`` long, from the lines of a real run."""
    from tagger.io.jsonl import dumps

    papers, out = work / f"papers-{lines}.jsonl", work / f"tagged-{lines}.jsonl"
    with papers.open("w", encoding="utf-8") as inputs, out.open("wb") as output:
        for k in range(lines):
            record = json.loads(json.dumps(records[k % len(records)]))
            record["paper"]["id"] = f"r{k}"
            paper = {key: value for key, value in record["paper"].items() if value is not None}
            inputs.write(json.dumps(paper, ensure_ascii=False) + "\n")
            output.write(dumps(record))
    return papers, out


def peak_of_resume(papers: Path, out: Path, lines: int) -> int:
    """Peak RSS in bytes of `tagger tag PAPERS -o OUT --resume` over a complete OUT."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *tagger("tag", str(papers), "-o", str(out), "--resume")],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"the resume of {lines:,} lines failed:\n{done.stderr}")
    summary = done.stderr.strip().splitlines()[-1]
    if not summary.startswith(f"tagged 0 papers to {out} after the {lines:,} already there"):
        raise SystemExit(f"the resume of {lines:,} lines tagged something: {summary}")
    return int(done.stdout.split()[-1]) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[5_000, 50_000])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tagger-resume-bench-"))
    small = work / "small.jsonl"
    subprocess.run(tagger("tag", str(SOURCE), "-o", str(small)), check=True)
    records = [json.loads(line) for line in small.read_text(encoding="utf-8").splitlines()]
    peaks = {}
    for lines in args.lines:
        papers, out = complete_run(work, records, lines)
        peaks[lines] = peak_of_resume(papers, out, lines)
        size = out.stat().st_size
        print(
            f"{lines:>7,} lines ({size / 2**20:,.0f} MB): peak RSS {peaks[lines] / 2**20:,.0f} MB"
        )
    low, high = min(args.lines), max(args.lines)
    print(f"ratio {high:,} / {low:,} lines: {peaks[high] / peaks[low]:.2f}")


if __name__ == "__main__":
    main()
