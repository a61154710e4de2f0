#!/usr/bin/python3
"""Issue 16: do the fidelity check's measured speedups hold from one run to the next?

`fusim run` gives each speedup a 95% CI from its sampling rounds, in one process over
tens of seconds. What moves slower than that (a shared host drifting over minutes), and
whatever stays fixed for a process (where its tensors landed in physical memory, hence in
the physically indexed L2/L3 sets and DRAM banks), is alike in all its rounds, so that CI
cannot see it. This script reads K outputs of scripts/fidelity_check.py over the same
configurations (each at its own time, in its own processes) and reports, per fused
speedup:

  - each run's measured speedup and CI, their geometric mean, and a run-level 95% CI:
    exp(mean +- t(K-1) sd / sqrt(K)) over the runs' log speedups (Student's t);
  - whether the decision is reproducible: every run's CI excludes 1 on the same side;
  - the predicted speedup (the mean of the runs' predictions, each from its own profile)
    against the mean measured one: its error in points, and whether it names the faster
    ordering right where the decision is reproducible, or where the run-level CI excludes 1.

and, over all pairs of runs, how often two runs' speedups differ by more than their own
CIs allow (|a - b| > sqrt(ha^2 + hb^2), ha and hb the half-widths): about 5% if the CIs held;
and each run's predictions against its own measurements (what one run of the check sees):
their mean error and how many are within 2 points. Where that error is close to the
between-run spread, what is left is the measurement's, not the model's.

  scripts/fidelity_replicates.py RUN1 RUN2 RUN3 [--path in-run] [--json OUT.json]
"""
import argparse
import glob
import itertools
import json
import math
import os
import statistics
import sys

# Two-sided 95% Student's t by degrees of freedom.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}


def fail(message):
    """One clear line, exit code 2 (bad input), as fusim's commands do."""
    print(f"fidelity_replicates: {message}", file=sys.stderr)
    sys.exit(2)


def t95(df):
    if df in T95:
        return T95[df]
    lower = [d for d in T95 if d < df]
    return T95[max(lower)] if df < 30 else 1.96


def load_run(folder, path):
    """{(configuration file, ordering): (measured, low, high, predicted)} of one run."""
    out = {}
    files = sorted(glob.glob(os.path.join(folder, f"*_{path}.json")))
    if not files:
        fail(f"{folder}: expected *_{path}.json outputs of scripts/fidelity_check.py, found none")
    for f in files:
        try:
            doc = json.load(open(f))
        except (OSError, json.JSONDecodeError) as e:
            fail(f"{f}: expected a validate output (JSON), got {e}")
        for i, r in enumerate(doc.get("results", [])):
            if r.get("ordering") == "eager":
                continue
            try:
                key = (os.path.basename(f), r["ordering"])
                out[key] = (float(r["measured_speedup"]), float(r["measured_speedup_ci_low"]),
                            float(r["measured_speedup_ci_high"]), float(r["predicted_speedup"]))
            except (KeyError, TypeError, ValueError):
                fail(f"{f}: results[{i}]: expected measured_speedup, measured_speedup_ci_low, "
                     "measured_speedup_ci_high and predicted_speedup numbers")
    return out


