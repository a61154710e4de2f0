#pragma once
// The memory side of a machine as the simulator builds it from the typed config: main
// memory (the DRAM system, or the fixed-latency stand-in) and the bandwidth the analytic
// GEMM re-reads queue on.
#include <memory>

#include "core/event_queue.h"
#include "exec/machine.h"
#include "mem/memory_port.h"

namespace fusim::exec {

// The DRAM system (one lookahead wake-up for all channels, dram_system.h) or a
// FixedLatencyMemory. Cannot fail: parse_machine checked everything it reads.
std::unique_ptr<mem::MemoryPort> make_main_memory(const Machine& machine, EventQueue& queue);

// Bytes per picosecond long sequential streams sustain on main memory; 0 = unlimited.
double streaming_bytes_per_ps(const Machine& machine);

}  // namespace fusim::exec
