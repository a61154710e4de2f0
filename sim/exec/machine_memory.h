#pragma once
// The memory side of a machine as the simulator builds it from the typed config: main
// memory (the DRAM system, or the fixed-latency stand-in) and the bandwidth the analytic
// GEMM re-reads queue on.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "exec/machine.h"
#include "exec/simulate.h"
#include "mem/memory_port.h"

namespace fusim::exec {

// Main memory and how the watchdog sees it (requests in flight, a state dump).
struct MainMemory {
  std::unique_ptr<mem::MemoryPort> port;
  std::function<bool()> busy;
  std::function<std::string()> describe;
  // The DRAM system's reads per requester so far, indexed by requester (null for the
  // fixed-latency stand-in).
  std::function<std::vector<DramRequesterReads>()> requesters;
};

// The DRAM system (one lookahead wake-up for all channels, dram_system.h) or a
// FixedLatencyMemory. Cannot fail: parse_machine checked everything it reads.
MainMemory make_main_memory(const Machine& machine, EventQueue& queue);

// Bytes per picosecond long sequential streams sustain on main memory; 0 = unlimited.
double streaming_bytes_per_ps(const Machine& machine);

}  // namespace fusim::exec
