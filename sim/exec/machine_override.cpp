// --set PATH=VALUE on a machine document (machine.h).
#include <fmt/format.h>

#include "core/error.h"
#include "exec/machine.h"

namespace fusim::exec {
namespace {

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

Override parse_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set: expected PATH=VALUE, got \"{}\"", text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace fusim::exec
