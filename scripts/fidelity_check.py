#!/usr/bin/python3
"""Issue 16's check: fusim's step-time predictions against real runs on this host.

Captures torchvision models (scripts/capture_trace.py), then for every model x optimizer runs
`fusim validate --json` once per prediction path and summarises: step-time MAPE (all
orderings and the fused ones alone), each speedup's error in points, how many are within 2
points, and whether the faster ordering is predicted right where the measured 95% CI
excludes 1, how many predicted speedups fall inside the measured 95% CI, and the 2-point
count over the results whose CI is +-2 points or narrower. Every validate output is kept in --out (a rerun skips configurations whose
output exists, so an interrupted check resumes); the summary is printed as a Markdown table
and written to OUT/summary.md and OUT/summary.json.

  scripts/fidelity_check.py --fusim build/fusim --out /tmp/fid
  scripts/fidelity_check.py --models resnet18,mobilenet_v2 --optimizers adam --paths analytic
  scripts/fidelity_check.py --out /tmp/fid --paths in-run --repredict other_machine.json
  scripts/fidelity_check.py --out /tmp/fid --paths in-run --repredict m.json --repredict-out /tmp/fid_m
  scripts/fidelity_check.py --out /tmp/fid --paths analytic --repredict recalibrated.json

Paths: analytic (the calibrated op costs of --machine, no profile: what-if machines use the
same model), analytic-run-speed (the same with `--host-speed run`: every op's compute cost
scaled by the host's speed during the steps against calibration, from the op speed probe), in-run (`--profile in-run`: eager's own measured steps are the profile; the
fused orderings are predicted from them) and auto (`--profile auto`: isolated per-op profile
measured before and after the steps). The DRAM column is the run's bandwidth probe (median
GB/s) and its ratio to the calibrated one (the machine file's host.dram_triad_gbs); the
summary's last columns are the MAPE over the results whose ratio is within 15% of 1, and over
those whose op speed probe (a mini-step of small ops, `conditions.op_probe_us` against the
machine file's host.op_probe_us) is too, and the last the MAPE over the results whose two
cores sat as at calibration (`conditions.core_to_core_ns` within 2x of host.core_to_core_ns).
Calibrate
first (`fusim calibrate`) on a quiet machine,
and run this on a quiet machine: the measured side is real time.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = ("resnet18,mobilenet_v2,shufflenet_v2_x1_0,efficientnet_b0,squeezenet1_1,"
                  "regnet_x_400mf,densenet121,mnasnet0_5,googlenet")


def capture(model, batch, resolution, out_dir):
    path = os.path.join(out_dir, "traces", f"{model}_b{batch}_r{resolution}.json")
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    cmd = ["/usr/bin/python3", os.path.join(HERE, "capture_trace.py"), model, "--batch",
           str(batch), "--input-shape", f"3,{resolution},{resolution}", "-o", path]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return path


def profile_file(out_file):
    return out_file[:-len(".json")] + "_profile.json"


def repredict(fusim, trace, machine, doc, out_file, path, args):
    """The results of a validate output predicted again on `machine`: from the profile that
    validate measured and saved (`fusim simulate --profile`) on the profiled paths, from the
    machine file alone on the analytic one (validate's fidelity and simulated steps either
    way): the measured side is the same steps, so two machine models compare without the
    host's noise between two runs."""
    first = doc["results"][0]
    cmd = [fusim, "simulate", "--trace", trace, "--machine", machine, "--optimizer",
           first["optimizer"], "--impl", first["impl"], "--execution", first["execution"],
           "--fidelity", args.fidelity, "--steps", "4",
           "--ordering", ",".join(r["ordering"] for r in doc["results"]), "--json"]
    # The analytic path predicts from the machine file alone: the same simulation as
    # validate's (4 steps, the first a warm-up), compared with the same measured steps.
    if os.path.exists(profile_file(out_file)):
        cmd += ["--profile", profile_file(out_file)]
    with open(machine) as f:
        host = json.load(f).get("host") or {}
    if path == "analytic-run-speed":
        # As `validate --host-speed run` predicted: every compute cost scaled by the op speed
        # probe's median during the steps over MACHINE's calibrated one.
        speed = ((doc.get("conditions") or {}).get("op_probe_us") or {}).get("median")
        if not speed or not host.get("op_probe_us"):
            sys.exit(f"fidelity_check: {out_file}: expected conditions.op_probe_us.median and "
                     f"{machine}: host.op_probe_us for analytic-run-speed")
        cmd += ["--compute-scale", repr(speed / host["op_probe_us"])]
    sim = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    predicted = {r["ordering"]: r["step_time_ms"] for r in sim["results"]}
    eager = predicted.get("eager")
    for r in doc["results"]:
        r["predicted_ms"] = predicted[r["ordering"]]
        r["error_pct"] = 100 * (r["predicted_ms"] - r["measured_ms"]) / r["measured_ms"]
        if eager:
            r["predicted_speedup"] = eager / r["predicted_ms"]
            r["speedup_error_points"] = 100 * (r["predicted_speedup"] - r["measured_speedup"])
    doc["machine"] = machine
    # The host as MACHINE was calibrated: the DRAM and speed ratios compare with it.
    doc["calibrated_dram_triad_gbs"] = host.get("dram_triad_gbs")
    doc["calibrated_op_probe_us"] = host.get("op_probe_us")
    doc["calibrated_core_to_core_ns"] = host.get("core_to_core_ns")
    return doc


