"""Speed, memory and keyphrase quality of tagger against plain KeyBERT and YAKE, in one run.

    python benchmarks/bench.py                  # 1,000 unique abstracts from data/
    python benchmarks/bench.py --n 300          # fewer (plain KeyBERT runs ~1.5 abstracts/s)
    python benchmarks/bench.py --synthetic 100000 --synthetic 1000   # memory on a large corpus

Every system runs in its own child process on the same abstracts; the parent measures the child's
wall time and samples the resident memory of the child and its workers (peak RSS, summed over
the process tree). Throughput excludes start-up (imports, model loads), measured separately as
"load"; ratios are against plain KeyBERT in the same run. Keyphrase F1@5/F1@10 are against the
authors' keywords (Porter-stemmed exact match, as in `tagger eval`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SYSTEMS = {
    "keybert-1": "plain KeyBERT, all-MiniLM-L6-v2 on torch, (1,3)-grams, English stop words, "
    "top_n=10, batch; 1 torch thread",
    "keybert-2": "the same, 2 torch threads",
    "yake": "YAKE, n=3, top 10, 1 process",
    "yake-cores": "the same, one process per core (multiprocessing over the abstracts)",
    "keyphrases": "tagger keyphrase extraction only (spaCy candidates + KeyBERT ranking), "
    "1 process",
    "tag": "tagger tag, default settings (ONNX int8, one worker per core)",
    "tag-1": "tagger tag, 1 worker",
    "tag-static": "tagger tag --embedding-backend static (the fast mode), one worker per core",
    "tag-onnx": "tagger tag --embedding-backend onnx (fp32), one worker per core",
    "tag-torch": "tagger tag --embedding-backend torch, one worker per core (as 0.4.0 ran)",
}
BASELINES = {  # ratios are against the fastest of each family in the same run
    "plain KeyBERT": ("keybert-1", "keybert-2"),
    "YAKE": ("yake", "yake-cores"),
}


def _yake_start() -> None:
    """A YAKE worker's extractor, made once per process."""
    global _extractor
    import yake

    _extractor = yake.KeywordExtractor(lan="en", n=3, top=10)


def _yake(doc: str) -> list[str]:
    return [k for k, _ in _extractor.extract_keywords(doc)]


# --- the child side: run one system, report its own timings ----------------------------------


