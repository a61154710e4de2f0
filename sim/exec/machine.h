#pragma once
// A machine model: compute units, the cache hierarchy and DRAM, read from a JSON file in
// models/machines (format: models/machines/SCHEMA.md). The cache and DRAM sections are kept
// as JSON and handed to their builders (sim/mem/cache, sim/mem/dram) with their file and
// path, so their errors still name the machine file and the JSON path.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compute/compute_config.h"
#include "core/json_view.h"

namespace fusim::exec {

// One cache level as far as the executor needs it; the cache library reads the rest.
struct CacheLevelSummary {
  std::string name;
  std::int64_t size = 0;
  int line = 64;
  bool shared = false;
};

struct Machine {
  std::string name;
  compute::UnitKind kind = compute::UnitKind::Cpu;
  std::string file;         // where it was read from (messages, --json "machine")
  nlohmann::json document;  // the JSON after overrides (re-readable, dumpable)
  compute::ComputeConfig compute;
  std::vector<CacheLevelSummary> cache_levels;  // outermost (L1) first

  JsonView caches() const { return JsonView(document.at("caches"), file, "caches"); }
  JsonView dram() const { return JsonView(document.at("dram"), file, "dram"); }
  // Size of the last shared level (LLC on CPUs, L2 on GPUs); 0 when the machine has none.
  std::int64_t last_level_bytes() const;
};

// A dotted path into the machine JSON and its new value, as written on a command line:
// {"caches.LLC.size", "32MiB"}, {"dram.channels", "4"}. A path step that names an array of
// objects with "name" members selects the element of that name (caches.levels[name=LLC]);
// "caches.LLC" is short for that. The value is JSON when it parses as JSON (4, true,
// "x"), else a string (32MiB, frfcfs). The parent of the last step must exist; a new key
// is rejected later by the strict reader if the format does not know it.
using Override = std::pair<std::string, std::string>;
void apply_override(nlohmann::json& document, const std::string& file, const Override& o);

// name_or_path: a preset name (file stem in models/machines, e.g. "h100-sxm5") or a path
// to a JSON file. Overrides are applied to the raw JSON in order, before parsing.
Machine load_machine(const std::string& name_or_path, const std::vector<Override>& overrides = {});
// The same from a document already in memory (tests, sweeps); `file` names it in messages.
Machine parse_machine(nlohmann::json document, const std::string& file,
                      const std::vector<Override>& overrides = {});

// Folder of the bundled presets: $FUSIM_MACHINES if set, else <source>/models/machines.
std::string machines_dir();
// Stems of the bundled presets, sorted.
std::vector<std::string> machine_presets();

}  // namespace fusim::exec