def validate(fusim, trace, machine, optimizer, impl, path, args, out_file):
    cmd = [fusim, "validate", "--trace", trace, "--machine", machine, "--optimizer", optimizer,
           "--impl", impl, "--fidelity", args.fidelity, "--measured-steps",
           str(args.measured_steps), "--max-time", str(args.max_time), "--per-op", "--json"]
    if path == "analytic-run-speed":
        cmd += ["--host-speed", "run"]
    elif path != "analytic":
        # The measured profile is kept beside the output, for --repredict.
        cmd += ["--profile", path, "--save-profile", profile_file(out_file)]
    t0 = time.time()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    doc["command"] = " ".join(cmd)
    doc["wall_s"] = round(time.time() - t0, 1)
    return doc


def summarise(rows):
    """rows: (model, optimizer, path, result dict per ordering)."""
    by_path = {}
    for model, optimizer, path, r in rows:
        by_path.setdefault(path, []).append((model, optimizer, r))
    summary = {}
    for path, items in by_path.items():
        errors, fused_errors, speedup_errors, decided, right = [], [], [], 0, 0
        for _, _, r in items:
            e = abs(r["error_pct"])
            errors.append(e)
            if r["ordering"] != "eager":
                fused_errors.append(e)
                if r.get("speedup_error_points") is not None:
                    speedup_errors.append(abs(r["speedup_error_points"]))
                lo, hi = r.get("measured_speedup_ci_low"), r.get("measured_speedup_ci_high")
                if lo is not None and (lo > 1 or hi < 1):
                    decided += 1
                    if (r["predicted_speedup"] > 1) == (lo > 1):
                        right += 1
        n = len(speedup_errors)
        # Measured speedups carry their own noise (a 95% CI of +-5 points after 15 s on a
        # 2-core VM): how many predictions fall inside that interval, and the 2-point test
        # restricted to the results whose interval is at most +-2 points (the ones that
        # can tell a 2-point error from the measurement's).
        inside, tight, tight_within = 0, 0, 0
        for _, _, r in items:
            lo, hi = r.get("measured_speedup_ci_low"), r.get("measured_speedup_ci_high")
            if r["ordering"] == "eager" or lo is None or r.get("predicted_speedup") is None:
                continue
            inside += lo <= r["predicted_speedup"] <= hi
            if (hi - lo) / 2 <= 0.02:
                tight += 1
                tight_within += abs(r["speedup_error_points"]) <= 2
        # The configurations whose DRAM bandwidth during the steps (the run's probe median)
        # was within 15% of the calibrated one: their error is the model's, not the host's
        # bandwidth having moved since calibration (a shared VM's moves by 2x in a minute).
        steady = [abs(r["error_pct"]) for _, _, r in items
                  if r.get("dram_ratio") is not None and abs(r["dram_ratio"] - 1) < 0.15]
        # Those whose op speed probe (a mini-step of small ops) during the steps was within
        # 15% of the calibrated one too: on the VM this is measured on, the host's speed at
        # small ops moves by 1.5x within a minute, which no model of the ops can follow.
        steady_both = [abs(r["error_pct"]) for _, _, r in items
                       if r.get("dram_ratio") is not None and abs(r["dram_ratio"] - 1) < 0.15
                       and r.get("speed_ratio") is not None and abs(r["speed_ratio"] - 1) < 0.15]
        # Those whose two cores sat as at calibration (the core-to-core probe's median within
        # 2x of the calibrated one; validate's note): on a 2-core EPYC VM the vCPUs shared a
        # chiplet's L3 in some runs (12-23 ns) and not in others (64-111 ns), and the steps
        # of the latter ran 14-23% slower than predicted.
        placed = [abs(r["error_pct"]) for _, _, r in items
                  if r.get("placement_ratio") is not None and 0.5 < r["placement_ratio"] < 2]
        summary[path] = {
            "configurations": len(items) // 3 if items else 0,
            "mape_pct": sum(errors) / len(errors) if errors else None,
            "mape_fused_pct": sum(fused_errors) / len(fused_errors) if fused_errors else None,
            "speedup_error_mean_points": sum(speedup_errors) / n if n else None,
            "speedup_error_max_points": max(speedup_errors) if n else None,
            "speedups_within_2_points": sum(1 for x in speedup_errors if x <= 2),
            "speedups": n,
            "speedups_inside_measured_ci": inside,
            "speedups_ci_within_2_points": tight,
            "speedups_within_2_points_where_ci_within_2": tight_within,
            "ci_excludes_1": decided,
            "faster_ordering_right": right,
            "mape_dram_steady_pct": sum(steady) / len(steady) if steady else None,
            "dram_steady_results": len(steady),
            "mape_host_steady_pct": sum(steady_both) / len(steady_both) if steady_both else None,
            "host_steady_results": len(steady_both),
            "mape_placed_as_calibrated_pct": sum(placed) / len(placed) if placed else None,
            "placed_as_calibrated_results": len(placed),
        }
    return summary


