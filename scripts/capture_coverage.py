#!/usr/bin/python3
"""Capture coverage: every torchvision 0.14 classification model (and the bundled and
user-module factories) through scripts/capture_trace.py, `fusim trace validate` and, for
the models that fit this machine, one training step in the libtorch backend.

  scripts/capture_coverage.py --fusim build/fusim --readme README.md   # the README's table
  scripts/capture_coverage.py --fusim build/fusim --models resnet18,swin_t --no-run

Each model is captured at batch 2 and 224x224 (Inception v3: 299x299, the least its
auxiliary classifier accepts in training mode) by capture_trace.py's main in this process
(models are built with meta parameters: no memory, no init). A row is valid when `fusim trace validate` (via
`trace show`) accepts the trace and fusim's parameter count of the file equals PyTorch's
sum(p.numel()) of the module. "runs in backend" is `fusim run` (eager, Adam, 2 measured
steps, no warm-up, one thread: RUN_ARGS) on a second capture at batch 2 and a small
resolution (RUN_SIZE), for models up to --run-max-params parameters; "-" where not run.
The last lines on stderr list every layer kind the captures emitted and those that no
backend run executed.
The table is Markdown, one row per model (torchvision's, then EXTRA); -o writes it to a
file, --readme replaces the block between the BEGIN and END markers of a Markdown file;
--json writes the rows; --rows FILE starts from the rows of an earlier --json and re-runs
only the --models given (none without it), so that the README's table can be refreshed
for a few models without the hour the whole run takes. Exit code 1 when a model fails to
capture or validate.
"""
import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURE = os.path.join(HERE, "capture_trace.py")

# (model, capture arguments); torchvision models get --batch 2 and their input size.
EXTRA = [
    ("fusim_models:mlp", ["--input-shape", "784"]),
    ("fusim_models:bert_tiny", ["--seq", "16"]),
    ("fusim_models:gpt2_tiny", ["--seq", "16"]),
    ("fusim_models:bert_base", ["--seq", "128"]),
    ("fusim_models:gpt2_small", ["--seq", "128"]),
    ("fusim_models:transformer_encoder_classifier", ["--seq", "32"]),
    ("fusim_models:mha_classifier", ["--input-shape", "32,64"]),
    ("fusim_models:lstm_classifier", ["--seq", "32"]),
    ("fusim_models:gru_classifier", ["--seq", "32"]),
    ("fusim_models:embedding_bag_classifier", ["--seq", "32"]),
]
SIZE = {"inception_v3": 299}
# Backend runs: the smallest input the model takes in training mode (vit/maxvit are built
# for 224 only; inception's auxiliary classifier needs 299).
RUN_SIZE = {"vit_b_16": 224, "vit_b_32": 224, "vit_l_16": 224, "vit_l_32": 224,
            "vit_h_14": 224, "maxvit_t": 224, "inception_v3": 299, "alexnet": 64,
            "squeezenet1_0": 64, "squeezenet1_1": 64}


def torchvision_models():
    import torchvision.models as tvm
    return sorted(tvm.list_models(module=tvm))


def capture(model, args, out):
    """scripts/capture_trace.py's main, in this process (models are built on meta tensors:
    no memory held, and one torch import for the whole table): (exit code, its last line
    on stderr, the command)."""
    import capture_trace
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            rc = capture_trace.main([CAPTURE, model] + args + ["-o", out])
        except SystemExit as e:  # usage errors
            rc = e.code
    line = (err.getvalue().strip().splitlines() or [""])[-1]
    return rc, line, " ".join(["scripts/capture_trace.py", model] + args)


