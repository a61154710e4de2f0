#!/usr/bin/env python3
"""Held-out check of `fusim simulate` with a parallel plan against published Megatron-LM
iteration times on DGX A100 (issue 19, last 'Done means' point).

    scripts/megatron_check.py [FUSIM] [--rows N,N,...] [--table1] [--fidelity F]

FUSIM defaults to build/fusim. The published numbers and their sources are in
docs/heldout/megatron_a100.json; nothing in fusim is fitted to them. Each row is predicted
with one `fusim trace gen` (the model at its microbatch) and one `fusim simulate --tp ...
--cluster dgx-a100 --ordering eager --optimizer adam --impl fused --json` (Megatron-LM's
fp16 mixed precision and fused Adam, eager optimizer step after the flush); the script
prints predicted against published with the error, and where the time goes: the stages'
mean busy, bubble and exposed-communication time, and the busy time's throughput (model
FLOPs of Korthikanti et al. 2022, Sec. 6, per GPU over the busy time) next to the A100's
312 TFLOP/s, so that an error can be put on compute efficiency, communication or bubble.

--table1 adds Narayanan et al. 2021's Table 1 (weak scaling): its microbatch size is not
published, so those rows run at microbatch 1 on the 1F1B schedule with full recompute (the
paper's Eq. 3 counts the recomputed forward), stated as assumptions in the output.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "docs", "heldout", "megatron_a100.json")
A100_PEAK = 312e12  # dense fp16 tensor-core FLOP/s (A100 whitepaper, Table 1)
SEQ, VOCAB = 2048, 51200


def model_flops(batch, layers, hidden, seq=SEQ, vocab=VOCAB):
    """Korthikanti et al. 2022, Sec. 6: model FLOPs per iteration (no recomputation),
    72 B s l h^2 (1 + s / (6 h) + V / (12 h l))."""
    return 72 * batch * seq * layers * hidden ** 2 * (
        1 + seq / (6 * hidden) + vocab / (12 * hidden * layers))


PRESET_DIMS = {"gpt-22b": (48, 6144), "gpt3-175b": (96, 12288), "gpt-530b": (105, 20480),
               "gpt-1t": (128, 25600)}


def run(cmd):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, time.time() - t0, p.stderr.strip().splitlines()[-1] if p.stderr else "?"
    return p.stdout, time.time() - t0, ""


def predict(fusim, workdir, gen_args, row, fidelity):
    trace = os.path.join(workdir, "trace.json")
    out, _, err = run([fusim, "trace", "gen"] + gen_args + ["--batch", str(row["microbatch"]),
                                                            "-o", trace])
    if out is None:
        return None, 0, "trace gen: " + err
    cmd = [fusim, "simulate", "--trace", trace, "--tp", str(row["tp"]), "--pp", str(row["pp"]),
           "--dp", str(row.get("dp", 1)), "--global-batch", str(row["global_batch"]),
           "--recompute", row["recompute"], "--cluster", "dgx-a100", "--ordering", "eager",
           "--optimizer", "adam", "--impl", "fused", "--json"]
    if row.get("virtual_stages", 1) > 1:
        cmd += ["--pipeline-schedule", "interleaved", "--virtual-stages",
                str(row["virtual_stages"])]
    if row.get("sequence_parallel"):
        cmd += ["--sequence-parallel"]
    if fidelity:
        cmd += ["--fidelity", fidelity]
    out, wall, err = run(cmd)
    if out is None:
        return None, wall, err
    return json.loads(out)["results"][0], wall, " ".join(cmd[1:])


def report(name, row, layers, hidden, published_s, res, wall, note):
    gpus = row["tp"] * row["pp"] * row.get("dp", 1)
    flops = model_flops(row["global_batch"], layers, hidden)
    if res is None:
        print(f"| {name} | {published_s:.2f} | - | - | - | - | - | - | {note} |")
        return None
    step = res["step_time_ms"] / 1e3
    stages = res["stages"]
    mean = lambda k: sum(s[k] for s in stages) / len(stages) / 1e3
    busy, bubble, comm = mean("busy_ms"), mean("bubble_ms"), mean("exposed_communication_ms")
    busy_tflops = flops / gpus / busy / 1e12 if busy > 0 else float("nan")
    err = 100 * (step - published_s) / published_s
    print(f"| {name} | {published_s:.2f} | {step:.2f} | {err:+.1f}% | "
          f"{100 * flops / gpus / step / A100_PEAK:.1f}% | {busy:.2f} | {bubble:.2f} | "
          f"{comm:.2f} | {busy_tflops:.0f} | {wall:.0f} s |")
    return err


def main():
    args = sys.argv[1:]
    fusim = "build/fusim"
    if args and not args[0].startswith("--"):
        fusim = args.pop(0)
    table1 = "--table1" in args
    rows_wanted = None
    fidelity = None
    for i, a in enumerate(args):
        if a == "--rows":
            rows_wanted = {int(x) for x in args[i + 1].split(",")}
        if a == "--fidelity":
            fidelity = args[i + 1]
    data = json.load(open(DATA))
    print("Predicted (fusim simulate --cluster dgx-a100) against published Megatron-LM "
          "iteration times; MFU from the predicted time. busy / bubble / comm: the stages' "
          "mean per step (s); busy TFLOP/s: model FLOPs per GPU over the busy time "
          "(A100 peak 312).\n")
    print("| row | published s | predicted s | error | predicted MFU | busy s | bubble s | "
          "exposed comm s | busy TFLOP/s | wall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    errors, commands = [], []
    with tempfile.TemporaryDirectory() as work:
        for i, row in enumerate(data["korthikanti2022"]):
            if rows_wanted is not None and i not in rows_wanted:
                continue
            layers, hidden = PRESET_DIMS[row["model"]]
            name = (f"{i}: {row['model']} tp{row['tp']} pp{row['pp']} v{row['virtual_stages']} "
                    f"b{row['microbatch']} G{row['global_batch']} {row['recompute']}"
                    f"{' +SP' if row['sequence_parallel'] else ''}")
            res, wall, note = predict(fusim, work, [row["model"]], row, fidelity)
            e = report(name, row, layers, hidden, row["iteration_s"], res, wall, note)
            if e is not None:
                errors.append(abs(e))
                commands.append(note)
        if table1:
            for j, t in enumerate(data["narayanan2021_table1"]):
                dp = t["gpus"] // (t["tp"] * t["pp"])
                row = {"tp": t["tp"], "pp": t["pp"], "dp": dp, "global_batch": t["global_batch"],
                       "microbatch": 1, "recompute": "full", "sequence_parallel": False}
                # Eq. 3 of Narayanan et al. (with the recomputed forward) = 4/3 x model FLOPs
                # at these sizes; time = F / (n X).
                f3 = 96 * t["global_batch"] * SEQ * t["layers"] * t["hidden"] ** 2 * (
                    1 + SEQ / (6 * t["hidden"]) + VOCAB / (16 * t["layers"] * t["hidden"]))
                published = f3 / (t["gpus"] * t["tflops_per_gpu"] * 1e12)
                gen = ["gpt", "--layers", str(t["layers"]), "--hidden", str(t["hidden"]),
                       "--heads", str(t["heads"]), "--vocab", str(VOCAB), "--seq", str(SEQ),
                       "--dtype", "float16", "--tied-embeddings"]
                name = (f"T1.{j}: {t['params_b']}B tp{t['tp']} pp{t['pp']} dp{dp} "
                        f"G{t['global_batch']} (b=1 assumed)")
                res, wall, note = predict(fusim, work, gen, row, fidelity)
                report(name, row, t["layers"], t["hidden"], published, res, wall, note)
    if errors:
        print(f"\nKorthikanti rows: mean |error| {sum(errors) / len(errors):.1f}%, "
              f"max {max(errors):.1f}% over {len(errors)} rows (goal: 10%).")
    print("\nCommands (after `fusim trace gen MODEL --batch B -o trace.json`):")
    for c in commands:
        print("    fusim " + c)


if __name__ == "__main__":
    main()
