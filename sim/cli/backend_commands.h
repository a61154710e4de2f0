#pragma once
// The commands that need libtorch (the real-execution backend). They are built into the
// fusim-backend executable only (sim/cli/backend_main.cpp), which links libtorch and MPI;
// `fusim` (sim/cli/main.cpp) links neither, so that every other command starts in
// milliseconds (loading libtorch's ~300 shared objects took 0.5 s of every command), and
// hands these commands — and a sweep launched as MPI ranks — to fusim-backend, with the
// same arguments: the user sees one CLI. Their descriptions live here so that `fusim
// --help` lists them as fusim-backend does.
namespace fusim::cli {

inline constexpr const char* kRunDescription =
    "Execute a trace's training step on real hardware (libtorch) in each ordering.\n"
    "Runs the same op list the simulator predicts: F/Bx/Bw/U of every layer in the\n"
    "schedule's order, the optimizer update as loop/foreach/fused ATen code with\n"
    "torch.optim's math, in one of two executions: layers (an autograd graph per layer\n"
    "with detached boundaries, every op its own call) or graph (one autograd graph per\n"
    "step, as a PyTorch user's loop: loss.backward(), per-parameter optimizers stepped\n"
    "by gradient-accumulator hooks for backward-fused, before the layer's forward for\n"
    "forward-fused). Orderings are interleaved in blocks, in rounds whose order follows\n"
    "a Williams design (A B C, B C A, C A B, C B A, A C B, B A C: each ordering takes each\n"
    "place, and follows each other, equally often; none always runs first after the\n"
    "host's probes), each block after one re-warm step, threads pinned; sampling goes\n"
    "on until every speedup's 95% CI is within +-(--ci-points) or --max-time is spent;\n"
    "steps disturbed by other processes are dropped and counted. Reported: the median\n"
    "step time, quartiles, the speedup over the eager schedule of the same execution\n"
    "with its 95% interval, both paired by round (the geometric mean of the rounds'\n"
    "ratios of medians, Student's t over batch means of sqrt(rounds) consecutive rounds:\n"
    "the host's drift between rounds cancels, and its slower drift, which rounds share\n"
    "with their neighbours, widens the interval), and notes saying what is inside the\n"
    "noise. Progress goes to stderr.\n"
    "Example:\n"
    "  fusim run --trace resnet18 --ordering all --optimizer adam --measured-steps 20";

inline constexpr const char* kValidateDescription =
    "Predict (simulate on --machine) and measure (run on this host with libtorch) the\n"
    "same orderings of a trace, side by side: predicted ms, measured median ms and\n"
    "quartiles, error %, predicted and measured speedup vs eager (with the measured\n"
    "speedup's 95% interval, paired by round as in `fusim run`), and the MAPE over\n"
    "orderings, per execution (--execution). Sampling, pinning and dropped steps as in\n"
    "`fusim run`. Use a\n"
    "machine measured by `fusim calibrate` for this host. Before each round of blocks an\n"
    "op speed probe times a fixed mini-step of small ops; --host-speed run predicts for\n"
    "the host at the speed it ran them, against the speed calibrate recorded.\n"
    "Example:\n"
    "  fusim calibrate && fusim validate --trace traces/mlp.json --machine host --per-op\n"
    "  fusim validate --trace traces/mlp.json --machine host --host-speed run";

inline constexpr const char* kCalibrateDescription =
    "Measure this host into a machine model (models/machines/SCHEMA.md): cache levels\n"
    "and latencies from a pointer-chase latency-vs-footprint curve (sysfs/CPUID sizes\n"
    "only as hints: a shared level's within one step of the curve, sqrt 2), then from a\n"
    "triad bandwidth-vs-footprint curve at --threads, each point the best of 3 sweeps\n"
    "(a warning when sweeps differ): a shared level the chase finds smaller than listed\n"
    "(a VM's share, which its neighbours move) as far as streams still run at its\n"
    "bandwidth, and past it a large, slow cache the latency curve cannot tell from DRAM\n"
    "where the triad holds a plateau over an octave,\n"
    "MSHRs by Little's law, DRAM read/copy/triad bandwidth with 1 and all threads on\n"
    "arrays 2x beyond the last level and idle latency (the DRAM preset's channel count\n"
    "and data rate: those whose simulated triad, write-allocate reads included, comes\n"
    "nearest the measured one), clock and FMA throughput,\n"
    "per-op-class libtorch throughput (GEMM, conv, elementwise, norm, reduction, pool,\n"
    "attention) and the per-op dispatch overhead.\n"
    "Then per-op-family costs (compute.op_costs, models/machines/SCHEMA.md): linear,\n"
    "conv2d (1x1, 3x3, 5x5, 7x7, strided, depthwise, grouped), norms, pooling,\n"
    "elementwise, softmax, concat and copies, views, attention and cross-entropy, each\n"
    "F/Bx/Bw or L, and every optimizer's update per impl and size, over a grid of\n"
    "shapes, each a small trace (layer norm, the probed layer, a linear head, the loss)\n"
    "whose steps run on the backend's layer ops (the code `run` times) and whose probed\n"
    "op is timed inside those steps (--op-context step; isolated: alone, repeated). Each\n"
    "family is fitted to a fixed cost per op (dispatch, autograd boundary; per kernel for\n"
    "updates, per channel for batch norm and grouped convolutions) plus a shape-dependent\n"
    "efficiency against the roofline, so that each probed op, simulated in its probe's\n"
    "step on this machine model, takes its measured time; families the grid lacks take\n"
    "their kind's median per-op cost (default.F, default.Bx, default.Bw). Each point's\n"
    "residual is kept as an anchor for ops of nearby shapes, its reach chosen by\n"
    "leave-one-out. Each family's fit error is printed (--points FILE: every point).\n"
    "A probe's ops (F, Bx, Bw) are solved together, sharing each simulation.\n"
    "Last, the switch costs (switch.U, switch.after_U): what an update after a forward or\n"
    "backward op, and the op after an update, pay on this host per MiB the update\n"
    "touches, from 12-layer MLPs run eager and backward-fused, and a fixed cost per\n"
    "convolution and batch norm update from a 12-block CNN run the same way, each\n"
    "beyond the difference the same steps make on the fitted model (its caches' part is\n"
    "simulated anyway).\n"
    "An op speed probe (a fixed mini-step of small ops) runs before every op probe:\n"
    "each probe's times are normalized to the host's median speed around them\n"
    "(host.op_probe_us; --no-speed-normalization keeps them as measured), because a\n"
    "shared host's speed at small ops moves by 1.5x within minutes.\n"
    "Progress on stderr (measuring, then solving; 2.5-3 minutes on a 2-core host).\n"
    "The file is checked with the machine reader.\n"
    "Example:\n"
    "  fusim calibrate                  (writes host.json where --machine host finds it)\n"
    "  fusim calibrate --name box -o box.json --no-op-costs\n"
    "  fusim calibrate --points points.csv  (each probe point's measured and fitted cost)\n"
    "  fusim calibrate --threads 1 -o host1.json  (predictions for ops on one core)";

inline constexpr const char* kProfileDescription =
    "Measure every distinct op of a trace (same kind, layer op, attrs, shapes and work:\n"
    "compute/op_signature.h) in isolation on this host, through the backend's own ops\n"
    "(the code `fusim run` times): an eager step creates the gradients and optimizer\n"
    "state, then in the next step each op runs repeatedly from the same state, the\n"
    "first run warming the caches, the median of the others kept. The ops of every\n"
    "ordering are covered. `fusim simulate|validate --profile P.json` then take each\n"
    "op's compute time from it and simulate its memory time in the schedule's context\n"
    "(exec/compute_solver.h says how a measured time is split so that nothing counts\n"
    "twice). Run on a quiet machine, with the threads the prediction is for.\n"
    "--in-step instead times every op inside measured eager steps (as `fusim run`\n"
    "runs them), and --from-run takes those times from a `fusim run --json` file: a\n"
    "step profile, from which --profile makes every eager op take its measured time\n"
    "and predicts the other orderings as the simulated change (exec/profiled_compute.h).\n"
    "Example:\n"
    "  fusim profile --trace traces/mlp.json -o mlp.profile.json\n"
    "  fusim simulate --trace traces/mlp.json --machine host --profile mlp.profile.json\n"
    "  fusim profile --trace traces/mlp.json --in-step --measured-steps 20 -o mlp.step.json\n"
    "  fusim run --trace traces/mlp.json --ordering eager --json > run.json\n"
    "  fusim profile --trace traces/mlp.json --from-run run.json -o mlp.step.json";

}  // namespace fusim::cli
