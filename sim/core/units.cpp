#include "core/units.h"

#include <fmt/format.h>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/error.h"

namespace fusim {

std::optional<std::int64_t> parse_bytes(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return std::nullopt;
  std::string number(text.substr(0, i));
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) return std::nullopt;
  std::string unit;
  for (char c : text.substr(i))
    if (c != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "kib" || unit == "kb" || unit == "k")
    scale = 1024.0;
  else if (unit == "mib" || unit == "mb" || unit == "m")
    scale = 1024.0 * 1024;
  else if (unit == "gib" || unit == "gb" || unit == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "tib" || unit == "tb" || unit == "t")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return std::nullopt;
  double bytes = value * scale;
  if (bytes > 9.0e18 || bytes != std::floor(bytes)) return std::nullopt;
  return static_cast<std::int64_t>(bytes);
}

std::string format_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{}{}", bytes, units[u]);
}

std::int64_t parse_size_option(const std::string& option, const std::string& text) {
  const auto b = parse_bytes(text);
  if (!b || *b <= 0)
    throw InputError(
        fmt::format("{}: expected a size such as 64, 4KiB or 1GiB, got \"{}\"", option, text));
  return *b;
}

}  // namespace fusim
