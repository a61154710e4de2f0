#!/usr/bin/python3
"""Plot a `fusim sweep` result file (CSV or JSON, long format: one row per grid point x
ordering x optimizer).

Line plot: one line per --hue value, one panel per --facet value:
  scripts/plot_sweep.py results.csv --x caches.L2.size --y speedup_vs_eager \
      --hue ordering --facet optimizer -o l2.png
Heatmap of two swept parameters (colour = --z), one panel per --facet value:
  scripts/plot_sweep.py results.csv --x caches.L2.size --y dram.channels \
      --z speedup_vs_eager --where ordering=backward-fused -o heat.png

Size columns (paths ending in "size" or "bytes") get log2 axes labelled in KiB/MiB/GiB.
Every other varying column must be pinned with --where, split with --hue/--facet, or the
script stops and names it (it never averages rows silently).
"""
import argparse
import csv
import json
import math
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

RESULT_COLUMNS = {"step_time_ms", "speedup_vs_eager", "dram_bytes", "llc_hit_rate",
                  "peak_memory_bytes"}
LABELS = {
    "step_time_ms": "step time (ms)",
    "speedup_vs_eager": "speedup vs eager (x)",
    "dram_bytes": "DRAM traffic per step",
    "llc_hit_rate": "last-level cache hit rate (%)",
    "peak_memory_bytes": "peak memory",
    "dram.channels": "DRAM channels",
    "dram.preset": "DRAM standard",
    "dram.scheduler": "DRAM scheduler",
    "dram.data_rate_mts": "DRAM data rate (MT/s)",
    "batch": "batch size",
}
HIT_RATE_PREFIX = "hit_rate."  # hit_rate.<level>: one column per cache level
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def fail(message):
    sys.exit(f"plot_sweep.py: {message}")


def is_result(column):
    return column in RESULT_COLUMNS or column.startswith(HIT_RATE_PREFIX)


def is_hit_rate(column):
    return column == "llc_hit_rate" or column.startswith(HIT_RATE_PREFIX)


def is_size(column):
    return column.endswith("size") or column.endswith("bytes")


def format_bytes(value, _pos=None):
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if abs(value) >= UNITS[unit]:
            scaled = value / UNITS[unit]
            return f"{scaled:.0f} {unit}" if scaled == int(scaled) else f"{scaled:.1f} {unit}"
    return f"{value:.0f} B"


def label(column):
    if column in LABELS:
        return LABELS[column]
    if column.startswith(HIT_RATE_PREFIX):
        return f"{column[len(HIT_RATE_PREFIX):]} hit rate (%)"
    m = re.fullmatch(r"caches\.([^.]+)\.(size|assoc|line|latency_cycles)", column)
    if m:
        return {"size": f"{m[1]} size", "assoc": f"{m[1]} associativity",
                "line": f"{m[1]} line (B)", "latency_cycles": f"{m[1]} latency (cycles)"}[m[2]]
    return column


def parse_where(text):
    """COL=VALUE; sizes may carry a unit (caches.L2.size=50MiB)."""
    if "=" not in text:
        fail(f"--where {text}: expected COLUMN=VALUE")
    column, value = text.split("=", 1)
    m = re.fullmatch(r"([0-9.]+)\s*(B|KiB|MiB|GiB|TiB)", value)
    if m:
        value = str(int(float(m[1]) * UNITS[m[2]]))
    return column, value


def read_rows(path):
    try:
        with open(path, newline="") as f:
            if path.endswith(".json"):
                rows = [{k: "" if v is None else str(v) for k, v in row.items()}
                        for row in json.load(f)]
            else:
                rows = list(csv.DictReader(f))
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if not rows:
        fail(f"{path}: no rows")
    return rows


def numeric(values):
    try:
        [float(v) for v in values if v != ""]
        return True
    except ValueError:
        return False


def as_value(text, is_number):
    if text == "":
        return math.nan
    return float(text) if is_number else text


def sort_key(is_number):
    return (lambda v: float(v)) if is_number else (lambda v: v)


def style_axis(ax, which, column, values_numeric):
    axis = ax.xaxis if which == "x" else ax.yaxis
    setter = ax.set_xscale if which == "x" else ax.set_yscale
    if is_size(column) and values_numeric and not is_result(column):
        setter("log", base=2)
        axis.set_major_formatter(FuncFormatter(format_bytes))
    elif column in ("dram_bytes", "peak_memory_bytes"):
        axis.set_major_formatter(FuncFormatter(format_bytes))
    elif is_hit_rate(column):
        axis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}"))


def check_unique(rows, used, columns):
    """Rows that agree on every used column must be a single row."""
    seen = {}
    for row in rows:
        key = tuple(row[c] for c in used)
        if key in seen:
            differing = [c for c in columns if c not in used and not is_result(c)
                         and row[c] != seen[key][c]]
            fail(f"several rows share {dict(zip(used, key))}; they differ in {differing}: "
                 "pin them with --where, or split them with --hue/--facet")
        seen[key] = row


