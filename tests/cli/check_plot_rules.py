#!/usr/bin/python3
"""CTest: the rules of plots people trust (issue 23, point 4), checked on the figure objects
scripts/plot_sweep.py draws from a small hand-made sweep CSV with provenance lines:
legend in the order eager, backward-fused, forward-fused with one fixed colour each; ticks
at the swept values (3, 6, 12 MiB, not log2's 4, 8, 16); a speedup axis that includes 1.0;
step-time and DRAM axes from 0 in round MiB; a title and a subtitle with the fixed context
from the CSV's "# command:" line; heatmap cells with enough digits to tell them apart; and
the note when the orderings differ by less than --error-pct.
usage: check_plot_rules.py SOURCE_DIR WORK_DIR"""
import os
import subprocess
import sys

source, work = sys.argv[1:3]
sys.path.insert(0, os.path.join(source, "scripts"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import fusim_plot_style as style  # noqa: E402
import plot_sweep  # noqa: E402

MIB = 1 << 20
os.makedirs(work, exist_ok=True)
# Alphabetical order would be backward-fused, eager, forward-fused: the rows come in that
# order on purpose. At 12 MiB the three step times are within 0.5% of each other.
CSV = f"""# fusim 0123456789abcdef
# command: fusim sweep --trace mlp --machine xeon-8380-ddr4 --optimizer adam --set caches.LLC.size=3MiB,6MiB,12MiB --set dram.channels=4 -o x.csv
trace,caches.LLC.size,ordering,optimizer,step_time_ms,speedup_vs_eager,dram_bytes,hit_rate.LLC
mlp,{3 * MIB},backward-fused,adam,1.00,1.10,{90 * MIB},0.50
mlp,{3 * MIB},eager,adam,1.10,1,{100 * MIB},0.40
mlp,{3 * MIB},forward-fused,adam,0.95,1.157895,{85 * MIB},0.45
mlp,{6 * MIB},backward-fused,adam,0.90,1.111111,{70 * MIB},0.60
mlp,{6 * MIB},eager,adam,1.00,1,{80 * MIB},0.55
mlp,{6 * MIB},forward-fused,adam,0.92,1.086957,{75 * MIB},0.58
mlp,{12 * MIB},backward-fused,adam,0.801,0.998752,{40 * MIB},0.8001
mlp,{12 * MIB},eager,adam,0.800,1,{41 * MIB},0.8003
mlp,{12 * MIB},forward-fused,adam,0.803,0.996264,{42 * MIB},0.8002
"""
path = os.path.join(work, "rules.csv")
with open(path, "w") as f:
    f.write(CSV)
rows, provenance = plot_sweep.read_rows(path)
assert provenance["commit"] == "0123456789abcdef", provenance
columns = list(rows[0].keys())
is_num = {c: plot_sweep.numeric(r[c] for r in rows) for c in columns}


class Args:
    x, hue, facet, z = "caches.LLC.size", "ordering", None, None
    error_pct, error_source = 2.0, "test error"


def lines(y):
    args = Args()
    args.y = y
    fig, ax = plt.subplots()
    small = plot_sweep.plot_lines(ax, rows, args, is_num)
    return fig, ax, small


# Legend order and colours.
fig, ax, small = lines("speedup_vs_eager")
labels = [t.get_text() for t in ax.get_legend().get_texts()]
assert labels[:3] == ["eager", "backward-fused", "forward-fused"], labels
for line in ax.get_lines()[:3]:
    assert matplotlib.colors.same_color(line.get_color(),
                                        style.COLOURS[line.get_label()]), line.get_label()
# Ticks at the swept values, labelled as typed.
assert list(ax.get_xticks()) == [3 * MIB, 6 * MIB, 12 * MIB], ax.get_xticks()
assert [t.get_text() for t in ax.get_xticklabels()] == ["3 MiB", "6 MiB", "12 MiB"]
# The speedup axis includes 1.0 (the data: 0.996..1.158).
lo, hi = ax.get_ylim()
assert lo < 1.0 < hi, (lo, hi)
# At 12 MiB the speedups 1, 0.998752, 0.996264 are within 2% pairwise (the widest,
# eager vs forward-fused: (1 - 0.996264) / 0.996264 = 0.375%); at 3 MiB (1, 1.10, 1.158)
# and 6 MiB (1, 1.111, 1.087: 2.2%) no pair is.
pairs = small["pairs"]
assert set(pairs) == {("eager", "backward-fused"), ("eager", "forward-fused"),
                      ("backward-fused", "forward-fused")}, pairs
for found in pairs.values():
    assert [x for x, _ in found] == [str(12 * MIB)], found
assert abs(pairs[("eager", "forward-fused")][0][1] - 100 * (1 - 0.996264) / 0.996264) < 1e-3
speedup_args = Args()
speedup_args.y = "speedup_vs_eager"
note = plot_sweep.small_note([(None, small)], speedup_args)
assert "all orderings within 2% of each other at LLC size = 12 MiB" in note, note
assert "3 MiB" not in note and "6 MiB" not in note, note
plt.close(fig)

# Step time from 0; DRAM traffic in MiB with round ticks, from 0.
fig, ax, _ = lines("step_time_ms")
assert ax.get_ylim()[0] == 0, ax.get_ylim()
plt.close(fig)
fig, ax, _ = lines("dram_bytes")
assert ax.get_ylim()[0] == 0 and ax.get_ylabel().endswith("(MiB)"), ax.get_ylabel()
assert all(float(t).is_integer() for t in ax.get_yticks()), ax.get_yticks()
plt.close(fig)

# Heatmap cells: 80.01/80.03/80.02% need 2 decimals to differ; speedups 1.003..1.012 need
# 3 ("1" under a "+1" offset before); hit rates over 42..100% get whole points (a 50th of
# the 58-point range is 1.2 points), where telling 42.0616 from 42.0969 would take 4.
assert style.cell_digits([80.01, 80.03, 80.02]) == 2
assert style.cell_digits([1.003, 1.012, 1.0075]) == 3
assert style.cell_digits([42.0616, 42.0969, 100.0, 77.4465]) == 0
assert style.cell_digits([1.0, 2.0]) == 0

# Subtitle: the context the command fixed (the swept LLC size is not context).
context = plot_sweep.context(rows, columns, provenance, [], ["caches.LLC.size", "ordering"])
for part in ("trace mlp", "machine xeon-8380-ddr4", "optimizer adam", "dram.channels=4",
             "fusim 0123456789"):
    assert part in context, (part, context)
assert "caches.LLC.size" not in context, context

# The whole script: a PNG with the title, through the command line.
png = os.path.join(work, "rules.png")
subprocess.run(["/usr/bin/python3", os.path.join(source, "scripts", "plot_sweep.py"), path,
                "--x", "caches.LLC.size", "--y", "speedup_vs_eager", "--hue", "ordering",
                "--error-pct", "2", "-o", png], check=True)
with open(png, "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
print("plot rules: ok")
