"""What a `tagger review` of a large tagged file holds and sends: resident memory once the
review is open and its page made, and the time and bytes of the page (``GET /``) and of one block
of papers (``GET /papers``, where the page fetches them).

    python benchmarks/review_memory.py                 # 1,000 and 10,000 papers
    python benchmarks/review_memory.py --papers 10000

The papers are the first line of examples/tagged/icml2025-abstracts.jsonl copied with new ids.
Each size runs in a fresh process (a child of this one, in the tree this script lies in, so the
same script measures a checkout of another commit): it opens a Review on the file (as `tagger
review` does), makes the page as the server does on each request, then one block of papers if
the review serves them in blocks (before, the review held every parsed paper and put them all in
the page). RSS is read from /proc/self/status (VmRSS now, VmHWM the peak); the page's time is that
of its second making (the first includes imports). Prints one line per size, and, given --compare
DIR (another checkout, e.g. one from before the blocks), that checkout's line and the ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINE = ROOT / "examples" / "tagged" / "icml2025-abstracts.jsonl"

MEASURE = r"""
import json, sys, time
from pathlib import Path
from tagger.corpus.review import Review

def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # MB

tagged, judgments = sys.argv[1], sys.argv[2]
start = time.perf_counter()
review = Review.open(tagged, judgments)
opened = time.perf_counter() - start
start = time.perf_counter()
page = review.page("t" * 32).encode()
made = time.perf_counter() - start
again = time.perf_counter()
review.page("t" * 32)
remade = time.perf_counter() - again
out = {"open_s": opened, "page_s": made, "page_again_s": remade, "page_bytes": len(page)}
if hasattr(review, "papers_from"):
    start = time.perf_counter()
    block = json.dumps(review.papers_from(0, 50)).encode()
    out.update(block_s=time.perf_counter() - start, block_bytes=len(block))
out.update(rss_mb=rss("VmRSS"), peak_mb=rss("VmHWM"))
print(json.dumps(out))
"""


def tagged_file(directory: Path, count: int) -> Path:
    """``count`` copies of a real tagged line, each with its own id."""
    line = json.loads(LINE.read_text(encoding="utf-8").splitlines()[0])
    path = directory / f"tagged-{count}.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for k in range(count):
            line["paper"]["id"] = f"p{k:06d}"
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def measure(tree: Path, tagged: Path, directory: Path) -> dict:
    judgments = directory / f"judged-{tree.name}-{tagged.stem}.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(tagged), str(judgments)],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(done.stderr)
    return json.loads(done.stdout)


def said(figures: dict) -> str:
    text = (
        f"RSS {figures['rss_mb']:6.0f} MB (peak {figures['peak_mb']:4.0f}), open "
        f"{figures['open_s']:5.2f} s, GET / {figures['page_bytes'] / 1e6:7.3f} MB in "
        f"{figures['page_again_s']:5.3f} s"
    )
    if "block_bytes" in figures:
        text += (
            f", GET /papers (50) {figures['block_bytes'] / 1e6:5.3f} MB in "
            f"{figures['block_s']:5.3f} s"
        )
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--compare", type=Path, help="another checkout to measure the same way")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="review-memory-") as temporary:
        directory = Path(temporary)
        for count in args.papers:
            tagged = tagged_file(directory, count)
            figures = measure(ROOT, tagged, directory)
            print(f"{count:>7,} papers, this tree:  {said(figures)}", flush=True)
            if args.compare is not None:
                other = measure(args.compare.resolve(), tagged, directory)
                print(f"{count:>7,} papers, {args.compare}: {said(other)}", flush=True)
                print(
                    f"{'':>7}         ratio (other / this): RSS "
                    f"{other['rss_mb'] / figures['rss_mb']:.1f}x, GET / bytes "
                    f"{other['page_bytes'] / figures['page_bytes']:.0f}x, GET / time "
                    f"{other['page_again_s'] / figures['page_again_s']:.0f}x",
                    flush=True,
                )


if __name__ == "__main__":
    main()
