"""Wall time of `tagger tag --embedding-backend torch --workers 1` with one thread against one
intra-op thread per core (torch's own default), on the same abstracts, in alternating order.
(The default backend, ONNX Runtime, always runs one thread per worker, one worker per core.)

    python benchmarks/threads.py                 # 128 ICLR 2026 dev abstracts, 2 rounds

Each run is a fresh `tagger tag` process (model loading included), with OMP_NUM_THREADS and
MKL_NUM_THREADS set to 1 or to the machine's core count. Run it on an otherwise idle machine, and
again with a CPU-bound process beside it, to see both sides of the choice.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def seconds(source: Path, output: Path, threads: str) -> float:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = threads
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tagger",
            "tag",
            str(source),
            "-o",
            str(output),
            "--embedding-backend",
            "torch",
            "--workers",
            "1",
        ],
        env=env,
        cwd=HERE,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=HERE / "data/iclr2026-dev.jsonl")
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cores = str(os.cpu_count() or 1)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "papers.jsonl"
        lines = args.data.read_text(encoding="utf-8").splitlines()[: args.n]
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        totals = {"one": 0.0, "per core": 0.0}
        for round_ in range(args.rounds):
            order = ["one", "per core"] if round_ % 2 == 0 else ["per core", "one"]
            took = {}
            for name in order:
                threads = "1" if name == "one" else cores
                took[name] = seconds(source, Path(tmp) / f"{name}.jsonl", threads)
                totals[name] += took[name]
            same = (Path(tmp) / "one.jsonl").read_bytes() == (
                Path(tmp) / "per core.jsonl"
            ).read_bytes()
            print(
                json.dumps(
                    {
                        "round": round_ + 1,
                        "1_thread_s": round(took["one"], 1),
                        f"{cores}_threads_s": round(took["per core"], 1),
                        "same_output": same,
                    }
                )
            )
        print(
            json.dumps(
                {
                    "papers": len(lines),
                    "cores": int(cores),
                    "per_core_over_one_thread": round(totals["per core"] / totals["one"], 2),
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
