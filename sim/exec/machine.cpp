// Reading a machine file into typed config (machine.h): every section checked here, once.
#include "exec/machine.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>

#include "core/error.h"
#include "core/json_view.h"
#include "core/memory_budget.h"
#include "core/preset.h"
#include "core/units.h"
#include "mem/dram/address_mapping.h"
#include "mem/dram/scheduler.h"

namespace fusim::exec {
namespace {

bool is_zero_size(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>() == 0;
  if (v.is_string()) return parse_bytes(v.get<std::string>()) == std::int64_t{0};
  return false;
}

// The level names, sizes and sharing as written; the cache reader checks the rest.
std::vector<CacheLevelSummary> read_level_summaries(const JsonView& top, compute::UnitKind kind,
                                                    const std::string& kind_name) {
  std::vector<CacheLevelSummary> out;
  JsonView levels = top.at("caches").at("levels");
  levels.require_array();
  for (std::size_t i = 0; i < levels.size(); ++i) {
    JsonView l = levels[i];
    CacheLevelSummary s;
    s.name = l.at("name").as_nonempty_string();
    for (const auto& prev : out)
      if (prev.name == s.name) l.at("name").fail_got("a level name used once");
    s.size = l.at("size").as_bytes(/*allow_zero=*/true);
    s.line = static_cast<int>(l.get_int("line", 64));
    s.shared = l.at("shared").as_bool();
    if (!out.empty() && out.back().shared && !s.shared)
      l.at("shared").fail("true (a private level cannot sit below a shared one)");
    out.push_back(s);
  }
  if (!out.empty()) {
    const char* llc = kind == compute::UnitKind::Cpu ? "LLC" : "L2";
    const auto& last = out.back();
    if (!last.shared || last.name != llc)
      levels[levels.size() - 1].at("name").fail(
          fmt::format("the last level to be the shared \"{}\" on a {} machine", llc, kind_name));
  }
  return out;
}

// The hierarchy the simulator builds from the "caches" section.
cache::HierarchyConfig read_hierarchy(const nlohmann::json& document, const std::string& file,
                                      compute::UnitKind kind) {
  // A level of size 0 is a what-if "without this level" (caches.LLC.size=0): it is left out.
  nlohmann::json caches = document.at("caches");
  auto& levels = caches.at("levels");
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& l : levels)
    if (!l.is_object() || !l.contains("size") || !is_zero_size(l["size"])) kept.push_back(l);
  if (kept.empty() && !levels.empty())
    JsonView(document, file).at("caches").at("levels").fail("at least one level of non-zero size");
  // GPU caches are write-validate unless the machine says otherwise: a store that covers a
  // whole line allocates it without reading DRAM (lines are 4 x 32 B sectors, writes are
  // sector granular with byte masks: Accel-Sim's Volta/Ampere L2 model, "lazy fetch on
  // read", Khairy et al., ISCA 2020; NVIDIA's sector description, developer forums
  // "Pascal L1 cache"). CPUs read the line for ownership first (write-allocate RFO).
  // A GPU's per-SM level (L1) is also write-through unless the machine says otherwise:
  // global stores go on to L2, the point of coherence, which keeps them (Accel-Sim's dl1
  // for Volta to Hopper, "L:T:m:L:L": write-through, allocate on miss, lazy fetch on read;
  // CUDA C++ Programming Guide, compute capability 7.x+ global memory). A write-back L1
  // would send its dirty victims past an L2 that never saw the store straight to DRAM.
  if (kind == compute::UnitKind::Gpu)
    for (auto& l : kept) {
      if (!l.is_object()) continue;
      if (!l.contains("write_validate")) l["write_validate"] = true;
      const bool shared =
          l.contains("shared") && l["shared"].is_boolean() && l["shared"].get<bool>();
      if (!shared && !l.contains("write_policy")) l["write_policy"] = "write-through";
    }
  levels = kept;
  return cache::parse_hierarchy_config(JsonView(caches, file, "caches"));
}

// Main memory: the DRAM spec (preset plus overrides) with its scheduler and address mapping
// checked now, or the fixed-latency stand-in.
std::variant<dram::DramSpec, FixedLatency> read_memory(const JsonView& d) {
  d.require_object();
  if (d.at("preset").as_nonempty_string() == "fixed") {
    d.reject_unknown_keys({"preset", "latency_ns", "bandwidth_gbps"});
    return FixedLatency{ns(d.at("latency_ns").as_number_in(0, 1e6)),
                        d.at("bandwidth_gbps").as_number_in(0, 1e6)};
  }
  dram::DramSpec spec = dram::load_dram_spec(d);
  // What the DRAM system's constructor would refuse, refused here (the mapping string, the
  // scheduler name), so that building it during a simulation cannot fail.
  (void)dram::AddressMapping(spec, d.file(), "mapping");
  (void)dram::make_scheduler(spec.ctrl, d.file());
  return spec;
}

}  // namespace

std::int64_t Machine::last_level_bytes() const {
  for (auto it = cache_levels.rbegin(); it != cache_levels.rend(); ++it)
    if (it->shared) return it->size;
  return 0;
}

