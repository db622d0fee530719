"""CPU time and peak memory of `tagger tag` from this checkout against another one, on the same
abstracts.

    git worktree add /tmp/base 927aa27
    python benchmarks/versions.py /tmp/base              # 200 ICLR 2026 dev abstracts, 2 rounds
    python benchmarks/versions.py /tmp/base --together   # both at once, a core each

Each round runs both checkouts' command line in child processes with one thread
(OMP_NUM_THREADS=1, the fastest setting on 2 cores), and reads the child's user + system CPU
seconds and its peak resident memory (os.wait4's rusage of that child and the workers it
waited for): start-up and model loading included, the same for both. By default the two run
one after the other, alternating which goes first, with tagger's default workers (one per
core). With ``--together`` they run at the same time, each pinned to a core of its own (the
cores swapped every round) with one worker: whatever else the host runs meanwhile slows both
alike, and a round's ratio strays a third as far (on the machine this was written on, 0.02
against 0.07).

The ratio is this checkout's CPU over the other's, per round and in total, with the rounds'
median and a 90% bootstrap interval of the total; memory is the difference of peaks.

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
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def started(
    checkout: Path, source: Path, output: Path, errors, core: int | None
) -> subprocess.Popen:
    """`tagger tag` of ``checkout``'s code (its package on the path), running; on ``core``
    alone with one worker, if given."""
    env = dict(os.environ, PYTHONPATH=str(checkout), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    command = [sys.executable, "-m", "tagger", "tag", str(source), "-o", str(output)]
    return subprocess.Popen(
        command + (["--workers", "1"] if core is not None else []),
        env=env,
        cwd=checkout,
        stdout=subprocess.DEVNULL,
        stderr=errors,
        preexec_fn=None if core is None else lambda: os.sched_setaffinity(0, {core}),
    )


def finished(child: subprocess.Popen, errors, checkout: Path) -> tuple[float, float]:
    """CPU seconds and peak resident MiB of a run :func:`started`."""
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status):
        errors.seek(0)
        sys.exit(f"{checkout}: tagger tag failed\n{errors.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # ru_maxrss is in KiB


def one_round(
    checkouts: dict[str, Path], source: Path, folder: Path, round_: int, cores: list[int] | None
) -> dict[str, tuple[float, float]]:
    """Each checkout's CPU seconds and peak MiB in round ``round_``: at once, on ``cores``, if
    given (the first to start gets the first core; which starts first alternates)."""
    names = ["this", "other"] if round_ % 2 == 0 else ["other", "this"]
    measured = {}
    with tempfile.TemporaryFile() as first, tempfile.TemporaryFile() as second:
        errors = dict(zip(names, (first, second), strict=True))
        if cores:
            children = {
                name: started(checkouts[name], source, folder / f"{name}.jsonl", errors[name], core)
                for core, name in zip(cores, names, strict=True)
            }
            for name, child in children.items():
                measured[name] = finished(child, errors[name], checkouts[name])
        else:
            for name in names:
                child = started(
                    checkouts[name], source, folder / f"{name}.jsonl", errors[name], None
                )
                measured[name] = finished(child, errors[name], checkouts[name])
    return measured


def interval(rounds: list[tuple[float, float]], draws: int = 2000) -> list[float]:
    """A 90% bootstrap interval of the total ratio: the rounds drawn again with replacement
    (a fixed seed), the 5th and 95th percentiles of the ratio of the draws' sums. How far the
    machine's noise leaves the total from what it measures."""
    pick = random.Random(0)
    ratios = sorted(
        sum(a for a, _ in draw) / sum(b for _, b in draw)
        for draw in ([pick.choice(rounds) for _ in rounds] for _ in range(draws))
    )
    return [round(ratios[int(0.05 * draws)], 3), round(ratios[int(0.95 * draws) - 1], 3)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("other", type=Path, help="the checkout to compare with")
    parser.add_argument("--data", type=Path, default=HERE / "data/iclr2026-dev.jsonl")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--together", action="store_true", help="run both at once, a core each, one worker each"
    )
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))[:2] if args.together else None
    if cores is not None and len(cores) < 2:
        sys.exit("--together needs two cores")

    checkouts = {"this": HERE, "other": args.other.resolve()}
    for checkout in checkouts.values():
        compileall.compile_dir(checkout / "tagger", quiet=1)
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "papers.jsonl"
        lines = args.data.read_text(encoding="utf-8").splitlines()[: args.n]
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        peaks = {"this": 0.0, "other": 0.0}
        rounds: list[tuple[float, float]] = []
        for round_ in range(args.rounds):
            measured = one_round(checkouts, source, Path(folder), round_, cores)
            for name, (_, peak) in measured.items():
                peaks[name] = max(peaks[name], peak)
            (this, this_peak), (other, other_peak) = measured["this"], measured["other"]
            rounds.append((this, other))
            print(
                json.dumps(
                    {
                        "round": round_ + 1,
                        "this_cpu_s": round(this, 1),
                        "other_cpu_s": round(other, 1),
                        "ratio": round(this / other, 3),
                        "this_peak_mib": round(this_peak),
                        "other_peak_mib": round(other_peak),
                    }
                ),
                flush=True,
            )
        print(
            json.dumps(
                {
                    "papers": len(lines),
                    "this": str(HERE),
                    "other": str(args.other),
                    "together": args.together,
                    "ratio_total": round(sum(a for a, _ in rounds) / sum(b for _, b in rounds), 3),
                    "ratio_median": round(statistics.median(a / b for a, b in rounds), 3),
                    "ratio_90": interval(rounds),
                    "peak_mib_more": round(peaks["this"] - peaks["other"]),
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
