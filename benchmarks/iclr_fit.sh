#!/bin/bash
# Usage: bash benchmarks/iclr_fit.sh [PAPERS]  (from anywhere, with tagger installed; ~10 minutes)
# examples/iclr-areas.yaml (the 21 ICLR primary areas) on the ICLR 2026 dev papers, measured
# against the authors' primary areas: acc@1 and acc@3 with its areas' names and descriptions
# alone (its rules left out), before any fit (rules and descriptions), and after `tagger fit`
# held out (two halves by line: fit on one, measure the other), each as tags are listed by
# default and with --top 3; the fit without and with unlabelled
# --papers (PAPERS, by default the 2,275 ICLR 2024 papers of data/, labels unread). Every fit is
# timed (wall seconds, the command as run).
set -eu
cd "$(dirname "$0")/.."
d=/tmp/iclr-cv; rm -rf $d; mkdir -p $d
extra=${1:-data/iclr2024-topics.jsonl}
awk 'NR%2==1' data/iclr2026-dev.jsonl > $d/a.jsonl
awk 'NR%2==0' data/iclr2026-dev.jsonl > $d/b.jsonl
T=examples/iclr-areas.yaml
python3 - "$T" "$d/names.yaml" <<'PY'
import sys, yaml  # the same areas by name and description alone: no rule
raw = yaml.safe_load(open(sys.argv[1]))
raw["areas"] = [{k: a[k] for k in ("id", "name", "description", "crosswalk") if k in a} for a in raw["areas"]]
yaml.safe_dump(raw, open(sys.argv[2], "w"), sort_keys=False)
PY
for top in "" "--top 3"; do
  tagger eval data/iclr2026-dev.jsonl --scheme iclr --taxonomy $T $top --json > "$d/before${top:+-top}.json"
  tagger eval data/iclr2026-dev.jsonl --scheme iclr --taxonomy $d/names.yaml $top --json > "$d/names${top:+-top}.json"
done
for papers in "" "--papers $extra"; do
  tag=${papers:+-papers}
  for h in a b; do
    o=$([ $h = a ] && echo b || echo a)
    start=$(date +%s.%N)
    tagger fit --taxonomy $T --judged $d/$h.jsonl --labels primary_area $papers -o $d/model-$h$tag --cache $d/cache 2> $d/fit-$h$tag.log >/dev/null
    echo "$(echo "$(date +%s.%N) - $start" | bc) s: tagger fit --taxonomy $T --judged $h.jsonl --labels primary_area $papers -o model" >> $d/times.txt
    for top in "" "--top 3"; do
      tagger eval $d/$o.jsonl --scheme iclr --taxonomy $T --model $d/model-$h$tag $top --json > "$d/after$tag-$o${top:+-top}.json"
    done
  done
done
python3 - "$extra" <<'PY'
import json, sys
d = "/tmp/iclr-cv"
def acc(f):
    a = json.load(open(f))["areas"][0]
    return a["papers"], a["acc@1"], a["acc@3"]
def pooled(files):
    s = [acc(f) for f in files]
    n = sum(x[0] for x in s)
    return n, sum(x[0] * x[1] for x in s) / n, sum(x[0] * x[2] for x in s) / n
print("| examples/iclr-areas.yaml, ICLR 2026 dev | papers | acc@1 | acc@3 | acc@1, --top 3 | acc@3, --top 3 |")
print("| --- | --- | --- | --- | --- | --- |")
rows = [
    ("names and descriptions alone, no fit", [f"{d}/names.json"], [f"{d}/names-top.json"]),
    ("before any fit (rules and descriptions)", [f"{d}/before.json"], [f"{d}/before-top.json"]),
]
for tag, name in (("", "after tagger fit, held out (the other half)"), ("-papers", f"... with --papers {sys.argv[1]}")):
    rows.append((name, [f"{d}/after{tag}-{h}.json" for h in "ab"], [f"{d}/after{tag}-{h}-top.json" for h in "ab"]))
for name, plain, top in rows:
    n, a1, a3 = pooled(plain); _, t1, t3 = pooled(top)
    print(f"| {name} | {n} | {a1:.3f} | {a3:.3f} | {t1:.3f} | {t3:.3f} |")
print()
print(open(f"{d}/times.txt").read())
PY
