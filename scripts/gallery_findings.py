#!/usr/bin/python3
"""The gallery's findings, written from its CSVs (issue 23, point 6): a table per sweep
(each ordering's step time, speedup over eager and DRAM traffic at each swept value) and
the sentences that say which ordering is fastest where, and where the orderings differ by
less than the simulated-vs-measured error. Writes docs/gallery/findings.md and replaces
the blocks of README.md between the markers

  <!-- gallery-findings NAME: begin (scripts/gallery_findings.py) -->
  <!-- gallery-findings NAME: end -->

with NAME's part (NAME: mlp, resnet50), so that no number there is typed by hand.
Run by scripts/gallery.sh; alone: scripts/gallery_findings.py --gallery docs/gallery
--readme README.md.
"""
import argparse
import csv
import os
import sys

from fusim_plot_style import ordering_key, split_provenance

MIB = 1 << 20

# NAME -> [(csv file, swept column, what it is)]
PARTS = {
    "mlp": [("llc.csv", "caches.LLC.size", "LLC size"),
            ("channels.csv", "dram.channels", "DRAM channels")],
    "resnet50": [("h100_resnet50_l2.csv", "caches.L2.size", "L2 size"),
                 ("h100_resnet50_hbm.csv", "dram.data_rate_mts", "HBM data rate (MT/s)")],
}
GRID = "h100_resnet50_l2_hbm_100.csv"


def fail(message):
    sys.exit(f"gallery_findings.py: {message}")


def read(path):
    try:
        with open(path, newline="") as f:
            provenance, lines = split_provenance(f.read().splitlines())
    except OSError as e:
        fail(f"{path}: {e}")
    rows = list(csv.DictReader(lines))
    if not rows:
        fail(f"{path}: no rows")
    return provenance, rows


def size_text(value):
    v = float(value)
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if v >= scale:
            s = v / scale
            return f"{s:.0f} {unit}" if s == int(s) else f"{s:.1f} {unit}"
    return f"{v:.0f} B"


def value_text(column, value):
    return size_text(value) if column.endswith("size") else value


def by_point(rows, column):
    """swept value (in grid order) -> ordering -> row."""
    points = {}
    for r in rows:
        points.setdefault(r[column], {})[r["ordering"]] = r
    return points


def table(rows, column, what):
    points = by_point(rows, column)
    orderings = sorted({r["ordering"] for r in rows}, key=ordering_key)
    head = [what, "eager ms"] + [f"{o} speedup" for o in orderings if o != "eager"] + \
        [f"{o} DRAM MiB" for o in orderings]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for value, per in points.items():
        cells = [value_text(column, value), f"{float(per['eager']['step_time_ms']):.4g}"]
        cells += [f"{float(per[o]['speedup_vs_eager']):.3f}x" for o in orderings if o != "eager"]
        cells += [f"{float(per[o]['dram_bytes']) / MIB:.1f}" for o in orderings]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sentences(rows, column, what, error_pct, error_source):
    """The fastest ordering at each point, by more than the error; where the fastest are
    within it of each other, the model does not rank them, and the sentence says so."""
    fastest = {}
    ties = []
    for value, per in by_point(rows, column).items():
        times = {o: float(r["step_time_ms"]) for o, r in per.items()}
        order = sorted(times, key=lambda o: (times[o], ordering_key(o)))
        best = order[0]
        within = [o for o in order[1:] if 100 * (times[o] - times[best]) / times[best] < error_pct]
        if not within:
            fastest.setdefault(best, []).append(
                f"{value_text(column, value)} ({float(per[best]['speedup_vs_eager']):.3f}x)")
            continue
        margin = max(100 * (times[o] - times[best]) / times[best] for o in within)
        tied = sorted([best] + within, key=ordering_key)
        ties.append(f"{value_text(column, value)} ({', '.join(tied)}: {margin:.2g}%)")
    out = []
    if fastest:
        out.append(f"Fastest by more than {error_pct:g}%, per {what}: " + "; ".join(
            f"{o} at {', '.join(fastest[o])}" for o in sorted(fastest, key=ordering_key)) + ".")
    if ties:
        out.append(f"Within {error_pct:g}% of each other ({error_source}), not ranked by the "
                   f"model: {'; '.join(ties)}.")
    return " ".join(out)


