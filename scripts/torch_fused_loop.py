#!/usr/bin/python3
"""A plain PyTorch training loop in the three orderings, as a PyTorch user fuses them.

  scripts/torch_fused_loop.py resnet18 --batch 16 --resolution 64 --optimizer adam \
      --impl loop --threads 2 --steps 30 --json out.json

  eager           loss.backward(); opt.step(); opt.zero_grad()   (one optimizer, all params)
  backward-fused  one optimizer per parameter, stepped by a hook on the parameter's
                  gradient accumulator (AccumulateGrad) as soon as its gradient is final
                  (torch 1.13 has no Tensor.register_post_accumulate_grad_hook: the node
                  is reached as p.expand_as(p).grad_fn.next_functions[0][0], the way DDP
                  and DeepSpeed find it; torch >= 2.1 uses the new hook)
  forward-fused   one optimizer per parameter; a forward pre-hook on every module that
                  owns parameters applies the pending update (last step's gradient)
                  right before the module's forward; the last updates are flushed

This is the reference `fusim run --execution graph` is compared with: the same orderings
with Python in the loop. Steps are timed with the wall clock, orderings interleaved in
blocks (A B C A B C ...), each block after one unmeasured re-warm step, as `fusim run`.
Per step it also records the main thread's CPU time (a busy machine shows as CPU < wall)
and the process's minor page faults (fresh memory from the kernel), and per ordering the
medians and a 95% percentile-bootstrap CI of the speedup over eager (fusim's unpaired
bootstrap_speedup, backend/step_stats.cpp; `fusim run` pairs steps by round instead).

Factors that isolate effects (each a flag, so that runs differ in one thing):
  --eager-optimizers per-param  eager steps the per-parameter optimizers in a loop instead
                                of one optimizer: the cost of per-parameter dispatch
  --hooks noop                  hooks/pre-hooks are registered but do nothing, and the
                                fused orderings step after backward like eager: hook cost
  --malloc heap                 glibc keeps freed memory in the heap (mallopt as fusim's
                                backend sets it: backend/host_allocator.cpp): allocator cost
  --zero-grad zero              zero_grad(set_to_none=False) (torch 1.13's default) instead
                                of set_to_none=True (torch 2.x's default, and fusim's model)
Threads are pinned one per core (OMP_PROC_BIND=close, OMP_PLACES=cores, set before torch
loads; the process is confined to the first --threads cores of its affinity mask).
"""
import argparse
import ctypes
import json
import os
import random
import resource
import sys
import time

ORDERINGS = ("eager", "backward-fused", "forward-fused")


def positive(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return v


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="torchvision model name or package.module:factory")
    ap.add_argument("--batch", type=positive, default=16)
    ap.add_argument("--resolution", type=positive, default=64, help="input H = W (default 64)")
    ap.add_argument("--optimizer", default="adam", choices=["sgd", "momentum", "adam", "adamw"])
    ap.add_argument("--impl", default="loop", choices=["loop", "foreach"])
    ap.add_argument("--threads", type=positive, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=positive, default=30, help="measured steps per ordering")
    ap.add_argument("--block", type=positive, default=5)
    ap.add_argument("--ordering", default="all",
                    help="all or a comma-separated list of " + ", ".join(ORDERINGS))
    ap.add_argument("--eager-optimizers", default="single", choices=["single", "per-param"])
    ap.add_argument("--hooks", default="step", choices=["step", "noop"])
    ap.add_argument("--malloc", default="default", choices=["default", "heap"])
    ap.add_argument("--zero-grad", default="none", choices=["none", "zero"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    args = ap.parse_args(argv[1:])
    orderings = ORDERINGS if args.ordering == "all" else tuple(args.ordering.split(","))
    for o in orderings:
        if o not in ORDERINGS:
            ap.error(f"--ordering: expected all or a list of {', '.join(ORDERINGS)}, got '{o}'")
    if "eager" not in orderings:
        orderings = ("eager",) + orderings  # the baseline of every speedup
    args.orderings = orderings
    if args.steps < 2:
        ap.error("--steps: expected >= 2")
    return args


def pin(threads):
    """One OpenMP thread per core: must run before torch (libgomp) is loaded."""
    cores = sorted(os.sched_getaffinity(0))
    if threads > len(cores):
        sys.exit(f"torch_fused_loop.py: --threads: at most the {len(cores)} cores this process "
                 f"may use, got {threads}")
    os.sched_setaffinity(0, cores[:threads])
    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ["OMP_PROC_BIND"] = "close"
    os.environ["OMP_PLACES"] = "cores"
    return cores[:threads]


def keep_freed_memory_in_heap():
    libc = ctypes.CDLL("libc.so.6")
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # <malloc.h>
    libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
    libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    libc.mallopt(M_TOP_PAD, 256 << 20)


def make_optimizer(torch, name, impl, params):
    foreach = impl == "foreach"
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01, foreach=foreach)
    if name == "momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9, foreach=foreach)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-3, foreach=foreach)
    return torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-2, foreach=foreach)


