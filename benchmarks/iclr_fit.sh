#!/bin/bash
# Usage: bash benchmarks/iclr_fit.sh   (from anywhere, with tagger installed; about 15 minutes)
# acc@1/acc@3 on the ICLR 2026 dev papers with examples/iclr-areas.yaml, before (no fit:
# rules and descriptions) and after a fit held out (two halves by line: fit on one, measure the other).
set -eu
cd "$(dirname "$0")/.."
d=/tmp/iclr-cv; rm -rf $d; mkdir -p $d
awk 'NR%2==1' data/iclr2026-dev.jsonl > $d/a.jsonl
awk 'NR%2==0' data/iclr2026-dev.jsonl > $d/b.jsonl
T=examples/iclr-areas.yaml
tagger eval data/iclr2026-dev.jsonl --scheme iclr --taxonomy $T --json > $d/before.json
for h in a b; do
  o=$([ $h = a ] && echo b || echo a)
  tagger fit --taxonomy $T --judged $d/$h.jsonl --labels primary_area -o $d/model-$h --report $d/fit-$h.md -w 1 2> $d/fit-$h.log
  tagger eval $d/$o.jsonl --scheme iclr --taxonomy $T --model $d/model-$h --json > $d/after-$o.json
done
python - <<'PY'
import json
d="/tmp/iclr-cv"
def acc(f):
    r=json.load(open(f)); a=r["areas"][0]; return a["papers"], a["acc@1"], a["acc@3"], r.get("known_to_the_model")
b=acc(f"{d}/before.json"); print("before (no fit):", b)
s=[acc(f"{d}/after-{h}.json") for h in "ab"]; print("after, each half held out:", s)
n=sum(x[0] for x in s); print("after, held out, pooled: acc@1 %.3f acc@3 %.3f" % (sum(x[0]*x[1] for x in s)/n, sum(x[0]*x[2] for x in s)/n))
PY