def analyse(runs):
    keys = sorted(set.intersection(*(set(r) for r in runs)))
    k = len(runs)
    rows = []
    for key in keys:
        m = [r[key] for r in runs]
        logs = [math.log(x[0]) for x in m]
        mean = statistics.fmean(logs)
        sd = statistics.stdev(logs) if k > 1 else 0.0
        half = t95(k - 1) * sd / math.sqrt(k) if k > 1 else float("inf")
        measured = math.exp(mean)
        predicted = statistics.fmean(x[3] for x in m)
        faster = [x[1] > 1 for x in m]
        slower = [x[2] < 1 for x in m]
        run_level = (math.exp(mean - half), math.exp(mean + half))
        rows.append({
            "configuration": key[0], "ordering": key[1],
            "measured": [x[0] for x in m], "ci": [[x[1], x[2]] for x in m],
            "measured_mean": measured, "between_runs_sd_points": 100 * sd,
            "run_level_ci": list(run_level), "predicted": predicted,
            "error_points": 100 * (predicted - measured),
            "reproducible": "faster" if all(faster) else "slower" if all(slower) else None,
            "run_level_decides": run_level[0] > 1 or run_level[1] < 1,
        })
    pairs = disagree = 0
    for a, b in itertools.combinations(runs, 2):
        for key in keys:
            (ma, la, ha, _), (mb, lb, hb, _) = a[key], b[key]
            pairs += 1
            if abs(ma - mb) > math.hypot((ha - la) / 2, (hb - lb) / 2):
                disagree += 1

    def right(r):
        return (r["predicted"] > 1) == (r["measured_mean"] > 1)

    # Each run's prediction against its own measurement (what one run of the check sees;
    # rounded to 1e-9 points so that an error of exactly 2 counts as within 2).
    own = [100 * (r[key][3] - r[key][0]) for r in runs for key in keys]
    rep = [r for r in rows if r["reproducible"]]
    lvl = [r for r in rows if r["run_level_decides"]]
    single = [sum(1 for x in r["ci"] if x[0] > 1 or x[1] < 1) for r in rows]
    return rows, {
        "runs": k, "speedups": len(rows),
        "pairs_compared": pairs, "pairs_outside_their_cis": disagree,
        "decided_by_one_run_mean": sum(single) / k,
        "reproducible_decisions": len(rep),
        "reproducible_right": sum(right(r) for r in rep),
        "run_level_decisions": len(lvl), "run_level_right": sum(right(r) for r in lvl),
        "within_2_points_of_mean": sum(abs(r["error_points"]) <= 2 for r in rows),
        "error_mean_points": statistics.fmean(abs(r["error_points"]) for r in rows),
        "own_run_results": len(own),
        "own_run_within_2_points": sum(round(abs(e), 9) <= 2 for e in own),
        "own_run_error_mean_points": statistics.fmean(abs(e) for e in own) if own else 0.0,
        "between_runs_sd_points_median":
            statistics.median(r["between_runs_sd_points"] for r in rows),
        "one_run_ci_half_width_points_median":
            statistics.median(100 * (x[1] - x[0]) / 2 for r in rows for x in r["ci"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="--out folders of scripts/fidelity_check.py runs")
    ap.add_argument("--path", default="in-run", help="the prediction path compared (in-run)")
    ap.add_argument("--json", help="also write the rows and summary to this file")
    a = ap.parse_args()
    if len(a.runs) < 2:
        fail("runs: expected at least 2 folders, got 1")
    rows, s = analyse([load_run(f, a.path) for f in a.runs])
    if not rows:
        fail("runs: expected configurations common to every folder, got none")
    print("| configuration | ordering | measured per run | mean | between-run sd (points) "
          "| run-level 95% CI | predicted | error (points) | reproducible |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['configuration'][:-len('.json')]} | {r['ordering']} | "
              + ", ".join(f"{m:.3f} [{c[0]:.3f}, {c[1]:.3f}]" for m, c in zip(r["measured"], r["ci"]))
              + f" | {r['measured_mean']:.3f} | {r['between_runs_sd_points']:.2f} | "
              f"[{r['run_level_ci'][0]:.3f}, {r['run_level_ci'][1]:.3f}] | {r['predicted']:.3f} | "
              f"{r['error_points']:+.1f} | {r['reproducible'] or '-'} |")
    print()
    print(f"{s['runs']} runs, {s['speedups']} speedups: two runs' speedups differ by more than "
          f"their CIs allow in {s['pairs_outside_their_cis']} of {s['pairs_compared']} pairs "
          f"(about 5% if the CIs held); between-run sd {s['between_runs_sd_points_median']:.2f} "
          f"points (median) against one run's CI half-width "
          f"{s['one_run_ci_half_width_points_median']:.2f}")
    print(f"decided by one run (mean over the runs): {s['decided_by_one_run_mean']:.1f} of "
          f"{s['speedups']}; reproducibly (every run's CI on the same side of 1): "
          f"{s['reproducible_decisions']}, predicted right {s['reproducible_right']}; by the "
          f"run-level CI: {s['run_level_decisions']}, predicted right {s['run_level_right']}")
    print(f"predicted within 2 points of the runs' mean: {s['within_2_points_of_mean']} of "
          f"{s['speedups']} (mean error {s['error_mean_points']:.2f} points)")
    print(f"each run against its own measurement: within 2 points {s['own_run_within_2_points']} "
          f"of {s['own_run_results']} (mean error {s['own_run_error_mean_points']:.2f} points)")
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"summary": s, "rows": rows}, f, indent=1)
        os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
