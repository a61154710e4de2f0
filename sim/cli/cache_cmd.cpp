// `fusim cache`: Dinero-style replay of an address trace through a cache hierarchy (the
// same JSON object machine files embed under "caches"), one core, counts per level.
#include <fmt/format.h>
#include <string>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "core/error.h"
#include "core/stats.h"
#include "mem/cache/address_trace.h"
#include "mem/cache/hierarchy.h"

namespace fusim::cli {
namespace {

struct CacheOptions {
  std::string config, trace, fidelity = "line";
  OutputFormat format;
};

void run_cache(const CacheOptions& opt) {
  cache::Fidelity fidelity = cache::parse_fidelity(opt.fidelity);
  cache::Hierarchy h(cache::load_hierarchy_config(opt.config), fidelity, 1);
  std::uint64_t accesses =
      cache::read_address_trace_file(opt.trace, [&](const cache::TraceAccess& a) {
        h.access_range(0, a.addr, a.bytes,
                       a.is_write ? cache::AccessKind::Write : cache::AccessKind::Read);
      });
  // An empty trace has no miss rate to report: a wrong file, not a result of 0.
  if (accesses == 0)
    throw InputError(fmt::format(
        "{}: expected at least one access (lines R|W ADDRESS [BYTES]), got none", opt.trace));
  cache::HierarchyStats s = h.stats();
  Table table({"level", "accesses", "hits", "misses", "writebacks", "miss_rate"});
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& level : s.levels) {
    const cache::CacheStats& c = level.total;
    table.add_row({level.name, std::to_string(c.accesses), std::to_string(c.hits),
                   std::to_string(c.misses), std::to_string(c.writebacks),
                   format_ratio(c.misses, c.accesses)});
    levels.push_back(
        {{"name", level.name},
         {"accesses", c.accesses},
         {"hits", c.hits},
         {"misses", c.misses},
         {"writebacks", c.writebacks},
         // No access: no miss rate (null), not 0.
         {"miss_rate", c.accesses == 0 ? nlohmann::json()
                                       : nlohmann::json(double(c.misses) / double(c.accesses))}});
  }
  table.add_row({"memory", std::to_string(s.memory.reads + s.memory.writes), "-",
                 std::to_string(s.memory.reads), std::to_string(s.memory.writes), "-"});
  if (!opt.format.json && !opt.format.csv)
    fmt::print("{} accesses, {} fidelity ({} B units)\n", accesses, cache::to_string(fidelity),
               h.unit_bytes());
  const nlohmann::json json{{"levels", levels},
                            {"memory", {{"reads", s.memory.reads}, {"writes", s.memory.writes}}}};
  print_result(opt.format, json, table,
               {{levels, {"name", "accesses", "hits", "misses", "writebacks", "miss_rate"}}});
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto opt = std::make_shared<CacheOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cache",
      "Replay an address trace through a cache hierarchy (Dinero-style) and print, per level,\n"
      "accesses (line touches: an access spanning two lines counts twice), hits, misses and\n"
      "dirty writebacks; the memory row counts line reads (misses) and writes (writebacks).\n"
      "Trace lines: 'R|W 0xADDR [BYTES]' (BYTES default 8; '#' starts a comment).\n"
      "Config: {\"levels\":[{\"name\":\"L1\",\"size\":\"48KiB\",\"assoc\":12,\"line\":64,\n"
      "\"policy\":\"lru\",\"latency_cycles\":5,\"shared\":false}, ...]} with optional mshrs, "
      "ports,\n"
      "write_policy, write_allocate, inclusion, clock, seed per level and clock, block at top\n"
      "level (see sim/mem/cache/cache_config.h).\n"
      "Example:\n"
      "  fusim cache --config fuzz/seeds/cache_config/xeon-8380-ddr4.json \\\n"
      "      --trace fuzz/seeds/address_trace/basic.txt --json");
  cmd->add_option("--config", opt->config, "Hierarchy JSON file")->required();
  cmd->add_option("--trace", opt->trace, "Address trace file")->required();
  cmd->add_option("--fidelity", opt->fidelity,
                  "line: every 64 B line (reference); block: units of the config's \"block\" "
                  "(default 4KiB), same capacity in bytes")
      ->check(CLI::IsMember({"line", "block"}))
      ->capture_default_str();
  add_output_flags(cmd, opt->format);
  cmd->callback([opt] { run_cache(*opt); });
}

}  // namespace fusim::cli
