#!/usr/bin/env bash
# Time and size of a fresh-venv install, pip's cache off: this checkout (`pip install .`) and,
# given, another checkout as 0.7.0 installed it (`pip install torch==2.13.0`, then `.`).
#   bash benchmarks/install.sh [OTHER_CHECKOUT]
set -u
measure() {  # name dir command...
  name=$1; dir=$2; shift 2
  rm -rf "/tmp/venv-$name"; python3 -m venv "/tmp/venv-$name"
  start=$(date +%s.%N)
  (cd "$dir" && "$@") > "/tmp/install-$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  size=$(du -sm "/tmp/venv-$name" | cut -f1)
  heavy=$("/tmp/venv-$name/bin/pip" list 2>/dev/null | grep -ciE "^(torch|transformers|sentence-transformers|onnx) ")
  echo "$name rc=$rc seconds=$(echo "$end - $start" | bc) size_mb=$size torch_transformers_onnx=$heavy"
}
if [ -n "${1:-}" ]; then
  measure other "$1" sh -c "/tmp/venv-other/bin/pip install --no-cache-dir torch==2.13.0 && /tmp/venv-other/bin/pip install --no-cache-dir ."
fi
measure this "$(dirname "$0")/.." /tmp/venv-this/bin/pip install --no-cache-dir .
