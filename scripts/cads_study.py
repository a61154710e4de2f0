#!/usr/bin/python3
"""Issue #22's study: eager vs backward-fused vs forward-fused under each DRAM scheduler
(fcfs, frfcfs, frfcfs-cap, stream-aware, cads) on a GPU and a CPU preset.

Per machine and scheduler one `fusim simulate --ordering all --json --set
dram.scheduler=S` (the scheduler acts in line and block fidelity only: tensor fidelity
reads DRAM curves measured once under the preset's scheduler). Writes into OUT:
  MACHINE-SCHEDULER.json   the simulate output (with dram_requesters per ordering)
  study.md                 a table: step time, speedup vs eager under the same scheduler,
                           DRAM read latency (mean over all reads, the slowest requester's
                           mean, the fastest's), the wall time of each simulate
  study.png                step time and the slowest requester's latency per scheduler

  /usr/bin/python3 scripts/cads_study.py [--out build/cads_study] [--fidelity block]
      [--trace mlp:--batch=32,--hidden=1024,--layers=2] [--jobs 2] [--machines ...]
A --trace that is not a file is a zoo network with `fusim trace gen` options after ':'.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fusim_plot_style import ORDERINGS, ordering_colour, set_titles  # noqa: E402

SCHEDULERS = ("fcfs", "frfcfs", "frfcfs-cap", "stream-aware", "cads")
# The GPU and CPU presets, each with its last cache level cut to a few MiB: the default
# trace's Adam step (~30 MB of weights, grads and moments) then exceeds it as a model 10x
# larger exceeds the real 50 MiB L2 / 60 MiB LLC, and a block-fidelity simulate takes
# about a minute instead of ten (line and block time every unit through the DRAM).
MACHINES = ("h100-sxm5:caches.L2.size=4MiB", "xeon-8380-ddr4:caches.LLC.size=6MiB")


def atomic_write(path, data, mode="w"):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    with os.fdopen(fd, mode) as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def trace_file(fusim, spec, out):
    if os.path.isfile(spec):
        return spec
    name, _, options = spec.partition(":")
    path = os.path.join(out, name + ".json")
    args = [fusim, "trace", "gen", name, "-o", path]
    for option in filter(None, options.split(",")):
        args.extend(option.split("=", 1))
    subprocess.run(args, check=True)
    return path


def simulate(fusim, trace, machine, scheduler, args):
    preset, *sets = machine.split(":")
    cmd = [fusim, "simulate", "--trace", trace, "--machine", preset, "--optimizer",
           args.optimizer, "--ordering", "all", "--fidelity", args.fidelity, "--steps",
           str(args.steps), "--set", f"dram.scheduler={scheduler}", "--json", "--no-per-op"]
    for s in sets:
        cmd += ["--set", s]
    start = time.monotonic()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.monotonic() - start
    path = os.path.join(args.out, f"{preset}-{scheduler}.json")
    atomic_write(path, done.stdout)
    return json.loads(done.stdout), wall, " ".join([os.path.relpath(cmd[0])] + cmd[1:])


def latencies(result):
    """(mean over all reads, slowest requester's mean, fastest requester's mean in ns,
    requesters left out). The slowest and fastest are taken among the requesters with at
    least a tenth of the mean reads per requester: a core that reads a few lines in the
    measured steps (6 and 23 of ~7000 in forward-fused on the Xeon) has a mean of a few
    samples, not a rate the scheduler set."""
    q = result.get("dram_requesters", [])
    reads = sum(r["reads"] for r in q)
    if not reads:
        return None, None, None, 0
    mean = sum(r["reads"] * r["read_latency_ns_mean"] for r in q) / reads
    means = [r["read_latency_ns_mean"] for r in q if 10 * r["reads"] * len(q) >= reads]
    return mean, max(means), min(means), len(q) - len(means)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fusim", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                   "fusim"))
    p.add_argument("--out", default="build/cads_study")
    p.add_argument("--trace", default="mlp:--batch=32,--hidden=1024,--layers=2")
    p.add_argument("--optimizer", default="adam")
    p.add_argument("--fidelity", default="block", choices=("line", "block"))
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--replot", action="store_true",
                   help="table and plot from the JSON files already in --out")
    p.add_argument("--machines", default=",".join(MACHINES),
                   help="comma list of PRESET[:PATH=VALUE...] (--set overrides)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    trace = None if args.replot else trace_file(args.fusim, args.trace, args.out)
    machines = args.machines.split(",")
    grid = [(m, s) for m in machines for s in SCHEDULERS]
    walls = os.path.join(args.out, "walls.json")
    if args.replot:
        with open(walls) as f:
            saved = json.load(f)
        runs = []
        for machine, scheduler in grid:
            with open(os.path.join(args.out, f"{machine.split(':')[0]}-{scheduler}.json")) as f:
                runs.append((json.load(f), *saved[f"{machine} {scheduler}"]))
    else:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            runs = list(pool.map(lambda ms: simulate(args.fusim, trace, ms[0], ms[1], args),
                                 grid))
        atomic_write(walls, json.dumps({f"{m} {s}": [wall, cmd]
                                        for (m, s), (_, wall, cmd) in zip(grid, runs)}))

    lines = [f"trace {args.trace}, optimizer {args.optimizer}, --fidelity {args.fidelity}, "
             f"--steps {args.steps}", "",
             "| machine | scheduler | ordering | step ms | vs eager | read ns mean | "
             "slowest requester ns | fastest requester ns | requesters | left out | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    table = {}
    for (machine, scheduler), (doc, wall, _) in zip(grid, runs):
        for r in doc["results"]:
            mean, slow, fast, few = latencies(r)
            table[(machine, scheduler, r["ordering"])] = (r["step_time_ms"], slow)
            cell = (lambda v: "-" if v is None else f"{v:.1f}")
            lines.append(f"| {machine} | {scheduler} | {r['ordering']} | "
                         f"{r['step_time_ms']:.4f} | {r['speedup_vs_eager']:.4f} | "
                         f"{cell(mean)} | {cell(slow)} | {cell(fast)} | "
                         f"{len(r.get('dram_requesters', []))} | {few} | {wall:.1f} |")
    lines += ["", "commands:"] + [f"    {cmd}" for (_, _, cmd) in runs]
    atomic_write(os.path.join(args.out, "study.md"), "\n".join(lines) + "\n")
    print("\n".join(lines))

    orderings = [o for o in ORDERINGS if any(k[2] == o for k in table)]
    fig, axes = plt.subplots(len(machines), 2, figsize=(12, 4.2 * len(machines)), squeeze=False)
    width = 0.8 / len(orderings)
    for row, machine in enumerate(machines):
        slowest = "slowest requester's read latency (ns)\n(those with >= 1/10 of the mean reads)"
        for col, (what, index) in enumerate((("step time (ms)", 0), (slowest, 1))):
            ax = axes[row][col]
            for k, ordering in enumerate(orderings):
                values = [table.get((machine, s, ordering), (0, 0))[index] or 0
                          for s in SCHEDULERS]
                xs = [i + (k - (len(orderings) - 1) / 2) * width for i in range(len(SCHEDULERS))]
                ax.bar(xs, values, width, label=ordering, color=ordering_colour(ordering))
            ax.set_xticks(range(len(SCHEDULERS)))
            ax.set_xticklabels(SCHEDULERS)
            ax.set_ylabel(what)
            ax.set_title(machine, fontsize="medium")
            ax.set_ylim(bottom=0)
    set_titles(fig, "DRAM scheduler x ordering (issue #22)",
               f"trace {args.trace}, optimizer {args.optimizer}, fidelity {args.fidelity}, "
               f"{args.steps} steps")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize="small",
               bbox_to_anchor=(0.5, 0.915))
    fig.tight_layout(rect=(0, 0, 1, 0.88))
    png = os.path.join(args.out, "study.png")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(png)), suffix=".png")
    os.close(fd)
    fig.savefig(tmp, dpi=110)
    os.chmod(tmp, 0o644)
    os.replace(tmp, png)
    print(f"cads study: {args.out}/study.md {png}", file=sys.stderr)


if __name__ == "__main__":
    main()
