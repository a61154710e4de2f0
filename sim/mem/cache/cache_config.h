#pragma once
// The cache-hierarchy configuration, read strictly from JSON. Machine files embed exactly
// this object under "caches":
//
//   {"clock": "3GHz",                       optional, default "1GHz" (then 1 cycle = 1 ns)
//    "block": "4KiB",                       optional, unit of block fidelity, default "4KiB"
//    "levels": [                            ordered from the cores outwards
//      {"name": "L1", "size": "48KiB", "assoc": 12, "line": 64, "latency_cycles": 5,
//       "policy": "lru",                    optional: lru | tree-plru | random | srrip
//       "shared": false,                    optional: one instance per core (false) or one
//                                           for all cores (true); shared levels come last
//       "mshrs": 16,                        optional: outstanding misses per instance
//       "ports": 1,                         optional: lines accepted per cycle
//       "bytes_per_cycle": 32,              optional, instead of ports: the port's width in
//                                           bytes a cycle (a 2-core EPYC VM's one-thread L3
//                                           triad: ~31 B a cycle, half a 64 B line): ports x
//                                           line if absent
//       "write_policy": "write-back",       optional: write-back | write-through
//       "write_allocate": true,             optional
//       "write_validate": false,            optional: a write miss covering the whole line
//                                           allocates it without reading it from below
//                                           (GPU L2 sectors; NVIDIA L2 keeps byte masks)
//       "inclusion": "non-inclusive",       optional: inclusive | exclusive | non-inclusive,
//                                           relative to the levels above (not for the first)
//       "clock": "3GHz",                    optional, default the hierarchy's clock
//       "seed": 1}]}                        optional, for "random"
//
// Sizes are bytes or strings with a binary unit ("48KiB"). Every error names the file and
// the JSON path (levels[1].assoc) and says what was expected.
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_view.h"
#include "core/time.h"

namespace fusim::cache {

enum class WritePolicy : std::uint8_t { WriteBack, WriteThrough };
// How a level relates to the levels above it (closer to the cores):
//  Inclusive: holds every line they hold; evicting a line back-invalidates their copies.
//  Exclusive: holds no line they hold; it is filled only by their victims (a victim cache),
//             and a hit moves the line up.
//  NonInclusive: filled on misses like inclusive, but evictions leave upper copies alone.
enum class Inclusion : std::uint8_t { NonInclusive, Inclusive, Exclusive };

struct LevelConfig {
  std::string name;
  std::int64_t size_bytes = 0;
  std::int64_t assoc = 0;
  std::int64_t line_bytes = 64;
  std::string policy = "lru";
  std::int64_t latency_cycles = 1;
  bool shared = false;
  std::int64_t mshrs = 16;
  std::int64_t ports = 1;
  std::int64_t bytes_per_cycle = 0;  // 0: ports x line_bytes
  // The bytes the level's port passes a cycle; k lines occupy it ceil(k x line / this) cycles.
  std::int64_t port_bytes_per_cycle() const {
    return bytes_per_cycle > 0 ? bytes_per_cycle : ports * line_bytes;
  }
  // The time `lines` lines occupy the port, rounded up to a picosecond.
  Tick port_time(std::uint64_t lines) const {
    const auto bytes =
        static_cast<std::uint64_t>(clock_period) * lines * static_cast<std::uint64_t>(line_bytes);
    const auto per = static_cast<std::uint64_t>(port_bytes_per_cycle());
    return static_cast<Tick>((bytes + per - 1) / per);
  }
  WritePolicy write_policy = WritePolicy::WriteBack;
  bool write_allocate = true;
  bool write_validate = false;
  Inclusion inclusion = Inclusion::NonInclusive;
  Tick clock_period = 1000;  // ps
  std::uint64_t seed = 1;
  std::string json_path;  // "levels[1]", for messages raised after parsing
};

struct HierarchyConfig {
  std::vector<LevelConfig> levels;
  std::int64_t block_bytes = 4096;
  Tick clock_period = 1000;
  std::string file;  // for messages raised after parsing
};

// Reads {"levels":[...]} (see above). Throws InputError naming file and JSON path.
HierarchyConfig parse_hierarchy_config(const JsonView& json);
HierarchyConfig load_hierarchy_config(const std::string& path);

// "3GHz", "2400MHz" -> period in ps; throws InputError at `json`'s path.
Tick parse_clock(const JsonView& json);

const char* to_string(Inclusion inclusion);
const char* to_string(WritePolicy policy);

}  // namespace fusim::cache
