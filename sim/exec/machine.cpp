#include "exec/machine.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "exec/simulator.h"

namespace fusim::exec {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> steps;
  std::size_t start = 0;
  while (true) {
    auto dot = path.find('.', start);
    steps.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return steps;
}

nlohmann::json parse_value(const std::string& text, const std::string& file,
                           const std::string& path) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    return text;  // 32MiB, frfcfs: a plain string
  } catch (const nlohmann::json::out_of_range&) {
    // A number beyond a double (2E800): found by fuzz_sweep_set (std::terminate before).
    throw InputError(file, path,
                     fmt::format("a number within the range of a double, got {}", text));
  }
}

// An array of objects with a "name" member, searched by name.
nlohmann::json* find_named(nlohmann::json& array, const std::string& name) {
  if (!array.is_array()) return nullptr;
  for (auto& e : array)
    if (e.is_object() && e.contains("name") && e["name"] == name) return &e;
  return nullptr;
}
}  // namespace

void apply_override(nlohmann::json& doc, const std::string& file, const Override& o) {
  const auto& [path, value] = o;
  auto steps = split_path(path);
  for (const auto& s : steps)
    if (s.empty())
      throw InputError(file, path, "a dotted path of non-empty names (e.g. caches.LLC.size)");
  nlohmann::json* node = &doc;
  std::string walked;
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    const auto& s = steps[i];
    nlohmann::json* next = nullptr;
    if (node->is_object() && node->contains(s)) {
      next = &(*node)[s];
    } else if (node->is_object() && node->contains("levels")) {
      next = find_named((*node)["levels"], s);  // caches.LLC -> caches.levels[name=LLC]
    } else if (node->is_array()) {
      next = find_named(*node, s);
    }
    if (!next || !(next->is_object() || next->is_array()))
      throw InputError(file, path,
                       fmt::format("a path to an existing field (\"{}\" does not name an "
                                   "object{})",
                                   s, walked.empty() ? "" : " in " + walked));
    walked += walked.empty() ? s : "." + s;
    node = next;
  }
  if (!node->is_object()) throw InputError(file, path, "a path whose parent is a JSON object");
  (*node)[steps.back()] = parse_value(value, file, path);
}

std::int64_t Machine::last_level_bytes() const {
  for (auto it = cache_levels.rbegin(); it != cache_levels.rend(); ++it)
    if (it->shared) return it->size;
  return 0;
}

Machine parse_machine(nlohmann::json document, const std::string& file,
                      const std::vector<Override>& overrides) {
  for (const auto& o : overrides) apply_override(document, file, o);
  Machine m;
  m.file = file;
  m.document = std::move(document);
  JsonView top(m.document, file);
  top.require_object();
  top.reject_unknown_keys({"name", "kind", "description", "sources", "compute", "caches", "dram"});
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

  // The level names, sizes and sharing the executor needs; sim/mem/cache checks the rest.
  JsonView levels = top.at("caches").at("levels");
  levels.require_array();
  for (std::size_t i = 0; i < levels.size(); ++i) {
    JsonView l = levels[i];
    CacheLevelSummary s;
    s.name = l.at("name").as_nonempty_string();
    for (const auto& prev : m.cache_levels)
      if (prev.name == s.name) l.at("name").fail_got("a level name used once");
    s.size = l.at("size").as_bytes(/*allow_zero=*/true);
    s.line = static_cast<int>(l.get_int("line", 64));
    s.shared = l.at("shared").as_bool();
    if (!m.cache_levels.empty() && m.cache_levels.back().shared && !s.shared)
      l.at("shared").fail("true (a private level cannot sit below a shared one)");
    m.cache_levels.push_back(s);
  }
  if (!m.cache_levels.empty()) {
    const char* llc = m.kind == compute::UnitKind::Cpu ? "LLC" : "L2";
    const auto& last = m.cache_levels.back();
    if (!last.shared || last.name != llc)
      levels[levels.size() - 1].at("name").fail(
          fmt::format("the last level to be the shared \"{}\" on a {} machine", llc, kind));
  }
  // GEMM/conv tiles are sized for the largest private level (oneDNN blocks for L2 on CPUs;
  // on GPUs the per-SM L1/shared memory holds the threadblock tiles).
  for (const auto& l : m.cache_levels)
    if (!l.shared) m.compute.blocking_bytes = std::max(m.compute.blocking_bytes, l.size);
  top.at("dram").require_object();
  top.at("dram").at("preset").as_nonempty_string();
  check_memory_sections(m);  // the cache and DRAM readers check their sections now
  return m;
}

std::string machines_dir() {
  if (const char* env = std::getenv("FUSIM_MACHINES")) return env;
  return FUSIM_MACHINES_DIR;
}

std::vector<std::string> machine_presets() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(machines_dir(), ec))
    if (e.is_regular_file() && e.path().extension() == ".json")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Machine load_machine(const std::string& name_or_path, const std::vector<Override>& overrides) {
  std::string path = name_or_path;
  bool looks_like_path =
      name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".json";
  if (!looks_like_path) {
    path = (fs::path(machines_dir()) / (name_or_path + ".json")).string();
    if (!fs::exists(path)) {
      std::string known;
      for (const auto& n : machine_presets()) known += (known.empty() ? "" : ", ") + n;
      throw InputError(
          fmt::format("unknown machine \"{}\": expected a preset name ({}) or a "
                      "path to a machine JSON file",
                      name_or_path, known));
    }
  }
  return parse_machine(load_json_file(path), path, overrides);
}

}  // namespace fusim::exec