def panels(rows, facet, is_num):
    if not facet:
        return [(None, rows)]
    values = sorted({r[facet] for r in rows}, key=sort_key(is_num[facet]))
    return [(v, [r for r in rows if r[facet] == v]) for v in values]


def plot_lines(ax, rows, args, is_num):
    hues = sorted({r[args.hue] for r in rows}, key=sort_key(is_num[args.hue])) if args.hue \
        else [None]
    x_num = is_num[args.x]
    categories = sorted({r[args.x] for r in rows}, key=sort_key(x_num))
    for hue in hues:
        series = [r for r in rows if hue is None or r[args.hue] == hue]
        series.sort(key=lambda r: sort_key(x_num)(r[args.x]))
        xs = [float(r[args.x]) if x_num else categories.index(r[args.x]) for r in series]
        ys = [as_value(r[args.y], True) for r in series]
        name = None if hue is None else (format_bytes(float(hue)) if is_size(args.hue) else hue)
        ax.plot(xs, ys, marker="o", label=name)
    if not x_num:
        ax.set_xticks(range(len(categories)), categories)
    style_axis(ax, "x", args.x, x_num)
    style_axis(ax, "y", args.y, True)
    if args.y == "speedup_vs_eager":
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel(label(args.x))
    ax.set_ylabel(label(args.y))
    ax.grid(True, alpha=0.3)
    if args.hue:
        ax.legend(title=label(args.hue), fontsize="small")


def plot_heatmap(fig, ax, rows, args, is_num):
    xs = sorted({r[args.x] for r in rows}, key=sort_key(is_num[args.x]))
    ys = sorted({r[args.y] for r in rows}, key=sort_key(is_num[args.y]))
    grid = [[math.nan] * len(xs) for _ in ys]
    for r in rows:
        grid[ys.index(r[args.y])][xs.index(r[args.x])] = as_value(r[args.z], True)
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    finite = [v for line in grid for v in line if not math.isnan(v)]
    middle = (min(finite) + max(finite)) / 2 if finite else 0
    for i, line in enumerate(grid):
        for j, v in enumerate(line):
            if not math.isnan(v):
                text = format_bytes(v) if args.z in ("dram_bytes", "peak_memory_bytes") \
                    else f"{100 * v:.0f}" if is_hit_rate(args.z) else f"{v:.3g}"
                ax.text(j, i, text, ha="center", va="center", fontsize="small",
                        color="black" if v > middle else "white")

    def ticks(values, column):
        return [format_bytes(float(v)) if is_size(column) and is_num[column] else v
                for v in values]
    ax.set_xticks(range(len(xs)), ticks(xs, args.x), rotation=30)
    ax.set_yticks(range(len(ys)), ticks(ys, args.y))
    ax.set_xlabel(label(args.x))
    ax.set_ylabel(label(args.y))
    bar = fig.colorbar(image, ax=ax, label=label(args.z))
    if is_hit_rate(args.z):
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}"))
    elif args.z in ("dram_bytes", "peak_memory_bytes"):
        bar.ax.yaxis.set_major_formatter(FuncFormatter(format_bytes))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="results.csv or results.json from fusim sweep")
    parser.add_argument("--x", required=True, help="column on the x axis (a swept path)")
    parser.add_argument("--y", required=True,
                        help="result column (line plot) or second swept path (heatmap)")
    parser.add_argument("--z", help="result column coloured in a heatmap of --x by --y")
    parser.add_argument("--hue", help="one line per value of this column (line plot)")
    parser.add_argument("--facet", help="one panel per value of this column")
    parser.add_argument("--where", action="append", default=[], metavar="COL=VALUE",
                        help="keep only rows with this value (repeatable; sizes may have units)")
    parser.add_argument("--title", help="figure title (default: the filters)")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args()
    if args.z and args.hue:
        fail("--hue is for line plots; use --facet with --z")

    rows = read_rows(args.results)
    columns = list(rows[0].keys())
    for option in ("x", "y", "z", "hue", "facet"):
        column = getattr(args, option)
        if column and column not in columns:
            fail(f"--{option} {column}: no such column (have: {', '.join(columns)})")
    wheres = [parse_where(w) for w in args.where]
    for column, value in wheres:
        if column not in columns:
            fail(f"--where {column}: no such column (have: {', '.join(columns)})")
        rows = [r for r in rows if r[column] == value]
    if not rows:
        fail("no row is left after --where")
    is_num = {c: numeric(r[c] for r in rows) for c in columns}
    used = [c for c in (args.x, args.y if args.z else None, args.hue, args.facet) if c]
    check_unique(rows, used, columns)

    groups = panels(rows, args.facet, is_num)
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 4.0), squeeze=False,
                             sharey=not args.z)
    for ax, (value, group) in zip(axes[0], groups):
        if args.z:
            plot_heatmap(fig, ax, group, args, is_num)
        else:
            plot_lines(ax, group, args, is_num)
        if value is not None:
            ax.set_title(f"{label(args.facet)} = {value}")
    title = args.title or ", ".join(f"{c}={v}" for c, v in wheres)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)


if __name__ == "__main__":
    main()
