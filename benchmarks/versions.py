"""CPU time and peak memory of `tagger tag` from this checkout against another one, on the same
abstracts.

    git worktree add /tmp/base 927aa27
    python benchmarks/versions.py /tmp/base            # 200 ICLR 2026 dev abstracts, 2 rounds

Each round runs both checkouts' command line, one after the other (alternating which goes first),
in child processes with one thread (OMP_NUM_THREADS=1, the fastest setting on 2 cores), and reads
the child's user + system CPU seconds and its peak resident memory (os.wait4's rusage of that
child alone): start-up and model loading included, the same for both. The ratio is this
checkout's CPU over the other's, per round and in total; memory is the difference of peaks.

Both checkouts' modules are compiled to bytecode first, as `pip install` leaves an installed
package: where PYTHONDONTWRITEBYTECODE is set (these machines set it), a checkout's modules would
otherwise be compiled again in every process, a cost of the checkout's size (0.1 s of a worker's
start-up) that no installed tagger pays.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def cost(checkout: Path, source: Path, output: Path) -> tuple[float, float]:
    """CPU seconds and peak resident MiB of one `tagger tag` run of ``checkout``'s code (its
    package on the path)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            [sys.executable, "-m", "tagger", "tag", str(source), "-o", str(output)],
            env=env,
            cwd=checkout,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            errors.seek(0)
            sys.exit(f"{checkout}: tagger tag failed\n{errors.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss is in KiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("other", type=Path, help="the checkout to compare with")
    parser.add_argument("--data", type=Path, default=HERE / "data/iclr2026-dev.jsonl")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    for checkout in (HERE, args.other.resolve()):
        compileall.compile_dir(checkout / "tagger", quiet=1)
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "papers.jsonl"
        lines = args.data.read_text(encoding="utf-8").splitlines()[: args.n]
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        totals = {"this": 0.0, "other": 0.0}
        peaks = {"this": 0.0, "other": 0.0}
        for round_ in range(args.rounds):
            order = ["this", "other"] if round_ % 2 == 0 else ["other", "this"]
            took, peak = {}, {}
            for name in order:
                checkout = HERE if name == "this" else args.other.resolve()
                took[name], peak[name] = cost(checkout, source, Path(folder) / f"{name}.jsonl")
                totals[name] += took[name]
                peaks[name] = max(peaks[name], peak[name])
            print(
                json.dumps(
                    {
                        "round": round_ + 1,
                        "this_cpu_s": round(took["this"], 1),
                        "other_cpu_s": round(took["other"], 1),
                        "ratio": round(took["this"] / took["other"], 3),
                        "this_peak_mib": round(peak["this"]),
                        "other_peak_mib": round(peak["other"]),
                    }
                )
            )
        print(
            json.dumps(
                {
                    "papers": len(lines),
                    "this": str(HERE),
                    "other": str(args.other),
                    "ratio_total": round(totals["this"] / totals["other"], 3),
                    "peak_mib_more": round(peaks["this"] - peaks["other"]),
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
