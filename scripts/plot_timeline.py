#!/usr/bin/python3
"""Gantt chart of RunResults (fusim simulate/run --json): one panel per ordering, stacked
(eager on top), one row per stream (or core), ops coloured by kind, shared time axis.

  build/fusim simulate --trace traces/examples/mlp.json --machine h100-sxm5 --json > run.json
  scripts/plot_timeline.py run.json -o timeline.png [--step 1]

Input: a RunResult object, a list of them, or an object holding such a list under
"results" or "runs"; several files may be given. Ops need per_op (start_us, end_us, kind,
stream, step).
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

KINDS = {  # op kind -> (colour, legend name)
    "F": ("#4C72B0", "forward"),
    "L": ("#8C8C8C", "loss"),
    "Bx": ("#DD8452", "backward (input grad)"),
    "Bw": ("#C44E52", "backward (weight grad)"),
    "U": ("#55A868", "optimizer update"),
}
from fusim_plot_style import ORDERINGS as ORDER  # noqa: E402  (the pipeline's order)


def fail(message):
    sys.exit(f"plot_timeline.py: {message}")


def run_results(document, path):
    if isinstance(document, dict):
        for key in ("results", "runs"):
            if isinstance(document.get(key), list):
                return document[key]
        if "per_op" in document:
            return [document]
    if isinstance(document, list):
        return document
    fail(f"{path}: expected a RunResult, a list of them, or {{\"results\": [...]}}")


def load(paths):
    results = []
    for path in paths:
        try:
            with open(path) as f:
                document = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"{path}: {e}")
        for i, r in enumerate(run_results(document, path)):
            if not isinstance(r, dict) or not r.get("per_op"):
                fail(f"{path}: result {i}: expected per_op timings (run with per-op output)")
            results.append(r)
    rank = {name: i for i, name in enumerate(ORDER)}
    results.sort(key=lambda r: rank.get(r.get("ordering"), len(ORDER)))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="RunResult JSON file(s)")
    parser.add_argument("--step", type=int, help="show only this training step's ops")
    parser.add_argument("--title", help="figure title")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args()

    results = load(args.runs)
    fig, axes = plt.subplots(len(results), 1, figsize=(11, 1.0 + 1.3 * len(results)),
                             sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], results):
        ops = [op for op in r["per_op"] if args.step is None or op.get("step") == args.step]
        if not ops:
            fail(f"{r.get('ordering')}: no ops in step {args.step}")
        origin = min(op["start_us"] for op in ops)
        streams = sorted({op.get("stream", 0) for op in ops})
        for row, stream in enumerate(streams):
            for kind, (colour, _name) in KINDS.items():
                bars = [((op["start_us"] - origin) / 1000.0,
                         max(op["end_us"] - op["start_us"], 0) / 1000.0)
                        for op in ops if op.get("stream", 0) == stream and op["kind"] == kind]
                if bars:
                    ax.broken_barh(bars, (row - 0.4, 0.8), facecolors=colour, linewidth=0)
        ax.set_yticks(range(len(streams)), [f"stream {s}" for s in streams])
        ax.set_ylim(-0.6, len(streams) - 0.4)
        step_ms = r.get("step_time_ms")
        name = f"{r.get('ordering', '?')} / {r.get('optimizer', '?')}"
        if r.get("impl"):
            name += f" ({r['impl']})"
        if step_ms is not None:
            name += f": {step_ms:.3f} ms per step"
        ax.set_title(name, loc="left", fontsize="medium")
        ax.grid(True, axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("time (ms)" + ("" if args.step is None else f", step {args.step}"))
    used = {op["kind"] for r in results for op in r["per_op"]}
    fig.legend(handles=[Patch(color=c, label=n) for k, (c, n) in KINDS.items() if k in used],
               loc="upper right", ncol=len(used), fontsize="small")
    if args.title:
        fig.suptitle(args.title, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(args.output, dpi=120)


if __name__ == "__main__":
    main()