def dram_cell(r):
    if r.get("dram_gbs") is None:
        return "-"
    ratio = f" ({r['dram_ratio']:.2f})" if r.get("dram_ratio") is not None else ""
    return f"{r['dram_gbs']:.1f}{ratio}"


def speed_cell(r):
    if r.get("speed_ratio") is None:
        return "-"
    return f"{r['speed_ratio']:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fusim", default=os.path.join(HERE, "..", "build", "fusim"))
    ap.add_argument("--machine", default="host")
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--resolution", type=int, default=64)
    ap.add_argument("--optimizers", default="sgd,adam,adamw")
    ap.add_argument("--impl", default="foreach")
    ap.add_argument("--repredict", metavar="MACHINE",
                    help="measure nothing: predict the results of --out again on MACHINE (the "
                         "profiled paths from the profiles validate saved there, --save-profile; "
                         "the analytic path from MACHINE alone, analytic-run-speed with its compute "
                         "scaled by the run's op speed probe over MACHINE's), and "
                         "summarise those (not written to OUT/summary.*)")
    ap.add_argument("--repredict-out", metavar="DIR",
                    help="with --repredict: write each re-predicted output to DIR under its own "
                         "name (OUT is left as it was), for scripts/fidelity_replicates.py")
    ap.add_argument("--paths", default="analytic,in-run",
                    help="comma list of analytic, analytic-run-speed, in-run, auto, in-step")
    ap.add_argument("--fidelity", default="tensor")
    ap.add_argument("--measured-steps", type=int, default=20)
    ap.add_argument("--max-time", type=float, default=30)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.repredict_out and not args.repredict:
        ap.error("--repredict-out needs --repredict")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    configs = [(m, o, p) for m in args.models.split(",") for o in args.optimizers.split(",")
               for p in args.paths.split(",")]
    for i, (model, optimizer, path) in enumerate(configs):
        name = f"{model}_b{args.batch}_r{args.resolution}_{optimizer}_{args.impl}_{path}.json"
        file = os.path.join(args.out, name)
        if not os.path.exists(file) and args.repredict:
            # --repredict measures nothing: a configuration without an output is left out.
            print(f"fidelity_check: --repredict: no {name} in {args.out}: left out",
                  file=sys.stderr, flush=True)
            continue
        if not os.path.exists(file):
            trace = capture(model, args.batch, args.resolution, args.out)
            print(f"fidelity_check: [{i + 1}/{len(configs)}] {model} {optimizer} {path}",
                  file=sys.stderr, flush=True)
            doc = validate(args.fusim, trace, args.machine, optimizer, args.impl, path, args,
                           file)
            tmp = file + ".tmp"
            with open(tmp, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
            os.replace(tmp, file)
        with open(file) as f:
            doc = json.load(f)
        if args.repredict:
            if path not in ("analytic", "analytic-run-speed") and not os.path.exists(
                    profile_file(file)):
                continue  # outputs from before --save-profile
            trace = capture(model, args.batch, args.resolution, args.out)
            doc = repredict(args.fusim, trace, args.repredict, doc, file, path, args)
            if args.repredict_out:
                os.makedirs(args.repredict_out, exist_ok=True)
                out_file = os.path.join(args.repredict_out, name)
                with open(out_file + ".tmp", "w") as f:
                    json.dump(doc, f, indent=1, sort_keys=True)
                os.replace(out_file + ".tmp", out_file)
        dram = (doc.get("conditions") or {}).get("dram_triad_gbs") or {}
        calibrated = doc.get("calibrated_dram_triad_gbs")
        speed = (doc.get("conditions") or {}).get("op_probe_us") or {}
        calibrated_speed = doc.get("calibrated_op_probe_us")
        c2c = (doc.get("conditions") or {}).get("core_to_core_ns") or {}
        calibrated_c2c = doc.get("calibrated_core_to_core_ns")
        for r in doc["results"]:
            r["dram_gbs"] = dram.get("median")
            r["dram_ratio"] = (dram["median"] / calibrated
                               if dram.get("median") and calibrated else None)
            r["speed_ratio"] = (speed["median"] / calibrated_speed
                                if speed.get("median") and calibrated_speed else None)
            r["placement_ratio"] = (c2c["median"] / calibrated_c2c
                                    if c2c.get("median") and calibrated_c2c else None)
            rows.append((model, optimizer, path, r))
    if args.repredict and not rows:
        print(f"fidelity_check: --repredict: no outputs of these configurations in {args.out}",
              file=sys.stderr)
        sys.exit(2)
    summary = summarise(rows)
    lines = ["| model | optimizer | path | ordering | predicted ms | measured ms | error % | "
             "pred speedup | meas speedup (95% CI) | DRAM GB/s (x calibrated) | "
             "op probe us (x calibrated) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for model, optimizer, path, r in rows:
        ci = (f"{r['measured_speedup']:.3f} [{r['measured_speedup_ci_low']:.3f}, "
              f"{r['measured_speedup_ci_high']:.3f}]" if r.get("measured_speedup") else "-")
        ps = f"{r['predicted_speedup']:.3f}" if r.get("predicted_speedup") else "-"
        lines.append(f"| {model} | {optimizer} | {path} | {r['ordering']} | "
                     f"{r['predicted_ms']:.2f} | {r['measured_ms']:.2f} | "
                     f"{r['error_pct']:+.1f} | {ps} | {ci} | {dram_cell(r)} | {speed_cell(r)} |")
    lines += ["", "| path | configurations | step MAPE % (fused only) | speedup error mean / max "
              "(points) | within 2 points | inside the measured 95% CI | within 2 points "
              "where that CI is +-2 or narrower | CI excludes 1: faster ordering right | "
              "MAPE % where DRAM within 15% of calibrated (results) | MAPE % where DRAM and "
              "op probe within 15% of calibrated (results) | MAPE % where the cores sat as "
              "calibrated: core-to-core within 2x (results) |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for path, s in summary.items():
        fmt = lambda v: "-" if v is None else f"{v:.1f}"
        lines.append(f"| {path} | {s['configurations']} | {fmt(s['mape_pct'])} "
                     f"({fmt(s['mape_fused_pct'])}) | {fmt(s['speedup_error_mean_points'])} / "
                     f"{fmt(s['speedup_error_max_points'])} | {s['speedups_within_2_points']} of "
                     f"{s['speedups']} | {s['speedups_inside_measured_ci']} of {s['speedups']} | "
                     f"{s['speedups_within_2_points_where_ci_within_2']} of "
                     f"{s['speedups_ci_within_2_points']} | "
                     f"{s['faster_ordering_right']} of {s['ci_excludes_1']} | "
                     f"{fmt(s['mape_dram_steady_pct'])} ({s['dram_steady_results']}) | "
                     f"{fmt(s['mape_host_steady_pct'])} ({s['host_steady_results']}) | "
                     f"{fmt(s['mape_placed_as_calibrated_pct'])} "
                     f"({s['placed_as_calibrated_results']}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.repredict:
        return
    for name, content in (("summary.md", text), ("summary.json", json.dumps(summary, indent=1))):
        tmp = os.path.join(args.out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(content)
        os.replace(tmp, os.path.join(args.out, name))


if __name__ == "__main__":
    main()
