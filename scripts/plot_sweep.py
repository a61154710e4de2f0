#!/usr/bin/python3
"""Plot a `fusim sweep` result file (CSV or JSON, long format: one row per grid point x
ordering x optimizer).

Line plot: one line per --hue value, one panel per --facet value:
  scripts/plot_sweep.py results.csv --x caches.L2.size --y speedup_vs_eager \
      --hue ordering --facet optimizer -o l2.png
Heatmap of two swept parameters (colour = --z), one panel per --facet value:
  scripts/plot_sweep.py results.csv --x caches.L2.size --y dram.channels \
      --z speedup_vs_eager --where ordering=backward-fused -o heat.png

Size columns (paths ending in "size" or "bytes") get log2 axes labelled in KiB/MiB/GiB,
ticks at the swept values. Every other varying column must be pinned with --where, split
with --hue/--facet, or the script stops and names it (it never averages rows silently).

What a reader can trust (issue 23, point 4; scripts/fusim_plot_style.py): a title and a
subtitle with the fixed context (trace, machine, optimizer, pinned --set values: from the
"# command:" line scripts/gallery.sh writes at the top of a CSV, the columns that do not
vary, and --where); orderings in the order eager, backward-fused, forward-fused with one
colour each in every plot; absolute quantities on axes from 0, relative ones (speedups)
on axes that include 1.0; heatmap cells with as many digits as tell them apart; and, with
--error-pct, a band of +-that error around 1.0 and a note where the differences between
orderings are smaller than it.
"""
import argparse
import csv
import json
import math
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullLocator  # noqa: E402

from fusim_plot_style import (cell_digits, command_context, ordering_colour,  # noqa: E402
                              ordering_key, plain_numbers, set_titles, split_provenance,
                              subtitle_text)

RESULT_COLUMNS = {"step_time_ms", "speedup_vs_eager", "dram_bytes", "llc_hit_rate",
                  "peak_memory_bytes"}
ABSOLUTE_COLUMNS = {"step_time_ms", "dram_bytes", "peak_memory_bytes"}  # axes from 0
BYTE_RESULTS = ("dram_bytes", "peak_memory_bytes")
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


def label(column, unit=None):
    if unit:
        return f"{label(column)} ({unit})"
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
    """(rows, provenance): the provenance lines of a CSV (fusim_plot_style.split_provenance)."""
    provenance = {}
    try:
        with open(path, newline="") as f:
            if path.endswith(".json"):
                rows = [{k: "" if v is None else str(v) for k, v in row.items()}
                        for row in json.load(f)]
            else:
                provenance, lines = split_provenance(f.read().splitlines())
                rows = list(csv.DictReader(lines))
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if not rows:
        fail(f"{path}: no rows")
    return rows, provenance


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


def byte_unit(values):
    """(divisor, name) for showing byte counts: ticks at round MiB, not at 19.1 MiB."""
    top = max((abs(v) for v in values if not math.isnan(v)), default=0)
    for name in ("GiB", "MiB", "KiB"):
        if top >= 2 * UNITS[name]:
            return UNITS[name], name
    return 1, "B"