def provenance_line(name, provenance):
    commit = provenance["commit"][:12] if "commit" in provenance else "(commit not recorded)"
    wall = provenance.get("wall", "")
    return (f"`{name}`: fusim {commit}{', ' + wall.split(',')[0] + ' wall' if wall else ''}"
            f"{': `' + provenance['command'] + '`' if 'command' in provenance else ''}")


def span(rates):
    lo, hi = round(100 * min(rates)), round(100 * max(rates))
    return f"{lo}%" if lo == hi else f"{lo}-{hi}%"


def grid_summary(path):
    provenance, rows = read(path)
    l2 = sorted({float(r["caches.L2.size"]) for r in rows})
    out = []
    for o in sorted({r["ordering"] for r in rows}, key=ordering_key):
        mine = [r for r in rows if r["ordering"] == o]
        # How far the HBM rate moves the step and the L2 hit rate at a fixed L2 size.
        step_spread, hit_spread = 0.0, 0.0
        for size in l2:
            at = [r for r in mine if float(r["caches.L2.size"]) == size]
            times = [float(r["step_time_ms"]) for r in at]
            hits = [float(r["hit_rate.L2"]) for r in at if r.get("hit_rate.L2", "") != ""]
            step_spread = max(step_spread, 100 * (max(times) - min(times)) / min(times))
            if hits:
                hit_spread = max(hit_spread, 100 * (max(hits) - min(hits)))
        lo = [float(r["hit_rate.L2"]) for r in mine if float(r["caches.L2.size"]) == l2[0]]
        hi = [float(r["hit_rate.L2"]) for r in mine if float(r["caches.L2.size"]) == l2[-1]]
        out.append(f"{o}: the HBM data rate moves the step time by at most {step_spread:.2g}% "
                   f"and the L2 hit rate by at most {hit_spread:.2g} points at a given L2 size; "
                   f"the L2 hit rate is {span(lo)} at {size_text(l2[0])} and {span(hi)} at "
                   f"{size_text(l2[-1])}")
    return provenance, "In the 100-point grid, " + "; ".join(out) + "."


def part(name, gallery, error_pct, error_source):
    blocks = []
    for file, column, what in PARTS[name]:
        provenance, rows = read(os.path.join(gallery, file))
        blocks.append(table(rows, column, what))
        blocks.append(sentences(rows, column, what, error_pct, error_source))
        blocks.append("From " + provenance_line(file, provenance) + ".")
    if name == "resnet50":
        provenance, text = grid_summary(os.path.join(gallery, GRID))
        current, _ = read(os.path.join(gallery, PARTS[name][0][0]))
        if provenance.get("commit") != current.get("commit"):
            text = ("**Stale:** this grid was made by another fusim than the sweeps above "
                    "(`scripts/gallery.sh --quick` keeps it; run it without `--quick`). " + text)
        blocks.append(text)
        blocks.append("From " + provenance_line(GRID, provenance) + ".")
    return "\n\n".join(blocks)


def replace_block(text, name, body):
    begin = f"<!-- gallery-findings {name}: begin (scripts/gallery_findings.py) -->"
    end = f"<!-- gallery-findings {name}: end -->"
    if begin not in text or end not in text:
        fail(f"README: no block for {name} (expected the lines {begin} ... {end})")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gallery", default="docs/gallery", help="folder of the CSVs")
    ap.add_argument("--readme", help="README.md whose findings blocks to rewrite")
    ap.add_argument("--error-pct", type=float, default=2.0,
                    help="the simulated-vs-measured error (percent) the notes compare with")
    ap.add_argument("--error-source", default="the simulated-vs-measured error")
    args = ap.parse_args()
    parts = {name: part(name, args.gallery, args.error_pct, args.error_source) for name in PARTS}
    findings = os.path.join(args.gallery, "findings.md")
    with open(findings + ".tmp", "w") as f:
        f.write("# Gallery findings (written by scripts/gallery_findings.py; do not edit)\n")
        for name, body in parts.items():
            f.write(f"\n## {name}\n\n{body}\n")
    os.replace(findings + ".tmp", findings)
    if args.readme:
        with open(args.readme) as f:
            text = f.read()
        for name, body in parts.items():
            text = replace_block(text, name, body)
        with open(args.readme + ".tmp", "w") as f:
            f.write(text)
        os.replace(args.readme + ".tmp", args.readme)
    print(f"gallery_findings: wrote {findings}" + (f" and {args.readme}" if args.readme else ""))


if __name__ == "__main__":
    main()
