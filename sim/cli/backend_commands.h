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
    "schedule's order (layer-by-layer autograd with detached boundaries), the optimizer\n"
    "update as loop/foreach/fused ATen code with torch.optim's math. Orderings are\n"
    "interleaved in blocks (A B C A B C ...), each block after one re-warm step; the\n"
    "median step time, quartiles and the speedup over eager with a 95% bootstrap\n"
    "confidence interval are reported. Progress goes to stderr.";

inline constexpr const char* kValidateDescription =
    "Predict (simulate on --machine) and measure (run on this host with libtorch) the\n"
    "same orderings of a trace, side by side: predicted ms, measured median ms and\n"
    "quartiles, error %, predicted and measured speedup vs eager (with the measured\n"
    "speedup's 95% bootstrap interval), and the MAPE over orderings. Use a machine\n"
    "measured by `fusim calibrate` for this host.";

inline constexpr const char* kCalibrateDescription =
    "Measure this host into a machine model (models/machines/SCHEMA.md): cache levels\n"
    "and latencies from a pointer-chase latency-vs-footprint curve (sysfs/CPUID sizes\n"
    "only as hints), DRAM read/copy/triad bandwidth with 1 and all threads and idle\n"
    "latency, clock and FMA throughput, per-op-class libtorch throughput (GEMM, conv,\n"
    "elementwise, norm, reduction, pool, attention) and the per-op dispatch overhead.\n"
    "Progress on stderr; about a minute. The file is checked with the machine reader.";

}  // namespace fusim::cli
