#!/usr/bin/python3
"""fusim's optimizer table against the torch.optim that is installed (Debian's 1.13).

For each optimizer and loop/foreach, one torch.optim step over a linear layer's weight
(40 x 100) and bias (40) is recorded call by call with a TorchFunctionMode (every torch
call the optimizer's Python code makes), and counted as fusim counts a U op's work:
  kernels  calls that run an ATen kernel: a per-tensor op is one; a torch._foreach_* op is
           one per tensor on a CPU (ATen's slow path loops over them); 0-dim arithmetic on
           the step tensors counts too (Tensor.__rdiv__ is reciprocal() then mul: two);
           metadata calls (is_complex, conj of a real tensor, attribute reads) none;
  passes   kernels over a param-sized tensor (more than one element).
Both must equal the U op of `fusim schedule --json` on the same layer (CPU schedule).
Usage: torch_optim_calls_test.py FUSIM; exit 1 naming every mismatch.
"""
import json
import os
import subprocess
import sys
import tempfile

import torch
from torch.overrides import TorchFunctionMode

NO_KERNEL = {"is_complex", "conj", "__get__", "_record_function_enter", "_record_function_exit",
             "zeros"}  # zeros: the profiler record's own, before the optimizer runs
KERNELS_PER_CALL = {"__rdiv__": 2, "__rtruediv__": 2}

TRACE = {"format": "fusim-trace", "version": 1, "model": "one_linear", "batch": 2,
         "dtype": "float32", "source": "tests/backend/torch_optim_calls_test.py",
         "inputs": [{"name": "input", "shape": [2, 100]},
                    {"name": "target", "shape": [2], "dtype": "int64"}],
         "layers": [{"id": 0, "name": "fc", "op": "linear", "attrs": {"bias": True},
                     "inputs": ["input"], "output": [2, 40],
                     "params": [{"name": "fc.weight", "shape": [40, 100]},
                                {"name": "fc.bias", "shape": [40]}]},
                    {"id": 1, "name": "loss", "op": "cross_entropy", "attrs": {},
                     "inputs": [0, "target"], "output": []}]}

OPTIMIZERS = {
    "sgd": lambda p, f: torch.optim.SGD(p, lr=0.01, foreach=f),
    "momentum": lambda p, f: torch.optim.SGD(p, lr=0.01, momentum=0.9, foreach=f),
    "nesterov": lambda p, f: torch.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True, foreach=f),
    "adam": lambda p, f: torch.optim.Adam(p, foreach=f),
    "adamw": lambda p, f: torch.optim.AdamW(p, foreach=f),
    "adagrad": lambda p, f: torch.optim.Adagrad(p, foreach=f),
    "rmsprop": lambda p, f: torch.optim.RMSprop(p, foreach=f),
}


class Recorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        first = args[0] if args else None
        self.calls.append((getattr(func, "__name__", str(func)), first))
        return func(*args, **(kwargs or {}))


def torch_counts(name, foreach):
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(40, 100)), torch.nn.Parameter(torch.randn(40))]
    opt = OPTIMIZERS[name](params, foreach)
    for _ in range(2):  # steady state: the state exists, momentum buffers too
        for p in params:
            p.grad = torch.randn_like(p)
        opt.step()
    for p in params:
        p.grad = torch.randn_like(p)
    rec = Recorder()
    with rec:
        opt.step()
    kernels = passes = 0
    for fname, first in rec.calls:
        if fname in NO_KERNEL:
            continue
        tensors = list(first) if isinstance(first, (list, tuple)) else [first]
        big = sum(1 for t in tensors if isinstance(t, torch.Tensor) and t.numel() > 1)
        per = KERNELS_PER_CALL.get(fname, 1)
        kernels += per * len(tensors)
        passes += big
    return kernels, passes


def fusim_counts(fusim, trace_path, name, impl):
    out = subprocess.run([fusim, "schedule", "--trace", trace_path, "--ordering", "eager",
                          "--optimizer", name, "--impl", impl, "--json"],
                         check=True, capture_output=True, text=True).stdout
    (u,) = [op for op in json.loads(out)["ops"] if op["kind"] == "U"]
    return u["kernels"], u["passes"]


def main(argv):
    fusim = argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        trace_path = os.path.join(tmp, "one_linear.json")
        with open(trace_path, "w") as f:
            json.dump(TRACE, f)
        for name in OPTIMIZERS:
            for impl in ("loop", "foreach"):
                got = torch_counts(name, impl == "foreach")
                want = fusim_counts(fusim, trace_path, name, impl)
                if got != want:
                    failures.append(f"{name} {impl}: torch {torch.__version__} runs {got[0]} "
                                    f"kernels, {got[1]} passes; fusim's U op has {want[0]}, "
                                    f"{want[1]}")
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
