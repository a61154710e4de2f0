#!/usr/bin/python3
"""scripts/fidelity_replicates.py on three hand-made fidelity_check runs: which speedups
decide reproducibly, how many pairs of runs disagree beyond their CIs, the run-level CI,
and one clear line for bad input."""
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
SCRIPT = os.path.join(ROOT, "scripts", "fidelity_replicates.py")
NAME = "m_b8_r64_sgd_foreach_in-run.json"
# Per run: backward-fused (measured, low, high), forward-fused (measured, low, high).
RUNS = [((1.02, 1.01, 1.03), (0.99, 0.98, 1.00)),
        ((1.03, 1.02, 1.04), (1.01, 1.00, 1.02)),
        ((1.025, 1.015, 1.035), (0.97, 0.96, 0.98))]
failures = []


def check(what, ok):
    if not ok:
        failures.append(what)


def result(ordering, m, predicted):
    return {"ordering": ordering, "measured_speedup": m[0], "measured_speedup_ci_low": m[1],
            "measured_speedup_ci_high": m[2], "predicted_speedup": predicted}


def run(*args):
    return subprocess.run(["/usr/bin/python3", SCRIPT, *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    dirs = []
    for i, (bf, ff) in enumerate(RUNS):
        d = os.path.join(tmp, f"run{i}")
        os.makedirs(d)
        doc = {"results": [result("eager", (1, 1, 1), 1), result("backward-fused", bf, 1.01),
                           result("forward-fused", ff, 1.002)]}
        json.dump(doc, open(os.path.join(d, NAME), "w"))
        json.dump({"not": "read"}, open(os.path.join(d, NAME[:-5] + "_profile.json"), "w"))
        dirs.append(d)
    out = os.path.join(tmp, "r.json")
    p = run(*dirs, "--json", out)
    check(f"exit 0, got {p.returncode}: {p.stderr}", p.returncode == 0)
    doc = json.load(open(out))
    s, rows = doc["summary"], {r["ordering"]: r for r in doc["rows"]}
    check("two speedups", s["speedups"] == 2)
    # Pairs: backward-fused differ by 0.01, 0.005, 0.005, each inside hypot(0.01, 0.01);
    # forward-fused by 0.02, 0.02, 0.04, each outside it.
    check(f"6 pairs, 3 outside, got {s}", s["pairs_compared"] == 6 and s["pairs_outside_their_cis"] == 3)
    # Decided by one run: backward-fused in all 3, forward-fused only in the third (a bound
    # of exactly 1 does not exclude it): 4 over 3 runs.
    check(f"decided by one run 4/3, got {s['decided_by_one_run_mean']}",
          abs(s["decided_by_one_run_mean"] - 4 / 3) < 1e-9)
    bf, ff = rows["backward-fused"], rows["forward-fused"]
    check("backward-fused reproducibly faster", bf["reproducible"] == "faster")
    check("forward-fused not reproducible", ff["reproducible"] is None)
    # Run-level CI by hand: logs of 1.02, 1.03, 1.025; t(2) = 4.303.
    logs = [math.log(1.02), math.log(1.03), math.log(1.025)]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 2)
    lo, hi = math.exp(mean - 4.303 * sd / math.sqrt(3)), math.exp(mean + 4.303 * sd / math.sqrt(3))
    check(f"run-level CI {bf['run_level_ci']} vs [{lo}, {hi}]",
          abs(bf["run_level_ci"][0] - lo) < 1e-9 and abs(bf["run_level_ci"][1] - hi) < 1e-9)
    check("run-level CI decides backward-fused", bf["run_level_decides"] and lo > 1.012)
    check("forward-fused's run-level CI does not", not ff["run_level_decides"])
    check(f"error of backward-fused in points: {bf['error_points']}",
          abs(bf["error_points"] - 100 * (1.01 - math.exp(mean))) < 1e-9)
    check(f"reproducible 1, right 1: {s}", s["reproducible_decisions"] == 1 and s["reproducible_right"] == 1)
    # Each run against its own measurement: backward-fused 1.01 against 1.02, 1.03, 1.025
    # (-1, -2, -1.5 points), forward-fused 1.002 against 0.99, 1.01, 0.97 (+1.2, -0.8,
    # +3.2): mean |error| 9.7 / 6, five of six within 2 (an error of exactly 2 is).
    check(f"own-run errors: {s}", s["own_run_results"] == 6 and s["own_run_within_2_points"] == 5
          and abs(s["own_run_error_mean_points"] - 9.7 / 6) < 1e-9)
    check(f"own-run line printed: {p.stdout[-200:]!r}",
          "each run against its own measurement: within 2 points 5 of 6 (mean error 1.62 points)"
          in p.stdout)
    # Bad input: one folder; a folder without outputs; a malformed output.
    p = run(dirs[0])
    check(f"one folder: exit 2 and a clear line, got {p.returncode} {p.stderr!r}",
          p.returncode == 2 and "expected at least 2 folders" in p.stderr)
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    p = run(dirs[0], empty)
    check(f"empty folder named, got {p.stderr!r}", p.returncode == 2 and empty in p.stderr)
    open(os.path.join(dirs[1], NAME), "w").write("{")
    p = run(dirs[0], dirs[1])
    check(f"malformed file named, got {p.stderr!r}",
          p.returncode == 2 and os.path.join(dirs[1], NAME) in p.stderr)

for f in failures:
    print("FAILED:", f)
print(f"{'FAILED' if failures else 'passed'}: fidelity_replicates ({len(failures)} failures)")
sys.exit(1 if failures else 0)
