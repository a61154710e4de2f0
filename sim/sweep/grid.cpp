#include "sweep/grid.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/error.h"
#include "core/units.h"

namespace fusim::sweep {
namespace {

std::string option_name(std::string_view spec) {
  return fmt::format("--set {}", spec);
}

bool valid_segment(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '+';
  });
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

template <typename T>
bool parse_whole(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

nlohmann::json parse_value(std::string_view text, std::string_view option) {
  if (text.empty())
    throw InputError(std::string(option), "", "a value between the commas, got an empty one");
  std::int64_t integer = 0;
  if (parse_whole(text, integer)) return integer;
  double number = 0;
  if (parse_whole(text, number)) return number;
  if (text == "true") return true;
  if (text == "false") return false;
  // Sizes are spoken with binary units ("48KiB", "8MiB"); the machine JSON takes bytes.
  if (auto bytes = parse_bytes(text)) return *bytes;
  if (text.front() == '-' && parse_bytes(text.substr(1)))
    throw InputError(std::string(option), "", fmt::format("a size >= 0, got {}", text));
  // The value is written into the result rows; JSON text is UTF-8 (RFC 8259, section 8.1)
  // and dump() would throw json type_error 316 once the sweep has run.
  try {
    (void)nlohmann::json(std::string(text)).dump();
  } catch (const nlohmann::json::type_error&) {
    throw InputError(std::string(option), "", "a value in UTF-8, got bytes that are not");
  }
  return std::string(text);
}

Axis parse_axis(std::string_view spec) {
  std::string option = option_name(spec);
  std::size_t eq = spec.find('=');
  if (eq == std::string_view::npos)
    throw InputError(option, "", "PATH=V1,V2,... (e.g. caches.L2.size=8MiB,32MiB), got no '='");
  Axis axis;
  axis.path = std::string(spec.substr(0, eq));
  for (std::string_view segment : split(axis.path, '.'))
    if (!valid_segment(segment))
      throw InputError(
          option, "",
          fmt::format("a dotted path of names (letters, digits, '_', '-'), got '{}'", axis.path));
  std::string_view list = spec.substr(eq + 1);
  for (std::string_view text : split(list, ',')) {
    nlohmann::json value = parse_value(text, option);
    if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end())
      throw InputError(option, "", fmt::format("each value once, got {} twice", text));
    if (axis.path == kBatchPath && !(value.is_number_integer() && value.get<std::int64_t>() > 0))
      throw InputError(option, "", fmt::format("a batch size as a positive integer, got {}", text));
    axis.values.push_back(std::move(value));
  }
  return axis;
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return fmt::format("{}", value.get<std::int64_t>());
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  return value.dump();
}

Grid::Grid(std::vector<std::string> traces, std::vector<Axis> axes)
    : traces_(std::move(traces)), axes_(std::move(axes)) {
  if (traces_.empty()) throw InputError("--trace", "", "at least one trace");
  for (std::size_t i = 0; i < traces_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (traces_[i] == traces_[j])
        throw InputError("--trace", "", fmt::format("each trace once, got {} twice", traces_[i]));
  for (std::size_t i = 0; i < axes_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (axes_[i].path == axes_[j].path)
        throw InputError("--set", "",
                         fmt::format("each path once, got {} in two --set options", axes_[i].path));
  size_ = traces_.size();
  for (const Axis& axis : axes_) {
    if (size_ > kMaxPoints / axis.values.size())
      throw InputError("--set", "",
                       fmt::format("a grid of at most {} points (split the study)", kMaxPoints));
    size_ *= axis.values.size();
  }
}

GridPoint Grid::point(std::size_t index) const {
  GridPoint p;
  p.index = index;
  p.choice.resize(axes_.size());
  std::size_t rest = index;
  for (std::size_t a = axes_.size(); a-- > 0;) {  // the last axis varies fastest
    p.choice[a] = rest % axes_[a].values.size();
    rest /= axes_[a].values.size();
  }
  p.trace = rest;
  return p;
}

std::optional<std::size_t> Grid::batch_axis() const {
  for (std::size_t a = 0; a < axes_.size(); ++a)
    if (axes_[a].path == kBatchPath) return a;
  return std::nullopt;
}

std::vector<std::pair<std::string, nlohmann::json>> Grid::machine_overrides(
    const GridPoint& point) const {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (std::size_t a = 0; a < axes_.size(); ++a)
    if (axes_[a].path != kBatchPath && !is_plan_path(axes_[a].path))
      out.emplace_back(axes_[a].path, value(point, a));
  return out;
}

bool is_plan_path(std::string_view path) {
  return path.substr(0, kParallelPrefix.size()) == kParallelPrefix;
}

std::vector<std::pair<std::string, nlohmann::json>> Grid::plan_overrides(
    const GridPoint& point) const {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (std::size_t a = 0; a < axes_.size(); ++a)
    if (is_plan_path(axes_[a].path)) out.emplace_back(axes_[a].path, value(point, a));
  return out;
}

bool Grid::has_plan_axis() const {
  for (const Axis& axis : axes_)
    if (is_plan_path(axis.path)) return true;
  return false;
}

}  // namespace fusim::sweep
