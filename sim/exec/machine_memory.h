#pragma once
// The memory side of a machine as the simulator builds it: the cache hierarchy config (with
// the what-if rules: a level of size 0 is left out; GPU levels are write-validate) and main
// memory (the DRAM controller, or the fixed-latency stub).
#include <memory>

#include "core/event_queue.h"
#include "exec/machine.h"
#include "mem/cache/cache_config.h"
#include "mem/memory_port.h"

namespace fusim::exec {

// Main memory of a machine: the DRAM controller, or {"preset": "fixed", "latency_ns",
// "bandwidth_gbps"} (an ideal memory for what-ifs and hand-checkable tests).
std::unique_ptr<mem::MemoryPort> make_main_memory(const Machine& machine, EventQueue& queue);
// The hierarchy of a machine; levels of size 0 are left out (what-if "no LLC").
cache::HierarchyConfig hierarchy_config(const Machine& machine);
// Checks the caches and dram sections with their own readers (load_machine calls it).
void check_memory_sections(const Machine& machine);

}  // namespace fusim::exec