def style_axis(ax, which, column, values_numeric, swept=None):
    """Log2 for swept sizes; ticks at the swept values (`swept`) on a swept axis."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    setter = ax.set_xscale if which == "x" else ax.set_yscale
    if is_size(column) and values_numeric and not is_result(column):
        setter("log", base=2)
    if swept is not None and values_numeric:
        ticks = sorted({float(v) for v in swept})
        names = [format_bytes(v) if is_size(column) else f"{v:g}" for v in ticks]
        (ax.set_xticks if which == "x" else ax.set_yticks)(ticks)
        (ax.set_xticklabels if which == "x" else ax.set_yticklabels)(
            names, rotation=30 if which == "x" and len(ticks) > 6 else 0)
        axis.set_minor_locator(NullLocator())
    elif is_hit_rate(column):
        axis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:.0f}"))
    elif not (is_size(column) and values_numeric and not is_result(column)):
        plain_numbers(axis)


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


def is_relative(column):
    return "speedup" in column or column.endswith("ratio")


def hue_values(rows, column, is_num):
    if column == "ordering":
        return sorted({r[column] for r in rows}, key=ordering_key)
    return sorted({r[column] for r in rows}, key=sort_key(is_num[column]))


def small_differences(rows, args, x_values, error_pct):
    """Where two orderings (--hue ordering) differ in --y by less than error_pct percent of
    the smaller value: {(a, b): [(x, percent)]} over the pairs in legend order; None when
    the plot compares no orderings in step time or speedup."""
    if not error_pct or args.hue != "ordering" or args.y not in ("step_time_ms",
                                                                 "speedup_vs_eager"):
        return None
    close = {}
    orderings = hue_values(rows, "ordering", None)
    for x in x_values:
        at = {r["ordering"]: as_value(r[args.y], True) for r in rows if r[args.x] == x}
        for k, a in enumerate(orderings):
            for b in orderings[k + 1:]:
                ya, yb = at.get(a, math.nan), at.get(b, math.nan)
                if math.isnan(ya) or math.isnan(yb) or min(ya, yb) <= 0:
                    continue
                spread = 100 * abs(ya - yb) / min(ya, yb)
                if spread < error_pct:
                    close.setdefault((a, b), []).append((x, spread))
    return {"pairs": close, "orderings": orderings, "points": list(x_values)}


def plot_lines(ax, rows, args, is_num, panel_value=None):
    hues = hue_values(rows, args.hue, is_num) if args.hue else [None]
    x_num = is_num[args.x]
    categories = sorted({r[args.x] for r in rows}, key=sort_key(x_num))
    all_ys = [as_value(r[args.y], True) for r in rows]
    divisor, unit = byte_unit(all_ys) if args.y in BYTE_RESULTS else (1, None)
    shown = []
    for hue in hues:
        series = [r for r in rows if hue is None or r[args.hue] == hue]
        series.sort(key=lambda r: sort_key(x_num)(r[args.x]))
        xs = [float(r[args.x]) if x_num else categories.index(r[args.x]) for r in series]
        ys = [as_value(r[args.y], True) / divisor for r in series]
        shown += [y for y in ys if not math.isnan(y)]
        name = None if hue is None else (format_bytes(float(hue)) if is_size(args.hue) else hue)
        colour = ordering_colour(hue) if args.hue == "ordering" else \
            ordering_colour(panel_value) if args.facet == "ordering" else None
        ax.plot(xs, ys, marker="o", label=name, color=colour)
    if not x_num:
        ax.set_xticks(range(len(categories)), categories)
    style_axis(ax, "x", args.x, x_num, swept=categories if x_num else None)
    style_axis(ax, "y", args.y, True)
    if shown and args.y in ABSOLUTE_COLUMNS:
        ax.set_ylim(0, max(shown) * 1.08)  # from 0: a 0.1% change stays a 0.1% change
    elif shown and is_hit_rate(args.y):
        ax.set_ylim(0, 1.02)
    elif shown and is_relative(args.y):
        lo, hi = min(shown + [1.0]), max(shown + [1.0])
        pad = max(0.1 * (hi - lo), 0.01)
        ax.set_ylim(lo - pad, hi + pad)  # 1.0 (no change) always in view
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        if args.error_pct:
            e = args.error_pct / 100
            ax.axhspan(1 - e, 1 + e, color="grey", alpha=0.12, linewidth=0,
                       label=f"+-{args.error_pct:g}%: within the model's error")
    ax.set_xlabel(label(args.x))
    ax.set_ylabel(label(args.y, unit))
    ax.grid(True, alpha=0.3)
    if args.hue:
        ax.legend(title=label(args.hue), fontsize="small")
    return small_differences(rows, args, categories, args.error_pct)


def plot_heatmap(fig, ax, rows, args, is_num):
    xs = sorted({r[args.x] for r in rows}, key=sort_key(is_num[args.x]))
    ys = sorted({r[args.y] for r in rows}, key=sort_key(is_num[args.y]))
    grid = [[math.nan] * len(xs) for _ in ys]
    for r in rows:
        grid[ys.index(r[args.y])][xs.index(r[args.x])] = as_value(r[args.z], True)
    divisor, unit = byte_unit([v for line in grid for v in line]) \
        if args.z in BYTE_RESULTS else (1, None)
    scale = 100 if is_hit_rate(args.z) else 1 / divisor
    shown = [[v * scale for v in line] for line in grid]
    image = ax.imshow(shown, origin="lower", aspect="auto", cmap="viridis")
    finite = [v for line in shown for v in line if not math.isnan(v)]
    middle = (min(finite) + max(finite)) / 2 if finite else 0
    # Decimals that tell the cells apart ("1.003", not "1" under a colour bar offset by +1),
    # no more than resolve a 50th of the range (fusim_plot_style.cell_digits).
    digits = cell_digits(finite)
    for i, line in enumerate(shown):
        for j, v in enumerate(line):
            if not math.isnan(v):
                ax.text(j, i, f"{v:.{digits}f}", ha="center", va="center", fontsize="x-small",
                        color="black" if v > middle else "white")

    def ticks(values, column):
        return [format_bytes(float(v)) if is_size(column) and is_num[column] else v
                for v in values]
    ax.set_xticks(range(len(xs)), ticks(xs, args.x), rotation=30)
    ax.set_yticks(range(len(ys)), ticks(ys, args.y))
    ax.set_xlabel(label(args.x))
    ax.set_ylabel(label(args.y))
    z_label = label(args.z, unit)
    if finite and is_relative(args.z):
        z_label += f"; colours span {min(finite):.{digits}f}-{max(finite):.{digits}f}"
    bar = fig.colorbar(image, ax=ax, label=z_label)
    plain_numbers(bar.ax.yaxis)
    return None


def context(rows, columns, provenance, wheres, used):
    """The subtitle: what the command fixed, the columns that do not vary, --where."""
    pairs = command_context(provenance.get("command", ""))
    named = {what for what, _ in pairs}
    for c in columns:
        values = {r[c] for r in rows}
        if c not in used and not is_result(c) and len(values) == 1 and c not in named:
            value = values.pop()
            if value != "":
                pairs.append((c, format_bytes(float(value)) if is_size(c) and
                              numeric([value]) else value))
                named.add(c)
    pairs += [(c, v) for c, v in wheres if c not in named]
    extra = [f"fusim {provenance['commit'][:10]}"] if provenance.get("commit") else []
    return subtitle_text(pairs, extra)


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
    parser.add_argument("--title", help="figure title (default: what is plotted against what)")
    parser.add_argument("--subtitle", help="the fixed context (default: from the file)")
    parser.add_argument("--error-pct", type=float,
                        help="the simulated-vs-measured error in percent: a band of +-it around "
                             "1.0 on speedup axes, and a note where the orderings differ by less")
    parser.add_argument("--error-source", default="the simulated-vs-measured error",
                        help="what --error-pct is, for the note")
    parser.add_argument("-o", "--output", required=True, help="PNG file to write")
    args = parser.parse_args()
    if args.z and args.hue:
        fail("--hue is for line plots; use --facet with --z")

    rows, provenance = read_rows(args.results)
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
    if args.facet == "ordering":
        groups.sort(key=lambda g: ordering_key(g[0]))
    # A heatmap gets 0.55 inch per column of cells, so that their labels fit.
    width = 5.6
    if args.z:
        width = max(width, 2.5 + 0.55 * len({r[args.x] for r in rows}))
    fig, axes = plt.subplots(1, len(groups), figsize=(width * len(groups), 4.6), squeeze=False,
                             sharey=not args.z)
    small = []
    for ax, (value, group) in zip(axes[0], groups):
        if args.z:
            plot_heatmap(fig, ax, group, args, is_num)
        else:
            small.append((value, plot_lines(ax, group, args, is_num, value)))
        if value is not None:
            ax.set_title(f"{label(args.facet)} = {value}", fontsize="medium")
    def bare(column):  # the label without its unit, for a title
        return label(column).split(" (")[0]
    title = args.title or (f"{bare(args.z)} by {bare(args.x)} and {bare(args.y)}" if args.z
                           else f"{bare(args.y)} vs {bare(args.x)}")
    title = title[0].upper() + title[1:]
    subtitle = args.subtitle if args.subtitle is not None else \
        context(rows, columns, provenance, wheres, used + ([args.z] if args.z else []))
    set_titles(fig, title, subtitle)
    note = small_note(small, args)
    bottom = 0
    if note:
        # Wrapped here, not by matplotlib, so that the axes can be given room for every
        # line: a "small" (8.3 pt) character is ~0.06 inch wide, a line 0.145 inch high.
        fig_w, fig_h = fig.get_size_inches()
        lines = textwrap.wrap(note, width=max(40, int((fig_w - 0.2) / 0.06)))
        text_h = 0.145 * len(lines) + 0.1
        fig.set_size_inches(fig_w, fig_h + text_h)
        bottom = text_h / (fig_h + text_h)
        fig.text(0.01, 0.01, "\n".join(lines), ha="left", va="bottom", fontsize="small",
                 color="0.2")
    fig.tight_layout(rect=(0, bottom, 1, 0.9))
    fig.savefig(args.output, dpi=120)


def small_note(small, args):
    """One sentence per panel where orderings differ by less than --error-pct: the points
    where all of them do, then each pair that does elsewhere."""
    def x_text(x):
        return format_bytes(float(x)) if is_size(args.x) else x
    what = label(args.y).split(" (")[0]
    parts = []
    for panel, found in small:
        if not found or not found["pairs"]:
            continue
        orderings, points, pairs = found["orderings"], found["points"], found["pairs"]
        n_pairs = len(orderings) * (len(orderings) - 1) // 2
        all_close = [x for x in points
                     if sum(1 for p in pairs.values() if any(px == x for px, _ in p)) == n_pairs]
        where = f"{label(args.facet)} = {panel}: " if panel is not None else ""
        if all_close:
            parts.append(f"{where}all orderings within {args.error_pct:g}% of each other at "
                         f"{label(args.x)} = {', '.join(x_text(x) for x in all_close)}")
        for (a, b), found_at in pairs.items():
            rest = [(x, s) for x, s in found_at if x not in all_close]
            if not rest:
                continue
            at = "every point" if len(found_at) == len(points) else \
                ", ".join(x_text(x) for x, _ in rest)
            parts.append(f"{where}{a} and {b} within {args.error_pct:g}% at {at} (at most "
                         f"{max(s for _, s in rest):.2g}%)")
    if not parts:
        return ""
    return (f"Note ({what}; {args.error_pct:g}% is {args.error_source}): " + "; ".join(parts) +
            ". The model does not rank orderings there.")


if __name__ == "__main__":
    main()