class Ordering:
    """One model, its optimizer(s) and hooks, trained in one ordering."""

    def __init__(self, torch, name, args, model_factory, inputs, target):
        self.torch, self.name, self.args = torch, name, args
        torch.manual_seed(args.seed)  # every ordering starts from the same weights
        self.model = model_factory()
        self.model.train()
        self.inputs, self.target = inputs, target
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.set_to_none = args.zero_grad == "none"
        per_param = name != "eager" or args.eager_optimizers == "per-param"
        self.single = None if per_param else make_optimizer(torch, args.optimizer, args.impl,
                                                             self.params)
        self.per_param = {p: make_optimizer(torch, args.optimizer, args.impl, [p])
                          for p in self.params} if per_param else {}
        self.hooks_step = args.hooks == "step"
        self.handles, self.accumulators = [], []
        if name == "backward-fused":
            for p in self.params:
                acc = p.expand_as(p).grad_fn.next_functions[0][0]  # AccumulateGrad of p
                self.accumulators.append(acc)  # the node lives as long as this reference
                self.handles.append(acc.register_hook(self._after_accumulate(p)))
        elif name == "forward-fused":
            for m in self.model.modules():
                own = [p for p in m.parameters(recurse=False) if p.requires_grad]
                if own:
                    self.handles.append(m.register_forward_pre_hook(self._before_forward(own)))

    def _step_param(self, p):
        if p.grad is None:
            return  # forward-fused, first step: nothing pending
        opt = self.per_param[p]
        opt.step()
        opt.zero_grad(set_to_none=self.set_to_none)

    def _after_accumulate(self, p):
        def hook(*_):
            if self.hooks_step:
                self._step_param(p)
        return hook

    def _before_forward(self, own):
        def hook(module, inputs):
            if self.hooks_step:
                for p in own:
                    self._step_param(p)
        return hook

    def step(self):
        loss = self.loss_fn(self.model(self.inputs), self.target)
        loss.backward()
        if self.name == "eager":
            if self.single is not None:
                self.single.step()
                self.single.zero_grad(set_to_none=self.set_to_none)
            else:
                for p in self.params:
                    self._step_param(p)
        elif not self.hooks_step and self.name == "backward-fused":
            for p in self.params:  # the hooks did nothing: update after backward
                self._step_param(p)

    def flush(self):
        if self.name == "forward-fused" or (not self.hooks_step and self.name != "eager"):
            for p in self.params:
                self._step_param(p)


