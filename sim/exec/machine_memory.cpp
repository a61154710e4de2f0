// The memory side of a machine: hierarchy config and main memory (machine_memory.h).
#include "exec/machine_memory.h"

#include "core/error.h"
#include "core/units.h"
#include "mem/cache/fixed_memory.h"
#include "mem/dram/dram_system.h"

namespace fusim::exec {

namespace {
bool is_zero_size(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>() == 0;
  if (v.is_string()) return parse_bytes(v.get<std::string>()) == std::int64_t{0};
  return false;
}

}  // namespace

std::unique_ptr<mem::MemoryPort> make_main_memory(const Machine& m, EventQueue& queue) {
  JsonView d = m.dram();
  if (d.at("preset").as_string() == "fixed") {
    d.reject_unknown_keys({"preset", "latency_ns", "bandwidth_gbps"});
    Tick latency = ns(d.at("latency_ns").as_number_in(0, 1e6));
    double bw = d.at("bandwidth_gbps").as_number_in(0, 1e6) * 1e9;
    return std::make_unique<mem::FixedLatencyMemory>(queue, latency, bw);
  }
  return dram::make_dram_system(d, queue);
}

cache::HierarchyConfig hierarchy_config(const Machine& m) {
  // A level of size 0 is a what-if "without this level" (caches.LLC.size=0): it is left out.
  nlohmann::json caches = m.document.at("caches");
  auto& levels = caches.at("levels");
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& l : levels)
    if (!l.is_object() || !l.contains("size") || !is_zero_size(l["size"])) kept.push_back(l);
  if (kept.empty() && !levels.empty())
    JsonView(m.document, m.file)
        .at("caches")
        .at("levels")
        .fail("at least one level of non-zero size");
  // GPU caches are write-validate unless the machine says otherwise: a store that covers a
  // whole line allocates it without reading DRAM (lines are 4 x 32 B sectors, writes are
  // sector granular with byte masks: Accel-Sim's Volta/Ampere L2 model, "lazy fetch on
  // read", Khairy et al., ISCA 2020; NVIDIA's sector description, developer forums
  // "Pascal L1 cache"). CPUs read the line for ownership first (write-allocate RFO).
  if (m.kind == compute::UnitKind::Gpu)
    for (auto& l : kept)
      if (l.is_object() && !l.contains("write_validate")) l["write_validate"] = true;
  levels = kept;
  return cache::parse_hierarchy_config(JsonView(caches, m.file, "caches"));
}

void check_memory_sections(const Machine& m) {
  hierarchy_config(m);
  EventQueue scratch;
  make_main_memory(m, scratch);
}

}  // namespace fusim::exec
