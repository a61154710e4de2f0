#include "mem/cache/cache_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/units.h"
#include "mem/cache/replacement.h"

namespace fusim::cache {
namespace {
bool is_pow2(std::int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

// A positive integer no larger than `max`: the limits keep every product of cycles, clock
// periods, lines and bytes well inside 64 bits, and lie far beyond any real cache (a level
// slower than 100,000 cycles, with more than 65,536 ports or 16 M MSHRs, is a typo; a GPU's
// shared L2 holds all its SMs' MSHRs: 132 x 512 = 67,584 on an H100).
std::int64_t bounded_positive(const JsonView& v, std::int64_t max, const char* what) {
  std::int64_t n = v.as_positive_int();
  if (n > max) v.fail(fmt::format("{} from 1 to {}, got {}", what, max, n));
  return n;
}

std::string choices(const std::vector<std::string>& names) {
  return fmt::format("one of {}", fmt::join(names, ", "));
}

LevelConfig parse_level(const JsonView& j, std::size_t index, Tick default_period) {
  j.require_object();
  j.reject_unknown_keys({"name", "size", "assoc", "line", "policy", "latency_cycles", "shared",
                         "mshrs", "ports", "bytes_per_cycle", "write_policy", "write_allocate",
                         "write_validate", "inclusion", "clock", "seed"});
  LevelConfig c;
  c.json_path = j.path();
  c.name = j.at("name").as_nonempty_string();
  c.size_bytes = j.at("size").as_bytes();
  c.line_bytes = j.at("line").as_positive_int();
  if (!is_pow2(c.line_bytes)) j.at("line").fail_got("a power-of-two line size in bytes");
  c.assoc = j.at("assoc").as_positive_int();
  c.latency_cycles = bounded_positive(j.at("latency_cycles"), 100000, "a latency in cycles");
  if (c.size_bytes % c.line_bytes != 0)
    j.at("size").fail(
        fmt::format("a multiple of the line size ({} B), got {} B", c.line_bytes, c.size_bytes));
  std::int64_t lines = c.size_bytes / c.line_bytes;
  if (c.assoc > lines || lines % c.assoc != 0)
    j.at("assoc").fail(
        fmt::format("an associativity that divides the {} lines of {} into whole "
                    "sets, got {}",
                    lines, format_bytes(c.size_bytes), c.assoc));
  // Refused before Cache allocates its arrays: per line a 64-bit tag, a dirty byte and at
  // most 8 bytes of replacement state (LRU's 64-bit stamp), for one instance of the level.
  check_memory_budget(j.file(), j.at("size").path(), "cache tag and replacement state",
                      static_cast<std::uint64_t>(lines), 8 + 1 + 8);
  if (auto p = j.find("policy")) {
    c.policy = p->as_nonempty_string();
    if (!is_known_policy(c.policy)) p->fail_got(choices(policy_names()));
  }
  std::string geometry = policy_geometry_problem(c.policy, static_cast<std::uint32_t>(c.assoc));
  if (!geometry.empty()) j.at("assoc").fail(geometry);
  c.shared = j.get_bool("shared", false);
  if (auto v = j.find("mshrs")) c.mshrs = bounded_positive(*v, 1 << 24, "an MSHR count");
  if (auto v = j.find("ports")) c.ports = bounded_positive(*v, 65536, "a port count");
  if (auto v = j.find("bytes_per_cycle")) {
    if (j.has("ports"))
      v->fail("either \"ports\" (lines a cycle) or \"bytes_per_cycle\", not both");
    c.bytes_per_cycle = bounded_positive(*v, 1 << 20, "bytes a cycle");
  }
  if (auto v = j.find("write_policy")) {
    std::string s = v->as_string();
    if (s == "write-back")
      c.write_policy = WritePolicy::WriteBack;
    else if (s == "write-through")
      c.write_policy = WritePolicy::WriteThrough;
    else
      v->fail_got("\"write-back\" or \"write-through\"");
  }
  c.write_allocate = j.get_bool("write_allocate", true);
  c.write_validate = j.get_bool("write_validate", false);
  if (auto v = j.find("inclusion")) {
    std::string s = v->as_string();
    if (s == "inclusive")
      c.inclusion = Inclusion::Inclusive;
    else if (s == "exclusive")
      c.inclusion = Inclusion::Exclusive;
    else if (s == "non-inclusive")
      c.inclusion = Inclusion::NonInclusive;
    else
      v->fail_got("\"inclusive\", \"exclusive\" or \"non-inclusive\"");
    if (index == 0)
      v->fail(
          "no inclusion on the first level (it describes a level's relation to the levels "
          "above it)");
  }
  c.clock_period = j.has("clock") ? parse_clock(j.at("clock")) : default_period;
  if (auto v = j.find("seed")) c.seed = static_cast<std::uint64_t>(v->as_int_at_least(0));
  return c;
}
}  // namespace

Tick parse_clock(const JsonView& json) {
  const char* expected = "a clock frequency such as \"3GHz\" or \"2400MHz\"";
  if (!json.raw().is_string()) json.fail_got(expected);
  std::string s = json.as_string();
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  double hz = 0;
  if (unit == "ghz")
    hz = value * 1e9;
  else if (unit == "mhz")
    hz = value * 1e6;
  if (end == s.c_str() || !std::isfinite(hz) || hz < 1e6 || hz > 1e12) json.fail_got(expected);
  return static_cast<Tick>(std::llround(1e12 / hz));
}

HierarchyConfig parse_hierarchy_config(const JsonView& json) {
  json.require_object();
  json.reject_unknown_keys({"levels", "clock", "block"});
  HierarchyConfig h;
  h.file = json.file();
  if (json.has("clock")) h.clock_period = parse_clock(json.at("clock"));
  if (auto b = json.find("block")) {
    h.block_bytes = b->as_bytes();
    if (!is_pow2(h.block_bytes)) b->fail_got("a power-of-two block size");
  }
  JsonView levels = json.at("levels");
  levels.require_array();
  if (levels.size() == 0) levels.fail("at least one level");
  if (levels.size() > 8) levels.fail_got("at most 8 levels");
  bool seen_shared = false;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    LevelConfig c = parse_level(levels[i], i, h.clock_period);
    if (i > 0 && c.line_bytes != h.levels[0].line_bytes)
      levels[i].at("line").fail(fmt::format("the same line size as levels[0] ({} B), got {} B",
                                            h.levels[0].line_bytes, c.line_bytes));
    if (seen_shared && !c.shared)
      levels[i].fail("\"shared\": true (a private level cannot sit below a shared one)");
    seen_shared = seen_shared || c.shared;
    for (const auto& prev : h.levels)
      if (prev.name == c.name) levels[i].at("name").fail_got("a name not used by another level");
    h.levels.push_back(std::move(c));
  }
  if (h.block_bytes < h.levels[0].line_bytes)
    json.fail(fmt::format("a block at least one line ({} B) long, got {} B", h.levels[0].line_bytes,
                          h.block_bytes));
  return h;
}

HierarchyConfig load_hierarchy_config(const std::string& path) {
  nlohmann::json doc = load_json_file(path);
  return parse_hierarchy_config(JsonView(doc, path));
}

const char* to_string(Inclusion inclusion) {
  switch (inclusion) {
    case Inclusion::Inclusive:
      return "inclusive";
    case Inclusion::Exclusive:
      return "exclusive";
    case Inclusion::NonInclusive:
      break;
  }
  return "non-inclusive";
}

const char* to_string(WritePolicy policy) {
  return policy == WritePolicy::WriteBack ? "write-back" : "write-through";
}

}  // namespace fusim::cache
