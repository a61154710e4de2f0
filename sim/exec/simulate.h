#pragma once
// The simulated executor: runs a schedule (ordering x optimizer x impl, K steps) on a machine
// model as one discrete-event simulation on a fusim::EventQueue, and reports a RunResult.
//
// How an op runs (sim/compute/access_program.h gives its work):
//  - Lanes. CPU: cores form cores/threads_per_op groups; stream s runs on group s mod groups,
//    in issue order (one PyTorch thread dispatching ops to its intra-op pool). GPU: each
//    stream is in order; kernels of different streams run concurrently on disjoint SMs
//    (a kernel takes min(its grid blocks, free SMs) SMs, waits if none is free; at most
//    max_concurrent_kernels at once).
//  - Dispatch. CPU: an op costs kernels x dispatch_overhead before its work (the host runs
//    it). GPU: one host thread launches every kernel in issue order without waiting for the
//    GPU (asynchronous launches), one per dispatch_overhead; an op's work starts no earlier
//    than its first launch + launch_latency and ends no earlier than its last launch +
//    launch_latency, so short kernels become launch bound as on real GPUs.
//  - Work. Passes run one after another. A pass is cut into chunks of about chunk_bytes of
//    its streams (every range advances by the same fraction per chunk, so tensors of a pass
//    are interleaved); a chunk's slice of every range is split evenly across the op's cores
//    and issued through the cache hierarchy (timed path: ports, MSHRs, DRAM). Compute of a
//    chunk (its share of the pass's FLOPs at the op class's achieved rate on the op's
//    cores) starts when its data is in and the previous chunk's compute is done; the memory
//    of chunk j is issued once chunk j-1's memory is done and chunk j-2's compute is done
//    (double buffering), so compute and memory overlap and the slower one sets the pace.
//    Concurrent ops (another stream or core group) contend in the shared cache level, in
//    the MSHRs of shared levels and in the DRAM controller.
//  - Cache contents persist across ops and steps. GPU cache levels are write-validate (a
//    store covering a whole line reads nothing from DRAM; machine.cpp), CPU levels
//    read for ownership.
//  - Fidelity: line (every 64 B line) or block (e.g. 4 KiB units, for sweeps); a block miss
//    takes the MSHRs of the lines it covers (sim/mem/cache/hierarchy.h), and chunks and
//    cores are cut at whole units, so both describe the same machine (tests/exec/
//    test_fidelity.cpp states the measured agreement); or tensor (for sweeps and large
//    models: no lines move; a chunk is one flow through range residency per cache level
//    and bandwidth pipes, main memory the DRAM controller's own bandwidth-latency curves:
//    exec/tensor_side.h, sim/mem/residency; tests/exec/test_tensor_fidelity.cpp states the
//    agreement). Same compute, chunking, double buffering and GEMM re-reads in all three.
// Steps. Step s lasts from the start of its first forward op (in issue order,
// schedule::step_openers) to the start of step s+1's; the first `warmup_steps` are excluded, and so
// is the last step when nothing follows it (forward-fused: the final flush of pending updates), and
// with forward-mode layers also step `warmup_steps` when steps allow (its window runs the
// first updates ever, the optimizer state's compulsory misses), by
// subtracting stats snapshots taken at those boundaries. The step time is
// summarize_steps() of the measured steps (run_result.h), as for measured runs.
// Deterministic: same inputs, same result.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/machine.h"
#include "exec/run_result.h"
#include "schedule/schedule.h"
#include "workload/trace.h"

namespace fusim::residency {
class DramCurveStore;
}

namespace fusim::exec {

enum class Fidelity { Line, Block, Tensor };
// "line" | "block" | "tensor", else InputError
Fidelity parse_fidelity_name(const std::string& name);
const char* to_string(Fidelity fidelity);

struct SimOptions {
  Fidelity fidelity = Fidelity::Line;
  std::int64_t block_bytes = 4096;  // unit of block fidelity
  // Interleaving granularity of an op's streams; 0: the machine's (Machine::
  // default_chunk_bytes: 1 MiB, more on GPUs whose MSHRs reach further).
  std::int64_t chunk_bytes = 0;
  int warmup_steps = 1;
  // Tensor fidelity: the DRAM curves, shared by every simulation of a command or sweep
  // (thread-safe). Null: this simulation measures them, or reads them from the curve
  // cache folder ($FUSIM_CACHE_DIR, else the XDG cache folder: dram_curve_file.h).
  std::shared_ptr<residency::DramCurveStore> dram_curves;
  // Tensor fidelity: cache levels keep bytes by their sets' expected counts
  // (residency::Associativity::SetConflicts, set_conflicts.h) instead of as fully
  // associative LRUs of their size.
  bool tensor_set_conflicts = false;
  // Compute time of each schedule op by its id, from a measured profile (exec/op_profile.h);
  // -1 (or an id past the end) keeps the machine's cost model. Memory is simulated either way.
  std::vector<Tick> op_compute;
  // Time each op spends before its work by its id (absent or 0: none), on top of its
  // dispatch: not overlapped with its memory traffic, so it adds to the op's time one for
  // one (a profile's in-context correction, exec/op_profile.h).
  std::vector<Tick> op_delay;
  // Called with the fraction of ops finished (0..1), at most about 200 times per run.
  std::function<void(double)> progress;
  // Keep SimulationDetail::dram, the DRAM bytes per 1 us bucket, for a timeline's counter
  // track: half a million buckets per resnet50 step on a CPU preset, whose growth cost 10%
  // of a tensor-fidelity run (perf), so only a timeline asks for it.
  bool dram_series = false;
};

// Main memory's reads of one requester (core / SM) over the measured steps: how many
// completed and their summed latency, arrival at the DRAM controller to the data (the
// DRAM scheduler's doing). DRAM machines in line and block fidelity only: tensor fidelity
// and fixed-latency memory send no request to a controller.
struct DramRequesterReads {
  int requester = 0;
  std::int64_t reads = 0;
  Tick latency = 0;  // summed over the reads
};

// Extra outputs for timelines and detailed reports.
struct SimulationDetail {
  RunResult result;
  DramSeries dram;  // bytes sent to DRAM per 1 us bucket (timelines; SimOptions::dram_series)
  std::int64_t events = 0;                          // events executed (speed reports)
  std::string last_level;                           // "LLC" or "L2"
  std::vector<DramRequesterReads> dram_requesters;  // those with reads, by requester
};

RunResult simulate(const workload::Trace& trace, const schedule::Schedule& schedule,
                   const Machine& machine, const SimOptions& options);
SimulationDetail simulate_detailed(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const Machine& machine, const SimOptions& options);

}  // namespace fusim::exec