std::int64_t Machine::default_chunk_bytes() const {
  constexpr std::int64_t kMin = std::int64_t{1} << 20;
  if (caches.levels.empty()) return kMin;
  const std::int64_t cores = std::max(1, compute.units);
  std::int64_t lines = INT64_MAX;  // per core
  for (const cache::LevelConfig& l : caches.levels)
    lines = std::min(lines, l.shared ? l.mshrs / cores : l.mshrs);
  const std::int64_t reach =
      cores * std::max<std::int64_t>(1, lines) * caches.levels.front().line_bytes;
  std::int64_t chunk = kMin;
  while (chunk * 2 <= reach) chunk *= 2;
  return chunk;
}

Machine parse_machine(nlohmann::json document, const std::string& file,
                      const std::vector<Override>& overrides) {
  for (const auto& o : overrides) apply_override(document, file, o);
  Machine m;
  m.file = file;
  JsonView top(document, file);
  top.require_object();
  top.reject_unknown_keys(
      {"name", "kind", "description", "sources", "compute", "caches", "dram", "host"});
  m.name = top.at("name").as_nonempty_string();
  std::string kind = top.at("kind").as_string();
  if (kind == "cpu") {
    m.kind = compute::UnitKind::Cpu;
  } else if (kind == "gpu") {
    m.kind = compute::UnitKind::Gpu;
  } else {
    top.at("kind").fail_got("\"cpu\" or \"gpu\"");
  }
  if (auto d = top.find("description")) d->as_string();
  if (auto s = top.find("sources")) {
    s->require_object();
    for (const auto& k : s->keys()) s->at(k).as_nonempty_string();
  }
  m.compute = compute::parse_compute_config(top.at("compute"), m.kind);
  m.cache_levels = read_level_summaries(top, m.kind, kind);
  // GEMM/conv tiles are sized for the largest private level (oneDNN blocks for L2 on CPUs;
  // on GPUs the per-SM L1/shared memory holds the threadblock tiles).
  for (const auto& l : m.cache_levels)
    if (!l.shared) m.compute.blocking_bytes = std::max(m.compute.blocking_bytes, l.size);
  // The L2 a GPU GEMM's wave of threadblocks shares its operand panels through.
  for (const auto& l : m.cache_levels)
    if (l.shared) m.compute.shared_cache_bytes = std::max(m.compute.shared_cache_bytes, l.size);
  top.at("dram").require_object();
  top.at("dram").at("preset").as_nonempty_string();
  m.caches = read_hierarchy(document, file, m.kind);
  // A private level is one array per core (SM): its tag state (as cache_config.cpp counts
  // it, 17 B per line) times the cores must fit the memory budget too, refused here naming
  // the core count rather than ending in std::bad_alloc when the hierarchy is built.
  std::uint64_t private_lines = 0;
  for (const auto& l : m.caches.levels)
    if (!l.shared) private_lines += static_cast<std::uint64_t>(l.size_bytes / l.line_bytes);
  check_memory_budget(file, m.kind == compute::UnitKind::Cpu ? "compute.cores" : "compute.sms",
                      "private cache levels (one copy per core)",
                      private_lines * static_cast<std::uint64_t>(m.compute.units), 8 + 1 + 8);
  m.memory = read_memory(top.at("dram"));
  if (auto h = top.find("host")) {
    h->require_object();
    h->reject_unknown_keys({"dram_triad_gbs", "threads", "dram_triad_samples", "op_probe_us",
                            "op_probe_samples", "core_to_core_ns", "core_to_core_samples"});
    m.host.dram_triad_gbs = h->at("dram_triad_gbs").as_number_in(1e-3, 1e6);
    m.host.threads = int(h->at("threads").as_int_at_least(1));
    if (auto samples = h->find("dram_triad_samples"))
      for (const auto& v : samples->elements()) v.as_number_in(1e-3, 1e6);
    // (Files calibrated before the speed probe have neither.)
    if (auto us = h->find("op_probe_us")) m.host.op_probe_us = us->as_number_in(1e-3, 1e9);
    if (auto samples = h->find("op_probe_samples"))
      for (const auto& v : samples->elements()) v.as_number_in(1e-3, 1e9);
    // (Since 2026-12-08, on hosts calibrated with two threads or more.)
    if (auto c2c = h->find("core_to_core_ns"))
      m.host.core_to_core_ns = c2c->as_number_in(1e-3, 1e6);
    if (auto samples = h->find("core_to_core_samples"))
      for (const auto& v : samples->elements()) v.as_number_in(1e-3, 1e6);
  }
  return m;
}

Machine parse_machine(const MachineDocument& document, const std::vector<Override>& overrides) {
  return parse_machine(document.json, document.file, overrides);
}

std::string machines_dir() {
  if (const char* env = std::getenv("FUSIM_MACHINES")) return env;
  return FUSIM_MACHINES_DIR;
}

std::vector<std::string> machine_presets() {
  return preset_names(machines_dir());
}

MachineDocument read_machine_document(const std::string& name_or_path) {
  const std::string path = resolve_preset(name_or_path, {machines_dir()}, "machine");
  return {load_json_file(path), path};
}

Machine load_machine(const std::string& name_or_path, const std::vector<Override>& overrides) {
  return parse_machine(read_machine_document(name_or_path), overrides);
}

}  // namespace fusim::exec
