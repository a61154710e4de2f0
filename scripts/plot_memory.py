#!/usr/bin/python3
"""Memory over a training step, per ordering, stacked by category (weights, grads,
optimizer state, activations, temporaries, inputs): one panel per ordering, same y scale.

  build/fusim schedule --trace T --ordering eager --optimizer adam --json > eager.json
  build/fusim schedule --trace T --ordering backward-fused --optimizer adam --json > bwd.json
  scripts/plot_memory.py eager.json bwd.json -o memory.png [--run run.json]

Input: schedule JSON holding "ordering", "ops" and "tensors" (each {"category", "bytes",
"alloc_op", "free_op"}; op indices in issue order, -1 = before the first / after the last
op). A tensor is live from its alloc_op to its free_op inclusive, as in the schedule's
allocator model. With --run (RunResults, e.g. fusim simulate --json), the x axis is the
simulated time of each op of the same ordering instead of the op index.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

CATEGORIES = [  # bottom to top
    ("weights", "#4C72B0"),
    ("optimizer_state", "#8172B3"),
    ("grads", "#C44E52"),
    ("activations", "#DD8452"),
    ("temporaries", "#CCB974"),
    ("inputs", "#8C8C8C"),
]
from fusim_plot_style import ORDERINGS as ORDER  # noqa: E402  (the pipeline's order)


def fail(message):
    sys.exit(f"plot_memory.py: {message}")


def format_bytes(value, _pos=None):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


def live_bytes(schedule, path):
    """Bytes live per category after each op is issued (a list per category)."""
    ops = len(schedule.get("ops", []))
    tensors = schedule.get("tensors")
    if not ops or not isinstance(tensors, list):
        fail(f"{path}: expected a schedule with \"ops\" and \"tensors\" (fusim schedule --json)")
    delta = {name: [0] * (ops + 1) for name, _ in CATEGORIES}
    for i, t in enumerate(tensors):
        category = t.get("category")
        if category not in delta:
            fail(f"{path}: tensors[{i}].category: expected one of "
                 f"{[n for n, _ in CATEGORIES]}, got {category!r}")
        first = max(t.get("alloc_op", -1), 0)
        last = t.get("free_op", -1)
        last = ops - 1 if last < 0 else last
        size = t.get("alloc_bytes", t["bytes"])  # the allocator model's rounded size
        delta[category][first] += size
        delta[category][last + 1] -= size
    live = {}
    for name, d in delta.items():
        running, series = 0, []
        for i in range(ops):
            running += d[i]
            series.append(running)
        live[name] = series
    return live


def op_times(run_paths):
    """ordering -> end time (ms) of each op, from RunResults."""
    times = {}
    for path in run_paths:
        document = load_json(path)
        results = document.get("results", document.get("runs")) if isinstance(document, dict) \
            else document
        if isinstance(document, dict) and "per_op" in document:
            results = [document]
        for r in results or []:
            ops = sorted(r.get("per_op", []), key=lambda op: op["id"])
            times[r.get("ordering")] = [op["end_us"] / 1000.0 for op in ops]
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("schedules", nargs="+", help="schedule JSON files, one per ordering")
    parser.add_argument("--run", action="append", default=[],
                        help="RunResult JSON: put each op at its simulated end time")
    parser.add_argument("--title", help="figure title")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args()

    schedules = [(path, load_json(path)) for path in args.schedules]
    rank = {name: i for i, name in enumerate(ORDER)}
    schedules.sort(key=lambda s: rank.get(s[1].get("ordering"), len(ORDER)))
    times = op_times(args.run)
    fig, axes = plt.subplots(len(schedules), 1, figsize=(10, 1.2 + 2.2 * len(schedules)),
                             sharey=True, squeeze=False)
    for ax, (path, schedule) in zip(axes[:, 0], schedules):
        live = live_bytes(schedule, path)
        ordering = schedule.get("ordering", path)
        n = len(next(iter(live.values())))
        xs = times.get(ordering) if len(times.get(ordering, [])) == n else list(range(n))
        ax.stackplot(xs, [live[name] for name, _ in CATEGORIES],
                     labels=[name.replace("_", " ") for name, _ in CATEGORIES],
                     colors=[colour for _, colour in CATEGORIES], step="post")
        totals = [sum(live[name][i] for name, _ in CATEGORIES) for i in range(n)]
        peak = max(range(n), key=lambda i: totals[i])
        ax.annotate(f"peak {format_bytes(totals[peak])}", (xs[peak], totals[peak]),
                    xytext=(5, -12), textcoords="offset points", fontsize="small")
        title = f"{ordering} / {schedule.get('optimizer', '?')}"
        if schedule.get("steps", 1) > 1:
            title += f" ({schedule['steps']} steps)"
        ax.set_title(title, loc="left", fontsize="medium")
        ax.yaxis.set_major_formatter(FuncFormatter(format_bytes))
        ax.set_xlabel("time (ms)" if xs is times.get(ordering) else "op (issue order)")
        ax.set_ylabel("allocated")
        ax.grid(True, alpha=0.3)
    # Ticks at round binary sizes (the panels share y): steps of 1, 2, 2.5, 5, 10 MiB or KiB.
    ymax = axes[0, 0].get_ylim()[1]
    unit = 1 << 20 if ymax >= 4 << 20 else 1 << 10
    locator = MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10])
    axes[0, 0].set_yticks([t * unit for t in locator.tick_values(0, ymax / unit)
                           if t * unit <= ymax])
    axes[0, 0].legend(loc="upper left", fontsize="small", ncol=3)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


if __name__ == "__main__":
    main()