def execute(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        fail(f"{cmd[0]}: cannot run it: {e.strerror}")


def torch_params(line):
    """sum(p.numel()) of the module, from capture_trace.py's last line
    ('FILE: NAME, L layers, P parameters (PATH path)'): PyTorch's count, beside which
    fusim's own count of the trace file (`trace show`) is checked."""
    m = re.search(r", (\d+) layers, (\d+) parameters \(", line)
    return int(m.group(2)) if m else None


def show(fusim, path):
    r = execute([fusim, "trace", "show", path, "--json"])
    if r.returncode != 0:
        return None, r.stderr.strip()
    return json.loads(r.stdout)["totals"], ""


RUN_ARGS = ["--ordering", "eager", "--optimizer", "adam", "--measured-steps", "2", "--warmup",
            "0", "--steps-per-block", "2", "--max-time", "0", "--threads", "1"]


def run_step(fusim, path):
    r = execute([fusim, "run", "--trace", path] + RUN_ARGS + ["--json"])
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def one(fusim, model, args, run_args, tmp, run_max_params, do_run):
    row = {"model": model, "command": None}
    out = os.path.join(tmp, model.replace(":", "_") + ".json")
    rc, line, command = capture(model, args, out)
    row["command"] = command
    if rc != 0:
        row.update(path="fails", error=line)
        return row
    with open(out) as f:
        trace = json.load(f)
    row["path"] = trace["capture"]["path"]
    row["kinds"] = sorted({l["op"] for l in trace["layers"]})
    totals, err = show(fusim, out)
    if totals is None:
        row.update(valid=False, error=err)
        return row
    row["params_torch"] = torch_params(line)
    if totals["params"] != row["params_torch"]:
        row.update(valid=False, error=f"fusim counts {totals['params']} parameters in the "
                                       f"trace, sum(p.numel()) is {row['params_torch']}")
        return row
    row.update(valid=True, layers=totals["layers"], params=totals["params"],
               gflops_fwd=totals["flops_fwd"] / 1e9,
               gflops_step=(totals["flops_fwd"] + totals["flops_bwd"]) / 1e9)
    if not do_run or run_args is None or totals["params"] > run_max_params:
        row["backend"] = None
        return row
    small = os.path.join(tmp, model.replace(":", "_") + ".small.json")
    rc, line, small_cmd = capture(model, run_args, small)
    if rc != 0:
        row.update(backend=False, backend_error=line)
        return row
    with open(small) as f:
        row["backend_kinds"] = sorted({l["op"] for l in json.load(f)["layers"]})
    ok, last = run_step(fusim, small)
    row["backend"] = ok
    row["backend_command"] = small_cmd
    if not ok:
        row["backend_error"] = last
    return row


def ordered(order, earlier, fresh):
    merged = dict(earlier, **fresh)
    return [merged[m] for m in order if m in merged]


def table(rows):
    lines = ["| model | path | layers | params | GFLOPs fwd | GFLOPs step | runs in backend |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        if r.get("path") == "fails" or not r.get("valid", False):
            lines.append(f"| {r['model']} | {r.get('path', '-')} | - | - | - | - | "
                         f"fails: {r.get('error', '')[:120]} |")
            continue
        run = {None: "-", True: "yes", False: "no"}[r["backend"]]
        if r["backend"] is not None:
            run += f" (`{r['backend_command'].split(' ', 2)[2]}`)"
        lines.append(f"| {r['model']} | {r['path']} | {r['layers']} | {r['params']:,} | "
                     f"{r['gflops_fwd']:.2f} | {r['gflops_step']:.2f} | {run} |")
    return "\n".join(lines) + "\n"


BEGIN = "<!-- capture coverage: scripts/capture_coverage.py --readme; begin -->"
END = "<!-- capture coverage: end -->"


def fail(message):
    print(f"capture_coverage.py: {message}", file=sys.stderr)
    sys.exit(2)


def write_atomic(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def replace_block(path, text):
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        fail(f"{path}: expected the markers {BEGIN} and {END}")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    write_atomic(path, head + BEGIN + "\n" + text + END + tail)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fusim", required=True, help="the fusim binary")
    ap.add_argument("--models", help="comma-separated subset (default: all)")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--no-run", action="store_true", help="skip the backend runs")
    ap.add_argument("--run-max-params", type=int, default=100_000_000,
                    help="largest model run in the backend (default 100M parameters)")
    ap.add_argument("-o", "--output", help="Markdown table (default: stdout)")
    ap.add_argument("--readme", help="Markdown file whose coverage block to replace")
    ap.add_argument("--json", help="also write the rows as JSON")
    ap.add_argument("--rows", help="rows of an earlier --json: re-run only --models")
    args = ap.parse_args(argv[1:])
    models = [(m, ["--batch", str(args.batch), "--input-shape",
                   f"3,{SIZE.get(m, 224)},{SIZE.get(m, 224)}"],
               ["--batch", "2", "--input-shape", f"3,{RUN_SIZE.get(m, 32)},{RUN_SIZE.get(m, 32)}"])
              for m in torchvision_models()]
    models += [(m, ["--batch", str(args.batch)] + a, ["--batch", "2"] + a) for m, a in EXTRA]
    order = [m[0] for m in models]
    if args.models:
        wanted = args.models.split(",")
        unknown = sorted(set(wanted) - set(order))
        if unknown:
            fail(f"--models: expected names from the table, got {', '.join(unknown)}")
        models = [m for m in models if m[0] in wanted]
    earlier = {}
    if args.rows:
        try:
            with open(args.rows) as f:
                earlier = {r["model"]: r for r in json.load(f)}
        except (OSError, ValueError, KeyError, TypeError) as e:
            fail(f"{args.rows}: expected the rows of --json, got {type(e).__name__}: {e}")
        if not args.models:
            models = []
    fresh = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model, cap_args, run_args in models:
            start = time.monotonic()
            row = one(args.fusim, model, cap_args, run_args, tmp, args.run_max_params,
                      not args.no_run)
            row["seconds"] = round(time.monotonic() - start, 1)
            fresh[model] = row
            status = row.get("error") or row.get("backend_error") or "ok"
            print(f"{model}: {row.get('path')} {status[:200]} ({row['seconds']} s)",
                  file=sys.stderr, flush=True)
            if args.json:  # after every model: an interrupted run keeps what it did
                write_atomic(args.json, json.dumps(ordered(order, earlier, fresh), indent=1)
                             + "\n")
    rows = ordered(order, earlier, fresh)
    ran = [r for r in rows if r.get("backend") is not None]
    print(f"capture_coverage.py: {len(rows)} models: "
          f"{sum(r.get('path') not in (None, 'fails') for r in rows)} captured, "
          f"{sum(bool(r.get('valid')) for r in rows)} validated, "
          f"{sum(bool(r.get('backend')) for r in ran)} of {len(ran)} run in the backend",
          file=sys.stderr)
    # Point 4 of issue 18: every layer kind the capture emitted ran in some backend step.
    emitted = sorted({k for r in rows for k in r.get("kinds", [])})
    ran_kinds = {k for r in ran if r.get("backend") for k in r.get("backend_kinds", [])}
    print(f"capture_coverage.py: {len(emitted)} layer kinds emitted: {' '.join(emitted)}; "
          f"not in any step run in the backend: "
          f"{' '.join(k for k in emitted if k not in ran_kinds) or 'none'}", file=sys.stderr)
    text = table(rows)
    if args.output:
        write_atomic(args.output, text)
    if args.readme:
        replace_block(args.readme, text)
    if not args.output and not args.readme:
        sys.stdout.write(text)
    if args.json:
        write_atomic(args.json, json.dumps(rows, indent=1) + "\n")
    return 0 if all(r.get("valid") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
