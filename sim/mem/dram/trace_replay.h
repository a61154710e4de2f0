#pragma once
// Request traces in DRAMsim3's text format ("0xADDR READ|WRITE ARRIVAL_CYCLE" per line,
// arrival in DRAM clock cycles), synthetic trace generators, and the replay driver that
// feeds a trace into a DramSystem through the event queue.
#include <cstdint>
#include <string>
#include <vector>

#include "core/event_queue.h"
#include "mem/dram/dram_system.h"

namespace fusim::dram {

struct TraceRequest {
  mem::Addr addr = 0;
  bool is_write = false;
  Cycle arrival = 0;
  int requester = 0;  // (not in DRAMsim3's format: set by programs that build traces)
};

// Throws InputError naming the file and line for anything that is not a request line
// (blank lines and lines starting with '#' are skipped); arrivals must not go backwards.
std::vector<TraceRequest> read_dramsim3_trace(const std::string& path);
void write_dramsim3_trace(const std::string& path, const std::vector<TraceRequest>& trace);

enum class TracePattern { Stream, Random, Strided };
struct TraceGenOptions {
  TracePattern pattern = TracePattern::Random;
  std::uint64_t reads = 1, writes = 0;  // mix weights: reads / (reads + writes) are reads
  std::uint64_t count = 1000;
  std::uint64_t seed = 1;
  std::uint64_t footprint = std::uint64_t{1} << 30;  // bytes addressed (random, strided wrap)
  std::uint64_t stride = 4096;                       // strided: bytes between requests
  std::uint64_t line = 64;                           // request size and alignment
  Cycle interval = 1;                                // arrival cycles between requests
};
// Deterministic for a given seed (splitmix64, no library distributions).
std::vector<TraceRequest> generate_trace(const TraceGenOptions& options);

struct ReplayResult {
  DramStats stats;  // elapsed = until the last completion (or the --cycles limit)
  Cycle cycles = 0;
  std::uint64_t sent = 0;
};
// How replay_trace drives the DRAM: Events = a feeder on the event queue (each arrival and
// each retry an event); Direct = DirectReplay (direct_replay.h), the same commands at the same
// cycles without those events (whole traces only: no max_cycles); Auto = Direct where
// DramSystem::direct_replay_ok(), there is no max_cycles and no command observer sees
// several channels (whose same-cycle commands only the events put in order), else Events.
enum class ReplayDriver { Auto, Events, Direct };

// Sends each request at its arrival cycle (or as soon as the controller has room, like
// DRAMsim3's trace front end), all `bytes` long, and runs until the trace is done or
// `max_cycles` have passed.
ReplayResult replay_trace(DramSystem& dram, EventQueue& queue,
                          const std::vector<TraceRequest>& trace, Cycle max_cycles = kNoCycle,
                          std::uint32_t bytes = 64, ReplayDriver driver = ReplayDriver::Auto);

}  // namespace fusim::dram
