#!/usr/bin/python3
"""CTest: a plotting script draws a non-empty PNG from small hand-made inputs.
usage: check_plots.py plot_sweep|plot_timeline|plot_memory SOURCE_DIR WORK_DIR [FUSIM]
With FUSIM, plot_memory also reads real `fusim schedule --json` output, and the peak it
stacks equals the schedule's peak_memory_bytes."""
import json
import os
import subprocess
import sys

import matplotlib.image

script, source, work = sys.argv[1:4]
fusim = sys.argv[4] if len(sys.argv) > 4 else None
os.makedirs(work, exist_ok=True)
tool = os.path.join(source, "scripts", script + ".py")

CSV = """trace,caches.L2.size,dram.channels,ordering,optimizer,step_time_ms,speedup_vs_eager,dram_bytes,llc_hit_rate,peak_memory_bytes,hit_rate.L1,hit_rate.L2
t.json,1048576,1,eager,adam,12,1,1000,0.5,4096,0.25,0.5
t.json,1048576,1,backward-fused,adam,11,1.090909,900,0.5,4096,0.25,0.5
t.json,1048576,2,eager,adam,11,1,1000,0.5,4096,0.25,0.5
t.json,1048576,2,backward-fused,adam,10,1.1,900,0.5,4096,0.25,0.5
t.json,4194304,1,eager,adam,12,1,1000,0.8,4096,0.25,0.8
t.json,4194304,1,backward-fused,adam,8,1.5,700,0.8,4096,0.25,0.8
t.json,4194304,2,eager,adam,11,1,1000,0.8,4096,0.25,0.8
t.json,4194304,2,backward-fused,adam,7,1.571429,700,0.8,4096,0.25,0.8
"""


def run_result(ordering, shift):
    ops = [{"id": i, "kind": k, "layer": i % 2, "step": 0, "stream": s,
            "start_us": 10.0 * i + shift * s, "end_us": 10.0 * i + 9 + shift * s,
            "dram_bytes": 100}
           for i, (k, s) in enumerate([("F", 0), ("F", 0), ("L", 0), ("Bx", 0), ("Bw", 0),
                                       ("U", 1 if ordering != "eager" else 0), ("U", 0)])]
    return {"executor": "sim", "ordering": ordering, "optimizer": "adam", "impl": "foreach",
            "step_time_ms": 0.07, "per_op": ops}


def schedule(ordering):
    tensors = [{"category": "weights", "bytes": 4000, "alloc_op": -1, "free_op": -1},
               {"category": "optimizer_state", "bytes": 8000, "alloc_op": -1, "free_op": -1},
               {"category": "activations", "bytes": 3000, "alloc_op": 0, "free_op": 4},
               {"category": "grads", "bytes": 4000, "alloc_op": 4,
                "free_op": 5 if ordering != "eager" else 6},
               {"category": "temporaries", "bytes": 500, "alloc_op": 5, "free_op": 5},
               {"category": "inputs", "bytes": 100, "alloc_op": -1, "free_op": 2}]
    return {"ordering": ordering, "optimizer": "adam", "steps": 1,
            "ops": [{"id": i} for i in range(7)], "tensors": tensors}


commands = []
if script == "plot_sweep":
    with open(os.path.join(work, "small.csv"), "w") as f:
        f.write(CSV)
    csv_path = os.path.join(work, "small.csv")
    commands.append([tool, csv_path, "--x", "caches.L2.size", "--y", "speedup_vs_eager",
                     "--hue", "ordering", "--facet", "dram.channels",
                     "-o", os.path.join(work, "sweep_line.png")])
    commands.append([tool, csv_path, "--x", "caches.L2.size", "--y", "hit_rate.L2",
                     "--hue", "ordering", "--facet", "dram.channels",
                     "-o", os.path.join(work, "sweep_hit_rate.png")])
    commands.append([tool, csv_path, "--x", "caches.L2.size", "--y", "dram.channels",
                     "--z", "step_time_ms", "--where", "ordering=backward-fused",
                     "-o", os.path.join(work, "sweep_heat.png")])
elif script == "plot_timeline":
    path = os.path.join(work, "runs.json")
    with open(path, "w") as f:
        json.dump({"results": [run_result("backward-fused", 3), run_result("eager", 0)]}, f)
    commands.append([tool, path, "-o", os.path.join(work, "timeline.png")])
elif script == "plot_memory":
    paths = []
    for ordering in ("eager", "backward-fused"):
        paths.append(os.path.join(work, f"schedule_{ordering}.json"))
        with open(paths[-1], "w") as f:
            json.dump(schedule(ordering), f)
    commands.append([tool] + paths + ["-o", os.path.join(work, "memory.png")])
    if fusim:
        sys.path.insert(0, os.path.join(source, "scripts"))
        import plot_memory
        real = []
        for ordering in ("eager", "backward-fused", "forward-fused"):
            real.append(os.path.join(work, f"fusim_schedule_{ordering}.json"))
            out = subprocess.run([fusim, "schedule", "--trace",
                                  os.path.join(source, "traces", "mlp.json"), "--ordering",
                                  ordering, "--optimizer", "adam", "--json"],
                                 check=True, capture_output=True, text=True).stdout
            with open(real[-1], "w") as f:
                f.write(out)
            document = json.loads(out)
            live = plot_memory.live_bytes(document, real[-1])
            steps = len(next(iter(live.values())))
            peak = max(sum(series[i] for series in live.values()) for i in range(steps))
            # The plot is per op; the allocator frees an update's temporaries per pass (one
            # tensor's `denom` before the next one's), so per op they may overlap.
            update_temps = sum(t["alloc_bytes"] for t in document["tensors"]
                               if t["category"] == "temporaries" and t["free_op"] >= 0
                               and document["ops"][t["free_op"]]["kind"] == "U")
            expected = document["peak_memory_bytes"]
            assert expected <= peak <= expected + update_temps, (ordering, peak, expected)
        commands.append([tool] + real + ["-o", os.path.join(work, "memory_fusim.png")])
else:
    sys.exit(f"unknown script {script}")

for command in commands:
    png = command[-1]
    if os.path.exists(png):
        os.remove(png)
    subprocess.run(["/usr/bin/python3"] + command, check=True)
    with open(png, "rb") as f:
        head = f.read(8)
    assert head == b"\x89PNG\r\n\x1a\n", f"{png}: not a PNG"
    image = matplotlib.image.imread(png)
    # Non-empty: a real figure, with more than one colour in it.
    assert image.shape[0] >= 300 and image.shape[1] >= 400, f"{png}: {image.shape}"
    assert image.std() > 0.05, f"{png}: looks blank (std {image.std():.3f})"
    print(f"{png}: {image.shape[1]}x{image.shape[0]}, {os.path.getsize(png)} bytes")

# The sweep plot refuses ambiguous input, naming the column to pin.
if script == "plot_sweep":
    bad = subprocess.run(["/usr/bin/python3", tool, os.path.join(work, "small.csv"), "--x",
                          "caches.L2.size", "--y", "speedup_vs_eager", "--hue", "ordering",
                          "-o", os.path.join(work, "bad.png")], capture_output=True, text=True)
    assert bad.returncode != 0 and "dram.channels" in bad.stderr, bad.stderr
