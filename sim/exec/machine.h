#pragma once
// A machine model, read once from a JSON file in models/machines (format: models/machines/
// SCHEMA.md) into typed config that mirrors the file section by section: compute units, the
// cache hierarchy, and main memory (a DRAM system or a fixed-latency stand-in). Every input
// error is raised while it is read, naming the file, the JSON path and the expectation;
// engines take these structs and never read JSON or files (a sweep builds one per grid
// point before its first simulation).
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "compute/compute_config.h"
#include "mem/cache/cache_config.h"
#include "mem/dram/dram_spec.h"

namespace fusim::exec {

// One cache level as written in the file (levels of size 0 included), for reports.
struct CacheLevelSummary {
  std::string name;
  std::int64_t size = 0;
  int line = 64;
  bool shared = false;
};

// {"preset": "fixed", "latency_ns", "bandwidth_gbps"}: an ideal memory for what-ifs and
// hand-checkable tests (mem/cache/fixed_memory.h); bandwidth 0 is unlimited.
struct FixedLatency {
  Tick latency = 0;
  double bandwidth_gbps = 0;  // GB/s (1e9 B/s)
};

struct Machine {
  std::string name;
  compute::UnitKind kind = compute::UnitKind::Cpu;
  std::string file;  // where it was read from (messages, --json "machine")
  compute::ComputeConfig compute;
  // The hierarchy the simulator builds, with the what-if rules applied: a level of size 0
  // is left out (caches.LLC.size=0, "without an LLC"); GPU levels are write-validate unless
  // the file says otherwise (machine.cpp cites why).
  cache::HierarchyConfig caches;
  std::vector<CacheLevelSummary> cache_levels;  // as written, outermost (L1) first
  std::variant<dram::DramSpec, FixedLatency> memory;
  // "host": what `fusim calibrate` measured of the host itself rather than of the model
  // (absent from the presets): the DRAM bandwidth probe (backend/memory_probe.h,
  // dram_probe_gbs) with `threads` threads, the median of its samples during calibration.
  // `run` and `validate` compare the bandwidth their steps had with it. 0: not measured.
  // Likewise the op speed probe (backend/speed_probe.h): microseconds of its mini-step, and
  // the core-to-core probe (backend/memory_probe.h): where the first two cores sat.
  struct Host {
    double dram_triad_gbs = 0;
    int threads = 0;
    double op_probe_us = 0;
    double core_to_core_ns = 0;
  };
  Host host;

  // Size of the last shared level (LLC on CPUs, L2 on GPUs); 0 when the machine has none.
  std::int64_t last_level_bytes() const;
  // The executor's chunk where the options leave it to the machine (SimOptions, chunk_bytes
  // 0): 1 MiB, or the line misses all its cores can have in flight (cores x the fewest MSHRs
  // a core has at any level x line, down to a power of two) where that is more. Two chunks
  // are in flight at once (simulate.h): a chunk much smaller than the MSHRs' reach would
  // bound the memory parallelism the machine file gives (an H100's 132 SMs x 256 x 128 B
  // = 4.1 MiB; at 1 MiB chunks line fidelity streamed a relu at 1.72 TB/s of its 2.66, at
  // 4 MiB 2.20), while on CPUs a chunk is already far more than that (40 x 12 x 64 B).
  std::int64_t default_chunk_bytes() const;
};

// A dotted path into the machine JSON and its new value, as written on a command line:
// {"caches.LLC.size", "32MiB"}, {"dram.channels", "4"}. A path step that names an array of
// objects with "name" members selects the element of that name (caches.levels[name=LLC]);
// "caches.LLC" is short for that. The value is JSON when it parses as JSON (4, true,
// "x"), else a string (32MiB, frfcfs). The parent of the last step must exist; a new key
// is rejected later by the strict reader if the format does not know it.
using Override = std::pair<std::string, std::string>;
void apply_override(nlohmann::json& document, const std::string& file, const Override& o);
// "PATH=VALUE" as given to --set; InputError "--set: expected PATH=VALUE, got ..." else.
Override parse_override(const std::string& text);

// A machine file as read, before parsing: what overrides apply to. A sweep keeps one and
// builds each grid point's Machine from it.
struct MachineDocument {
  nlohmann::json json;
  std::string file;
};

// name_or_path: a preset name (file stem in models/machines, e.g. "h100-sxm5") or a path
// to a JSON file (resolve_preset, core/preset.h).
MachineDocument read_machine_document(const std::string& name_or_path);
// Applies the overrides to a copy of the document, in order, then reads it.
Machine parse_machine(const MachineDocument& document, const std::vector<Override>& overrides = {});
Machine parse_machine(nlohmann::json document, const std::string& file,
                      const std::vector<Override>& overrides = {});
// read_machine_document + parse_machine.
Machine load_machine(const std::string& name_or_path, const std::vector<Override>& overrides = {});

// Folder of the bundled presets: $FUSIM_MACHINES if set, else <source>/models/machines.
std::string machines_dir();
// Stems of the bundled presets, sorted.
std::vector<std::string> machine_presets();

}  // namespace fusim::exec