def quantile(values, q):
    """numpy's default (linear) quantile, as fusim's exec::quantile."""
    v = sorted(values)
    h = q * (len(v) - 1)
    lo = int(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def bootstrap_speedup(base, cand, resamples=2000, seed=12345):
    rng = random.Random(seed)
    med = lambda x: quantile(x, 0.5)
    ratios = []
    for _ in range(resamples):
        rb = [base[rng.randrange(len(base))] for _ in base]
        rc = [cand[rng.randrange(len(cand))] for _ in cand]
        ratios.append(med(rb) / med(rc))
    return med(base) / med(cand), quantile(ratios, 0.025), quantile(ratios, 0.975)


def main(argv):
    args = parse_args(argv)
    cores = pin(args.threads)
    if args.malloc == "heap":
        keep_freed_memory_in_heap()
    import torch  # after pin(): libgomp reads OMP_* when it loads
    torch.set_num_threads(args.threads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fusim_capture.capture import load_model

    model_factory = lambda: load_model(args.model)[0]
    torch.manual_seed(args.seed)
    probe = model_factory()
    classes = probe(torch.zeros(1, 3, args.resolution, args.resolution)).shape[1]
    del probe
    inputs = torch.randn(args.batch, 3, args.resolution, args.resolution)
    target = torch.randint(0, classes, (args.batch,))
    runs = [Ordering(torch, o, args, model_factory, inputs, target) for o in args.orderings]
    samples = {o: {"wall_ns": [], "cpu_ns": [], "minflt": []} for o in args.orderings}

    def one_step(run, measured):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        run.step()
        t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
        f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        if measured:
            s = samples[run.name]
            s["wall_ns"].append(t1 - t0)
            s["cpu_ns"].append(c1 - c0)
            s["minflt"].append(f1 - f0)

    load_before = os.getloadavg()[0]
    for run in runs:
        for _ in range(args.warmup):
            one_step(run, False)
    blocks = (args.steps + args.block - 1) // args.block
    for b in range(blocks):
        n = min(args.block, args.steps - b * args.block)
        for run in runs:
            print(f"torch_fused_loop: block {b + 1}/{blocks}: {run.name} ({n} steps)",
                  file=sys.stderr)
            one_step(run, False)  # re-warm
            for _ in range(n):
                one_step(run, True)
    for run in runs:
        run.flush()
    load_after = os.getloadavg()[0]

    base = samples["eager"]["wall_ns"]
    out = {"model": args.model, "batch": args.batch, "resolution": args.resolution,
           "optimizer": args.optimizer, "impl": args.impl, "threads": args.threads,
           "cores": cores, "torch": torch.__version__, "eager_optimizers": args.eager_optimizers,
           "hooks": args.hooks, "malloc": args.malloc, "zero_grad": args.zero_grad,
           "load_average": [load_before, load_after], "results": []}
    print(f"{'ordering':<16}{'median ms':>10}{'p25':>9}{'p75':>9}{'speedup':>9}"
          f"{'95% CI':>18}{'cpu/wall':>9}{'minflt/step':>12}")
    for o in args.orderings:
        s = samples[o]
        wall = s["wall_ns"]
        sp, lo, hi = bootstrap_speedup(base, wall)
        ratio = quantile([c / w for c, w in zip(s["cpu_ns"], wall)], 0.5)
        faults = quantile(s["minflt"], 0.5)
        out["results"].append({"ordering": o, "median_ms": quantile(wall, 0.5) / 1e6,
                               "p25_ms": quantile(wall, 0.25) / 1e6,
                               "p75_ms": quantile(wall, 0.75) / 1e6,
                               "speedup": sp, "ci": [lo, hi], "cpu_wall_median": ratio,
                               "minflt_median": faults, "step_ns": wall, "cpu_ns": s["cpu_ns"],
                               "minflt": s["minflt"]})
        print(f"{o:<16}{quantile(wall, 0.5) / 1e6:>10.3f}{quantile(wall, 0.25) / 1e6:>9.3f}"
              f"{quantile(wall, 0.75) / 1e6:>9.3f}{sp:>9.3f}   [{lo:.3f}, {hi:.3f}]"
              f"{ratio:>9.2f}{faults:>12.0f}")
    print(f"load average {load_before:.2f} before, {load_after:.2f} after "
          f"({os.cpu_count()} cores)")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=1)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
