#!/usr/bin/python3
"""Predicted-vs-measured scatter plots from `fusim validate --json` outputs.

Usage: scripts/plot_validation.py -o validation.png RESULT.json [RESULT.json ...]

Left: step time, predicted vs measured (median, with the p25-p75 range as error bars), one
colour per ordering, one marker per input file; the diagonal is a perfect prediction and
the band is +-2 %. Right: speedup over eager, predicted vs measured, with the measured
speedup's 95 % interval (paired by round); the band is +-2 points. The title gives the MAPE.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from fusim_plot_style import COLOURS, ordering_key  # noqa: E402  (one colour per ordering)
MARKERS = "osD^v<>pP*X"


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"plot_validation: {path}: {e}")
    if not isinstance(doc.get("results"), list) or not doc["results"]:
        sys.exit(f"plot_validation: {path}: results: expected a non-empty list "
                 "(the output of fusim validate --json)")
    for i, r in enumerate(doc["results"]):
        for key in ("ordering", "optimizer", "predicted_ms", "measured_ms"):
            if key not in r:
                sys.exit(f"plot_validation: {path}: results[{i}].{key}: expected a value")
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="fusim validate --json outputs")
    ap.add_argument("-o", "--output", default="validation.png", help="PNG to write")
    args = ap.parse_args()

    docs = [(p, load(p)) for p in args.inputs]
    fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(12, 5.5))
    all_t, all_s, errors = [], [], []
    for k, (path, doc) in enumerate(docs):
        label = f"{os.path.basename(path)} ({doc.get('machine', '?')})"
        marker = MARKERS[k % len(MARKERS)]
        for r in sorted(doc["results"], key=lambda r: ordering_key(r["ordering"])):
            colour = COLOURS.get(r["ordering"], "tab:gray")
            p, m = r["predicted_ms"], r["measured_ms"]
            lo, hi = r.get("measured_p25_ms", m), r.get("measured_p75_ms", m)
            ax_t.errorbar(m, p, xerr=[[m - lo], [hi - m]], fmt=marker, color=colour,
                          label=f"{r['ordering']} / {label}")
            all_t += [p, m]
            errors.append(abs(r.get("error_pct", 100.0 * (p - m) / m)))
            if r.get("measured_speedup") is not None:  # null without an eager baseline
                ms, ps = r["measured_speedup"], r["predicted_speedup"]
                ci = r.get("measured_speedup_ci", [ms, ms])
                ax_s.errorbar(ms, ps, xerr=[[ms - ci[0]], [ci[1] - ms]], fmt=marker,
                              color=colour)
                all_s += [ps, ms]
    if all_t:
        lo, hi = min(all_t) * 0.9, max(all_t) * 1.1
        ax_t.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax_t.fill_between([lo, hi], [lo * 0.98, hi * 0.98], [lo * 1.02, hi * 1.02],
                          color="k", alpha=0.08, label="+-2 %")
        ax_t.set_xscale("log")
        ax_t.set_yscale("log")
    ax_t.set_xlabel("measured step time (ms, median; bars p25-p75)")
    ax_t.set_ylabel("predicted step time (ms)")
    ax_t.set_title("step time")
    ax_t.legend(fontsize=7)
    if all_s:
        lo, hi = min(all_s) - 0.05, max(all_s) + 0.05
        ax_s.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax_s.fill_between([lo, hi], [lo - 0.02, hi - 0.02], [lo + 0.02, hi + 0.02],
                          color="k", alpha=0.08)
    ax_s.set_xlabel("measured speedup vs eager (bars: 95 % CI)")
    ax_s.set_ylabel("predicted speedup vs eager")
    ax_s.set_title("speedup")
    mape = sum(errors) / len(errors)
    fig.suptitle(f"fusim validate: predicted vs measured, MAPE {mape:.1f} % over {len(errors)} runs")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output} (MAPE {mape:.1f} %)")


if __name__ == "__main__":
    main()
