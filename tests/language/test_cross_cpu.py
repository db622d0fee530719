"""The same vectors on every CPU: the shipped embedders, run natively and under Debian's
qemu-user emulating an AVX2-only CPU (qemu-x86_64 -cpu Haswell: no AVX-512, no VNNI), give the
same bits for 8 real ICLR 2026 abstracts (as tagger embeds them: their first 96 words) and 20
phrases, and so do the integer cosines tagger reads of them (KeyBERT's measure, MMR's, the
stored vector's and its cosines with areas), and the readers' keyphrase ranking's reading of
them (the transformer's hidden states over each opening, a phrase's context there, and the two
regressions over it: language.readers). This machine's CPU is the other kind: the test
says which it has.

ONNX Runtime picks its kernels by CPU: the int8 products of a CPU without VNNI saturate in 16
bits unless the weights have 7 bits, and its fused Softmax sums in an order that depends on the
vector width; the shipped model avoids both (language/onnx_export.py). Under emulation the
embedder runs about a thousand times slower: an abstract costs about 17 s of one core, the start
about 20 s, so this test takes about two and a half minutes (with 20 abstracts it took six and a
half, the longest part of the suite by far). The eight run 134 to 157 tokens, eight different
remainders modulo 16 (an AVX-512 register's floats); the phrases run 3 to 7.
The test command installs qemu-user (README); set TAGGER_SKIP_QEMU=1 to skip it elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

SCRIPT = Path(__file__).with_name("cross_cpu_embed.py")
PAPERS = 8


def _run(*prefix: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [*prefix, sys.executable, str(SCRIPT), str(ROOT / "data"), str(PAPERS)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def _flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.skipif(os.environ.get("TAGGER_SKIP_QEMU") == "1", reason="TAGGER_SKIP_QEMU=1")
def test_the_shipped_embedders_give_the_same_bits_on_an_avx2_only_cpu():
    qemu = shutil.which("qemu-x86_64")
    assert qemu, (
        "install Debian's qemu-user (the README's test command does), or TAGGER_SKIP_QEMU=1"
    )
    here = _run()
    emulated = _run(qemu, "-cpu", "Haswell")
    assert len(here) == 2 * (PAPERS + 20 + 4) + 4 * PAPERS
    different = [a.split(" ")[:-1] for a, b in zip(here, emulated, strict=True) if a != b]
    flags = _flags()
    cpu = "AVX-512 with VNNI" if {"avx512f", "avx512_vnni"} <= flags else "without AVX-512 VNNI"
    assert not different, f"differ between this CPU ({cpu}) and an emulated Haswell: {different}"
