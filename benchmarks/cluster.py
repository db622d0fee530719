"""`tagger tag --cluster local:2` against `tagger tag --workers 2` on the same synthetic records,
in one run: throughput, peak RSS per worker process, and the time to the first complete part
(a quarter of a partition: tagger.runs.cluster.plan) against a local run's time to the same number
of lines.

    python benchmarks/cluster.py                 # 20,000 perturbed abstracts, partitions of 2,000
    python benchmarks/cluster.py --n 4000 --partition-size 1000
    python benchmarks/cluster.py --n 100000 --unique 20000 --baseline 1000 \
        --embedding-backend static

With ``--baseline N``, both runs are made on the first N records too, first, and the peak RSS at
``--n`` is given against it (memory that grows with the corpus would show there).

Each command is a fresh process (start-up included in its wall time). Peak RSS per worker is the
largest resident size any single process of the command's tree reached, sampled every 0.2 s,
excluding the command's own process (the local run's parent or the cluster's client, scheduler
and nannies, which hold no model); the whole tree's peak is shown too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import family, perturbed, rss, unique_abstracts  # noqa: E402


def run(command: list[str], watch: Path | None = None, lines: int = 0) -> dict:
    """Run a command; sample its tree; note when ``watch`` first holds a complete part (a
    directory) or ``lines`` lines (a file)."""
    peak_worker = peak_tree = 0
    first: float | None = None
    proc = subprocess.Popen(command, stderr=subprocess.PIPE)
    stop = threading.Event()
    started = time.perf_counter()

    def sample() -> None:
        nonlocal peak_worker, peak_tree, first
        while not stop.is_set():
            found = {pid: rss(pid) for pid in family(proc.pid)}
            peak_tree = max(peak_tree, sum(found.values()))
            workers = [size for pid, size in found.items() if pid != proc.pid]
            peak_worker = max([peak_worker, *workers])
            if first is None and watch is not None and _reached(watch, lines):
                first = time.perf_counter() - started
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    wall = time.perf_counter() - started
    stop.set()
    sampler.join()
    if proc.returncode:
        raise SystemExit(f"{command} failed ({proc.returncode}): {stderr.decode()[-2000:]}")
    return {"wall": wall, "worker": peak_worker, "tree": peak_tree, "first": first}


def _reached(watch: Path, lines: int) -> bool:
    """A part directory with a complete part, or a file with ``lines`` lines."""
    if watch.is_dir():
        return bool(list(watch.glob("part-*.done.json")))
    return watch.is_file() and _count_lines(watch) >= lines


def _count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


def measure_both(source: Path, work: Path, n: int, partition_size: int, backend: str) -> dict:
    """``tag --workers 2`` and ``tag --cluster local:2`` on ``source``, one after the other."""
    from tagger.runs.cluster import plan

    first = plan([str(source)], size=partition_size)[0]
    first_lines = first.stop - first.first  # the first part's records, as the cluster cuts it
    tagger = [sys.executable, "-m", "tagger", "tag", str(source), "--no-progress"]
    tagger += ["--embedding-backend", backend]
    local = run(
        [*tagger, "-o", str(work / "local.jsonl"), "--workers", "2"],
        watch=work / "local.jsonl",
        lines=first_lines,
    )
    cluster = run(
        [*tagger, "-o", str(work / "parts"), "--cluster", "local:2"]
        + ["--partition-size", str(partition_size)],
        watch=work / "parts",
    )
    parts = sorted((work / "parts").glob("part-*.jsonl"))
    parts = [p for p in parts if not p.name.endswith(".errors.jsonl")]
    same = b"".join(p.read_bytes() for p in parts) == (work / "local.jsonl").read_bytes()
    return {"local": local, "cluster": cluster, "first_lines": first_lines, "same": same, "n": n}


def table(found: dict) -> None:
    mib, n = 2**20, found["n"]
    print(
        "| run | records | wall s | records/s | peak RSS, largest worker MiB "
        f"| peak RSS, whole tree MiB | first {found['first_lines']:,} lines complete "
        "(the first part), s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    runs = {"local": "tagger tag --workers 2", "cluster": "tagger tag --cluster local:2"}
    for key, name in runs.items():
        r = found[key]
        print(
            f"| `{name}` | {n:,} | {r['wall']:.1f} | {n / r['wall']:.1f} | {r['worker'] / mib:.0f} "
            f"| {r['tree'] / mib:.0f} | {r['first'] or float('nan'):.1f} |"
        )
    local, cluster = found["local"], found["cluster"]
    print(
        f"\ncluster / local: throughput {local['wall'] / cluster['wall']:.2f}×, largest worker "
        f"{cluster['worker'] / local['worker']:.2f}×, first part "
        f"{(cluster['first'] or 0) / (local['first'] or 1):.2f}×; parts concatenated equal the "
        f"local output: {found['same']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--partition-size", type=int, default=2_000)
    parser.add_argument(
        "--baseline", type=int, help="also run both on the first N records, and compare memory"
    )
    parser.add_argument(
        "--embedding-backend",
        default="onnx-int8",
        help="the backend both runs use (default onnx-int8, tagger's default; static: fast mode)",
    )
    parser.add_argument(
        "--unique",
        type=int,
        default=1000,
        help="real abstracts the records are made from (default 1,000; up to about 14,500: "
        "data/'s labelled files, then its corpus)",
    )
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "data")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tagger-cluster-bench-"))
    rows = unique_abstracts(args.data, args.unique)
    records = perturbed(rows, args.n)
    sizes = [args.baseline, args.n] if args.baseline else [args.n]
    found = {}
    for n in sizes:
        (work / str(n)).mkdir()
        source = work / str(n) / "synthetic.jsonl"
        with open(source, "w", encoding="utf-8") as handle:
            for record in records[:n]:
                handle.write(json.dumps(record) + "\n")
        found[n] = measure_both(
            source, work / str(n), n, args.partition_size, args.embedding_backend
        )
    print(
        f"records perturbed from {len(rows):,} real abstracts, partitions of "
        f"{args.partition_size:,}, "
        f"--embedding-backend {args.embedding_backend}, {os.cpu_count()} CPUs\n"
    )
    for n in sizes:
        table(found[n])
        print()
    if args.baseline:
        small, large = found[args.baseline], found[args.n]
        print(
            f"{args.n:,} records against {args.baseline:,}, peak RSS: "
            + ", ".join(
                f"{k} largest worker {large[k]['worker'] / small[k]['worker']:.3f}×, "
                f"whole tree {large[k]['tree'] / small[k]['tree']:.3f}×"
                for k in ("local", "cluster")
            )
        )


if __name__ == "__main__":
    main()
