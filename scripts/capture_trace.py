#!/usr/bin/python3
"""Capture a fusim layer trace (traces/SCHEMA.md) from a PyTorch model with torch.fx.

  scripts/capture_trace.py resnet18 --batch 32 -o traces/resnet18.json
  scripts/capture_trace.py fusim_models:bert_base --batch 32 --seq 128 -o traces/bert-base.json

MODEL is a torchvision classification model name or 'package.module:factory' (any
importable function returning an nn.Module; this script's folder is on the import path, so
'fusim_models:gpt2_small' works). The model is traced symbolically, run once on meta
tensors (no memory, no compute) to get every shape, and each fx node becomes one layer of
fusim's op set; a node with no such op is an error naming it (exit code 2). A cross_entropy
loss against an int64 input "target" is appended to the model's logits.
"""
import argparse
import os
import shlex
import sys

from fusim_capture.capture import TORCH_DTYPES, capture, load_model, to_compact_json
from fusim_capture.errors import CaptureError


def parse_shape(text):
    try:
        dims = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers "
                                         f"like 3,224,224, got '{text}'")
    if not dims or any(d < 1 for d in dims):
        raise argparse.ArgumentTypeError(f"expected positive dimensions, got '{text}'")
    return dims


def positive(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return v


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", metavar="MODEL",
                    help="torchvision model name (resnet18) or package.module:factory")
    ap.add_argument("--batch", type=positive, default=32, help="batch size (default 32)")
    shape = ap.add_mutually_exclusive_group()
    shape.add_argument("--input-shape", type=parse_shape, metavar="C,H,W",
                       help="per-sample shape of the float input (default 3,224,224 for "
                            "torchvision models; e.g. 784 for an MLP)")
    shape.add_argument("--seq", type=positive, metavar="S",
                       help="sequence length: every forward argument is int64 [batch, S]")
    ap.add_argument("--dtype", default="float32", choices=sorted(TORCH_DTYPES),
                    help="dtype of params and activations (default float32)")
    ap.add_argument("-o", "--output", required=True, metavar="FILE", help="trace file to write")
    args = ap.parse_args(argv[1:])  # argparse exits 2 on usage errors

    source = " ".join(shlex.quote(a) for a in argv)
    try:
        model, name = load_model(args.model)
        input_shape = args.input_shape
        if input_shape is None and args.seq is None:
            if ":" in args.model:
                raise CaptureError(f"MODEL '{args.model}': give --input-shape or --seq")
            input_shape = [3, 224, 224]
        trace, params = capture(model, name, args.batch, input_shape, args.seq, args.dtype,
                                source)
    except CaptureError as e:
        print(f"capture_trace.py: {e}", file=sys.stderr)
        return 2
    try:
        with open(args.output, "w") as f:
            f.write(to_compact_json(trace))
    except OSError as e:
        print(f"capture_trace.py: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    print(f"{args.output}: {name}, {len(trace['layers'])} layers, {params} parameters",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())  # factories in the caller's working tree
    sys.exit(main(sys.argv))
