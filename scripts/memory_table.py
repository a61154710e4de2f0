#!/usr/bin/env python3
"""Markdown table of `fusim memory` for the README (issue 20): per-GPU peak of Llama-3.1-8B
and -70B on H100 80 GB across TP/PP/DP/CP plans, per ordering, and what backward-fused
saves against eager.

    scripts/memory_table.py build/fusim > table.md

Every row is one `fusim memory --json` call per ordering; the command of each row is printed
under the table.
"""
import json
import subprocess
import sys

ORDERINGS = ["eager", "backward-fused", "forward-fused"]
GIB = float(1 << 30)

# (model, tp, pp, dp, cp, global batch, extra options)
PLANS = [
    ("llama-3.1-8b", 1, 1, 8, 1, 8, ["--recompute", "full", "--distributed-optimizer"]),
    ("llama-3.1-8b", 1, 1, 8, 1, 128, ["--recompute", "full", "--distributed-optimizer"]),
    ("llama-3.1-8b", 2, 1, 4, 1, 4, ["--recompute", "selective", "--sequence-parallel",
                                     "--distributed-optimizer"]),
    ("llama-3.1-8b", 2, 1, 4, 1, 128, ["--recompute", "selective", "--sequence-parallel",
                                       "--distributed-optimizer"]),
    ("llama-3.1-8b", 1, 2, 4, 1, 128, ["--recompute", "selective", "--distributed-optimizer"]),
    ("llama-3.1-8b", 2, 1, 2, 2, 2, ["--recompute", "selective", "--sequence-parallel",
                                     "--distributed-optimizer"]),
    ("llama-3.1-70b", 8, 1, 4, 1, 4, ["--recompute", "full", "--sequence-parallel",
                                      "--distributed-optimizer"]),
    ("llama-3.1-70b", 8, 1, 4, 1, 128, ["--recompute", "full", "--sequence-parallel",
                                        "--distributed-optimizer"]),
    ("llama-3.1-70b", 8, 4, 1, 1, 32, ["--recompute", "selective", "--sequence-parallel"]),
    ("llama-3.1-70b", 8, 4, 2, 1, 64, ["--recompute", "selective", "--sequence-parallel",
                                       "--distributed-optimizer"]),
    ("llama-3.1-70b", 8, 4, 2, 1, 64, ["--recompute", "selective", "--sequence-parallel",
                                       "--distributed-optimizer", "--pipeline-schedule",
                                       "interleaved", "--virtual-stages", "5"]),
    ("llama-3.1-70b", 4, 8, 2, 1, 64, ["--recompute", "full", "--sequence-parallel",
                                       "--distributed-optimizer"]),
    ("llama-3.1-70b", 8, 2, 2, 2, 4, ["--recompute", "selective", "--sequence-parallel",
                                      "--distributed-optimizer"]),
]


def command(fusim, plan, ordering):
    model, tp, pp, dp, cp, g, extra = plan
    return [fusim, "memory", "--model", model, "--seq", "8192", "--tp", str(tp), "--pp",
            str(pp), "--dp", str(dp), "--cp", str(cp), "--microbatch", "1", "--global-batch",
            str(g), "--gpu", "h100-sxm5", "--ordering", ordering, "--json"] + extra


def main():
    fusim = sys.argv[1] if len(sys.argv) > 1 else "build/fusim"
    print("| model | TP | PP | DP | CP | m | recompute | schedule | eager GiB | backward-fused GiB"
          " | forward-fused GiB | backward-fused saves | fits (eager / bwd) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    commands = []
    for plan in PLANS:
        model, tp, pp, dp, cp, g, extra = plan
        results = {}
        for ordering in ORDERINGS:
            cmd = command(fusim, plan, ordering)
            if ordering == "eager":
                commands.append(" ".join(cmd[1:]))
            results[ordering] = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                                          text=True).stdout)
        e, b, f = (results[o] for o in ORDERINGS)
        gib = lambda r: r["max_total_bytes"] / GIB
        rc = extra[extra.index("--recompute") + 1]
        sched = e["plan"]["pipeline_schedule"]
        if sched == "interleaved":
            sched += " v=%d" % e["plan"]["virtual_stages"]
        saved = gib(e) - gib(b)
        print("| %s | %d | %d | %d | %d | %d | %s | %s | %.1f | %.1f | %.1f | %.1f GiB (%.0f%%) "
              "| %s / %s |" % (model, tp, pp, dp, cp, e["plan"]["microbatches"], rc, sched,
                               gib(e), gib(b), gib(f), saved, 100 * saved / gib(e),
                               "yes" if e["fits"] else "no", "yes" if b["fits"] else "no"))
    print()
    print("Rows, in order (`--ordering backward-fused|forward-fused` for the other columns):")
    print()
    print("```sh")
    for c in commands:
        print("fusim " + c.replace(" --ordering eager", ""))
    print("```")


if __name__ == "__main__":
    main()