def child(system: str, source: str, output: str) -> None:
    started = time.perf_counter()
    rows = [json.loads(line) for line in Path(source).read_text(encoding="utf-8").splitlines()]
    texts = [f"{r.get('title') or ''}. {r['abstract']}" for r in rows]
    warm = texts[:4]
    if system.startswith("keybert"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from keybert import KeyBERT

        from tagger.language.embedders import MiniLMEmbedder

        torch.set_num_threads(int(system.split("-")[1]))
        model = KeyBERT(model=MiniLMEmbedder().model)

        def run(docs):
            found = model.extract_keywords(
                docs, keyphrase_ngram_range=(1, 3), stop_words="english", top_n=10
            )
            return [[k for k, _ in keywords] for keywords in found]

        run(warm)
    elif system == "yake":
        import yake

        extractor = yake.KeywordExtractor(lan="en", n=3, top=10)

        def run(docs):
            return [[k for k, _ in extractor.extract_keywords(d)] for d in docs]

        run(warm)
    elif system == "yake-cores":
        import multiprocessing

        cores = len(os.sched_getaffinity(0))
        pool = multiprocessing.get_context("fork").Pool(cores, initializer=_yake_start)

        def run(docs):
            found = pool.map(_yake, docs, chunksize=max(1, min(16, len(docs) // (4 * cores))))
            pool.close()
            pool.join()
            return found

        pool.map(_yake, warm * cores, chunksize=1)
    elif system == "keyphrases":
        from tagger import TaggerConfig
        from tagger.language.text import analyse, paper_text
        from tagger.tagging.reading import Reader
        from tagger.taxonomy.loading import load_taxonomy

        reader = Reader(load_taxonomy(), TaggerConfig())
        papers = [(r.get("title"), r["abstract"]) for r in rows]
        size = reader.config.batch_size

        def run(docs):
            out = []
            chunk = papers if docs is texts else [(None, d) for d in docs]
            for i in range(0, len(chunk), size):
                batch = chunk[i : i + size]
                paper_texts = [paper_text(t, a) for t, a in batch]
                analyses = [
                    analyse(doc, t, a)
                    for doc, (t, a) in zip(reader.nlp.pipe(paper_texts), batch, strict=True)
                ]
                out += [
                    [k.text for k in phrases]
                    for phrases in reader.keyphrases.extract(paper_texts, analyses)
                ]
            return out

        run(warm)
    else:  # the full pipeline as the command line runs it: read, tag, write JSONL
        from tagger import Tagger, TaggerConfig, tag_files
        from tagger.io.readers import read_papers

        workers = 1 if system == "tag-1" else len(os.sched_getaffinity(0))
        backend = {"tag-onnx": "onnx", "tag-torch": "torch", "tag-static": "static"}.get(
            system, "onnx-int8"
        )
        tagger = Tagger.from_taxonomy(config=TaggerConfig(embedding_backend=backend))
        # warm-up: 2 batches per worker, so that every worker has loaded its models
        first = list(read_papers(source))[:4]
        list(
            tagger.tag_many(
                (first * 1000)[: 2 * workers * tagger.config.batch_size], workers=workers
            )
        )

        def run(docs):
            tag_files(tagger, [source], output, workers=workers)
            tagger.close()
            lines = Path(output).read_text(encoding="utf-8").splitlines()
            return [[k["text"] for k in json.loads(line)["keyphrases"]] for line in lines]

    loaded = time.perf_counter()
    keyphrases = run(texts)
    done = time.perf_counter()
    print(
        json.dumps({"load": loaded - started, "process": done - loaded, "keyphrases": keyphrases})
    )


# --- the parent side ---------------------------------------------------------------------------


def family(root: int) -> set[int]:
    """A process and all its descendants, from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return found


def rss(pid: int) -> int:
    """Resident bytes of one process (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root: int) -> int:
    """Resident bytes of a process and all its descendants."""
    return sum(rss(pid) for pid in family(root))


def measure(command: list[str]) -> tuple[str, float, int]:
    """Run a command; return its stdout, wall seconds and peak tree RSS."""
    peak = 0
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss(proc.pid))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    started = time.perf_counter()
    sampler.start()
    out, _ = proc.communicate()
    wall = time.perf_counter() - started
    stop.set()
    sampler.join()
    if proc.returncode:
        raise SystemExit(f"{command} failed with exit code {proc.returncode}")
    return out, wall, peak


def unique_abstracts(data: Path, n: int) -> list[dict]:
    seen, rows = set(), []
    names = ("iclr2026-dev.jsonl", "iclr2025-keywords.jsonl", "iclr2024-topics.jsonl")
    for name in (*names, "corpus-2020-2023.jsonl"):  # the corpus last: it has no keywords
        for line in (data / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["abstract"] in seen:
                continue
            seen.add(row["abstract"])
            rows.append({k: row.get(k) for k in ("id", "title", "abstract", "keywords")})
            if len(rows) == n:
                return rows
    return rows


def perturbed(rows: list[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` records made from real abstracts: sentences dropped or swapped, numbers changed."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        row = rows[i % len(rows)]
        sentences = re.split(r"(?<=[.!?])\s+", row["abstract"])
        if len(sentences) > 2:
            if rng.random() < 0.5:
                sentences.pop(rng.randrange(1, len(sentences)))
            else:
                a, b = rng.sample(range(1, len(sentences)), 2) if len(sentences) > 3 else (0, 1)
                sentences[a], sentences[b] = sentences[b], sentences[a]
        text = re.sub(
            r"\d+", lambda m: str(int(m.group()) + rng.randint(1, 9)), " ".join(sentences)
        )
        out.append({"id": f"syn-{i}", "title": row["title"], "abstract": text})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="unique abstracts (default 1000)")
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / "data")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset")
    parser.add_argument(
        "--synthetic",
        type=int,
        action="append",
        default=[],
        help="also tag this many perturbed records, default settings (repeatable)",
    )
    parser.add_argument(
        "--contention",
        type=int,
        default=0,
        help="time this many abstracts idle and beside a CPU-bound process",
    )
    parser.add_argument("--no-starts", action="store_true", help="skip the start-up timings")
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of tagger (a directory with tagger/ in it) whose start-up times are "
        "measured too, interleaved with this one's: cold start and filter, before and after",
    )
    parser.add_argument(
        "--save", type=Path, help="write the figures as JSON here (benchmarks/plot.py reads it)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.input, args.output)
        return

    from tagger.corpus.evaluate import mean_keyphrase_f1

    workdir = Path(tempfile.mkdtemp(prefix="tagger-bench-"))
    rows = unique_abstracts(args.data, args.n)
    source = workdir / "abstracts.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    gold = [r.get("keywords") or [] for r in rows]
    print(
        f"{len(rows)} unique abstracts from {args.data} ({sum(1 for g in gold if g)} with "
        f"author keywords); {os.cpu_count()} CPUs\n"
    )
    results = {}
    for system in filter(None, args.systems.split(",")):
        out, wall, peak = measure(
            [
                sys.executable,
                __file__,
                "--child",
                system,
                "--input",
                str(source),
                "--output",
                str(workdir / f"{system}.jsonl"),
            ]
        )
        report = json.loads(out.strip().splitlines()[-1])
        results[system] = {
            "rate": len(rows) / report["process"],
            "load": report["load"],
            "rss": peak,
            "wall": wall,
            "f1@5": mean_keyphrase_f1(zip(report["keyphrases"], gold, strict=True), 5),
            "f1@10": mean_keyphrase_f1(zip(report["keyphrases"], gold, strict=True), 10),
        }
        r = results[system]
        print(
            f"  {system}: {r['rate']:.2f} abstracts/s, load {r['load']:.1f} s, "
            f"peak RSS {r['rss'] / 2**20:.0f} MiB",
            file=sys.stderr,
        )
    best = {}  # family -> its fastest system in this run
    for name, systems in BASELINES.items():
        measured = [system for system in systems if system in results]
        if measured:
            best[name] = max(measured, key=lambda system: results[system]["rate"])
            print(f"baseline {name}: {best[name]} (its fastest setting in this run)")
    if results:
        ratios = "".join(f" × {name} |" for name in best)
        print(f"\n| system | abstracts/s |{ratios} start-up s | peak RSS MiB | F1@5 | F1@10 |")
        print("| --- " * (6 + len(best)) + "|")
    for system, r in results.items():
        ratios = "".join(f" {r['rate'] / results[b]['rate']:.2f}× |" for b in best.values())
        print(
            f"| {system}: {SYSTEMS[system]} | {r['rate']:.2f} |{ratios} {r['load']:.1f} | "
            f"{r['rss'] / 2**20:.0f} | {r['f1@5']:.3f} | {r['f1@10']:.3f} |"
        )
    if args.save:
        args.save.write_text(
            json.dumps({"n": len(rows), "best": best, "systems": SYSTEMS, "results": results})
            + "\n",
            encoding="utf-8",
        )
    outputs = {s: workdir / f"{s}.jsonl" for s in ("tag", "tag-1") if s in results}
    if len(outputs) == 2:
        same = outputs["tag"].read_bytes() == outputs["tag-1"].read_bytes()
        print(f"\noutput of tag (one worker per core) and tag-1: byte-identical: {same}")
    if not args.no_starts:
        figures = starts(workdir, source, args.before)
        if args.save:
            saved = json.loads(args.save.read_text(encoding="utf-8"))
            args.save.write_text(json.dumps(saved | {"starts": figures}) + "\n", encoding="utf-8")
    if args.contention:
        contention(workdir, source, args.contention)
    for n in args.synthetic:
        wall, peak = synthetic(workdir, rows, n)
        if args.save:
            saved = json.loads(args.save.read_text(encoding="utf-8"))
            saved.setdefault("synthetic", {})[str(n)] = {"wall": wall, "rss": peak}
            args.save.write_text(json.dumps(saved) + "\n", encoding="utf-8")


def tagger_command(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "tagger", *arguments]


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run a command, its output discarded; return its wall and CPU seconds (user + system, of
    it and its children: less sensitive to other work on the machine than wall time). A
    command with PYTHONPATH in ``env`` (another checkout) runs in that directory: ``python -m``
    puts the working directory before PYTHONPATH, so from this repository it would run this
    checkout's tagger."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        command,
        env=env,
        cwd=(env or {}).get("PYTHONPATH"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def medians(commands: dict[str, tuple[list[str], dict | None]], times: int = 5) -> dict:
    """Median wall and CPU seconds of each command, the commands run in turn ``times`` times
    (interleaved, so that a burst of other work touches them alike)."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(times):
        for name, (command, env) in commands.items():
            runs[name].append(timed(command, env))
    return {
        name: tuple(sorted(r[k] for r in found)[len(found) // 2] for k in (0, 1))
        for name, found in runs.items()
    }


def starts(workdir: Path, source: Path, before: Path | None = None) -> dict:
    """Cold start (one abstract to its line written), `tagger --help`, and `tagger filter` on a
    1,000-line tagged file: medians of five, after a run that made the model's export and the
    area embeddings in the cache; and the very first run, with an empty cache (it exports).
    With ``before`` (another checkout), its cold start and filter too, interleaved."""
    one = workdir / "one.jsonl"
    one.write_text(source.read_text(encoding="utf-8").splitlines(keepends=True)[0])
    run_one = tagger_command("tag", str(one), "-o", str(one) + ".out", "--no-progress")
    first_cache = workdir / "empty-cache"
    os.environ["TAGGER_CACHE_DIR"] = str(first_cache)
    try:
        first, _ = timed(run_one)
    finally:
        del os.environ["TAGGER_CACHE_DIR"]
    tagged = workdir / "thousand.jsonl"
    made = workdir / "tag.jsonl"
    lines = made.read_text(encoding="utf-8").splitlines(keepends=True) if made.exists() else []
    if len(lines) < 1000:
        timed(tagger_command("tag", str(source), "-o", str(tagged), "--no-progress"))
        lines = tagged.read_text(encoding="utf-8").splitlines(keepends=True)
    tagged.write_text("".join((lines * 1000)[:1000]), encoding="utf-8")
    filter_ = tagger_command("filter", str(tagged), "--area", "rl", "--output-format", "ids")
    commands = {
        "cold": (run_one, None),
        "help": (tagger_command("--help"), None),
        "filter": (filter_, None),
    }
    if before:
        env = {**os.environ, "PYTHONPATH": str(before.resolve())}
        formerly = [*filter_[:-2], "--format", "ids"]  # 0.7.0's name of --output-format
        commands |= {"cold before": (run_one, env), "filter before": (formerly, env)}
    for command, env in commands.values():
        timed(command, env)  # the user's cache made if missing, files in the page cache
    found = medians(commands)
    print(
        f"\ncold start, `tagger tag` on one abstract to its line written: "
        f"{found['cold'][0]:.2f} s wall, {found['cold'][1]:.2f} s CPU (medians of 5); the "
        f"first run ever, exporting the model to ONNX: {first:.1f} s"
    )
    print(
        f"`tagger --help`: {found['help'][0]:.2f} s; `tagger filter` on 1,000 lines: "
        f"{found['filter'][0]:.2f} s wall, {found['filter'][1]:.2f} s CPU"
    )
    if before:
        print(f"\nstart-up, {before} (before) against this checkout (after), interleaved:\n")
        print("| command | before wall s | before CPU s | after wall s | after CPU s |")
        print("| --- | --- | --- | --- | --- |")
        for name in ("cold", "filter"):
            old, new = found[f"{name} before"], found[name]
            print(f"| {name} | {old[0]:.2f} | {old[1]:.2f} | {new[0]:.2f} | {new[1]:.2f} |")
    return {name: {"wall": w, "cpu": c} for name, (w, c) in found.items()} | {"first": first}


def contention(workdir: Path, source: Path, n: int) -> None:
    """`tagger tag` (default settings) on ``n`` abstracts idle, then beside a CPU-bound
    process (a pure-Python busy loop, one core)."""
    subset = workdir / f"contention-{n}.jsonl"
    subset.write_text(
        "".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[:n]),
        encoding="utf-8",
    )
    command = tagger_command("tag", str(subset), "-o", str(subset) + ".out", "--no-progress")
    _, idle, _ = measure(command)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        _, loaded, _ = measure(command)
    finally:
        busy.kill()
        busy.wait()
    print(
        f"\n{n} abstracts, default settings: {idle:.1f} s idle, {loaded:.1f} s beside a "
        f"CPU-bound process: {idle / loaded:.0%} of the idle speed (wall, start-up included)"
    )


def synthetic(workdir: Path, rows: list[dict], n: int) -> tuple[float, int]:
    path = workdir / f"synthetic-{n}.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for record in perturbed(rows, n):
            handle.write(json.dumps(record) + "\n")
    out = workdir / f"synthetic-{n}.out.jsonl"
    _, wall, peak = measure(tagger_command("tag", str(path), "-o", str(out), "--no-progress"))
    print(
        f"\nsynthetic {n:,} records, default settings (one worker per core): {wall:.0f} s wall "
        f"({n / wall:.1f} records/s including start-up), peak RSS {peak / 2**20:.0f} MiB"
    )
    out.unlink()
    return wall, peak


if __name__ == "__main__":
    main()
