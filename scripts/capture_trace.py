#!/usr/bin/python3
"""Capture a fusim layer trace (traces/SCHEMA.md) from a PyTorch model.

  scripts/capture_trace.py resnet18 --batch 32 -o traces/resnet18.json
  scripts/capture_trace.py fusim_models:bert_base --batch 32 --seq 128 -o traces/bert-base.json
  scripts/capture_trace.py swin_t --batch 2 -o swin_t.json          # ATen path (automatic)

MODEL is a torchvision classification model name or 'package.module:factory' (any
importable function returning an nn.Module; this script's folder is on the import path, so
'fusim_models:gpt2_small' works). Two capture paths, run on meta tensors (no memory, no
compute) to get every shape:
  fx    the model is traced symbolically and each fx node becomes one layer of fusim's op
        set (the graph holds for any input of these shapes);
  aten  one forward is recorded op by op at the ATen level (TorchDispatchMode); calls of
        modules with a fusim op (Conv2d, Linear, BatchNorm, ...) become one layer each,
        every other op a layer of its own, generic kinds where fusim has no dedicated one;
        control flow is captured as it ran (the trace's "capture" member says so).
--path auto (the default) uses fx and falls back to aten where fx fails or meets an op
fusim has no kind for. A cross_entropy loss against an int64 input "target" is appended to
the model's logits. A model that cannot be captured stops with the module path and the op
at fault, exit code 2.
"""
import argparse
import os
import shlex
import sys

from fusim_capture.capture import TORCH_DTYPES, capture, load_model, to_compact_json
from fusim_capture.errors import CaptureError, one_line


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


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line (`capture_trace.py: --batch: ...`), exit code 2."""

    def error(self, message):
        print(f"capture_trace.py: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def main(argv):
    ap = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    ap.add_argument("--path", default="auto", choices=["auto", "fx", "aten"],
                    help="capture path (default auto: fx, else aten)")
    ap.add_argument("-o", "--output", required=True, metavar="FILE", help="trace file to write")
    args = ap.parse_args(argv[1:])  # argparse exits 2 on usage errors

    source = " ".join(shlex.quote(a) for a in argv)
    try:
        model, name = load_model(args.model, meta=True)
        input_shape = args.input_shape
        if input_shape is None and args.seq is None:
            if ":" in args.model:
                raise CaptureError(f"MODEL '{args.model}': give --input-shape or --seq")
            input_shape = [3, 224, 224]
        trace, params = capture(model, name, args.batch, input_shape, args.seq, args.dtype,
                                source, args.path, lambda: load_model(args.model)[0])
    except CaptureError as e:
        print(f"capture_trace.py: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a fault outside every op and module (never a traceback)
        print(f"capture_trace.py: MODEL '{args.model}': the capture failed: {one_line(e)}",
              file=sys.stderr)
        return 2
    try:
        tmp = f"{args.output}.tmp{os.getpid()}"  # atomic: a reader never sees half a file
        with open(tmp, "w") as f:
            f.write(to_compact_json(trace))
        os.replace(tmp, args.output)
    except OSError as e:
        print(f"capture_trace.py: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    print(f"{args.output}: {name}, {len(trace['layers'])} layers, {params} parameters "
          f"({trace['capture']['path']} path)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())  # factories in the caller's working tree
    sys.exit(main(sys.argv))
