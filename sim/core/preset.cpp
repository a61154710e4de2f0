#include "core/preset.h"

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/suggest.h"

namespace fusim {
namespace fs = std::filesystem;

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || fs::path(s).extension() == ".json";
}

std::vector<std::string> preset_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_preset(const std::string& name_or_path, const std::vector<std::string>& dirs,
                           const std::string& what) {
  if (looks_like_path(name_or_path)) return name_or_path;
  for (const auto& dir : dirs) {
    const fs::path p = fs::path(dir) / (name_or_path + ".json");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  const std::vector<std::string> known =
      dirs.empty() ? std::vector<std::string>{} : preset_names(dirs.front());
  throw InputError(fmt::format(
      "unknown {} \"{}\": expected a preset name ({}) or a path to a {} "
      "JSON file{}",
      what, name_or_path, fmt::join(known, ", "), what, did_you_mean(name_or_path, known)));
}

}  // namespace fusim
