#include "core/json_view.h"

#include <fmt/format.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/units.h"

namespace fusim {
namespace {
// Line and column of a byte offset, for syntax error messages.
std::pair<std::size_t, std::size_t> line_col(std::string_view text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}
}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& name) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw InputError(name, "", "a JSON document, got an empty file");
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    auto [line, col] = line_col(text, e.byte);
    std::string what = e.what();
    auto pos = what.find("syntax error");
    std::string detail = pos == std::string::npos ? what : what.substr(pos);
    throw InputError(name, fmt::format("line {} column {}", line, col),
                     fmt::format("valid JSON ({})", detail));
  } catch (const nlohmann::json::out_of_range& e) {
    // Number overflow (1e999): nlohmann throws out_of_range without a byte offset, so the
    // place is that of the offending token, which the message quotes.
    std::string what = e.what();
    auto open = what.find('\'');
    auto close = what.rfind('\'');
    std::string token = open < close ? what.substr(open + 1, close - open - 1) : "";
    auto at = token.empty() ? std::string_view::npos : text.find(token);
    std::string where;
    if (at != std::string_view::npos) {
      auto [line, col] = line_col(text, at + 1);
      where = fmt::format("line {} column {}", line, col);
    }
    throw InputError(name, where, fmt::format("a finite number that fits a double, got {}", token));
  }
}

nlohmann::json load_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, "", "a JSON file, got a directory");
  const auto size = std::filesystem::file_size(path, ec);
  // Refused before reading: the parsed document would take many times the text's size.
  if (!ec && size > static_cast<std::uintmax_t>(kMaxJsonFileBytes))
    throw InputError(path, "",
                     fmt::format("a JSON file of at most {}, got {} (the parsed document "
                                 "would not fit the memory budget)",
                                 format_bytes(kMaxJsonFileBytes),
                                 format_bytes(static_cast<std::int64_t>(size))));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "a readable file (cannot open it)");
  // Read in chunks up to the limit: a device or pipe has no size to check first, and
  // /dev/zero read whole never ended.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > static_cast<std::size_t>(kMaxJsonFileBytes))
      throw InputError(path, "",
                       fmt::format("a JSON file of at most {}, got more (the parsed document "
                                   "would not fit the memory budget)",
                                   format_bytes(kMaxJsonFileBytes)));
  }
  if (in.bad()) throw InputError(path, "", "a readable file (read failed)");
  return parse_json_text(text, path);
}

std::string describe_json(const nlohmann::json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_null()) return "null";
  // Strings that did not come through the parser (--set values, file names) may hold bytes
  // that are not UTF-8; dump() would throw json type_error 316 for them, so they are shown
  // replaced by U+FFFD instead (the message itself must still be made).
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 40) {
    std::size_t cut = 37;
    // Cut before a UTF-8 continuation byte, never inside a character.
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

std::string JsonView::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}
std::string JsonView::child_path(std::size_t index) const {
  return fmt::format("{}[{}]", path_, index);
}

void JsonView::fail(const std::string& expected) const {
  throw InputError(file_, path_.empty() ? "(top level)" : path_, expected);
}
void JsonView::fail_got(const std::string& expected) const {
  fail(expected + ", got " + describe_json(*value_));
}

void JsonView::require_object() const {
  if (!value_->is_object()) fail_got("an object");
}
void JsonView::require_array() const {
  if (!value_->is_array()) fail_got("an array");
}

bool JsonView::has(std::string_view key) const {
  require_object();
  return value_->find(std::string(key)) != value_->end();
}

JsonView JsonView::at(std::string_view key) const {
  require_object();
  auto it = value_->find(std::string(key));
  if (it == value_->end())
    throw InputError(file_, child_path(key), "a member \"" + std::string(key) + "\" (missing)");
  return JsonView(*it, file_, child_path(key));
}

std::optional<JsonView> JsonView::find(std::string_view key) const {
  require_object();
  auto it = value_->find(std::string(key));
  if (it == value_->end()) return std::nullopt;
  return JsonView(*it, file_, child_path(key));
}

std::vector<std::string> JsonView::keys() const {
  require_object();
  std::vector<std::string> out;
  for (auto it = value_->begin(); it != value_->end(); ++it) out.push_back(it.key());
  return out;
}

void JsonView::reject_unknown_keys(std::initializer_list<std::string_view> allowed) const {
  require_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    bool known = false;
    for (auto a : allowed) known = known || a == it.key();
    if (known) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw InputError(file_, child_path(it.key()), "one of the known members (" + list + ")");
  }
}

std::size_t JsonView::size() const {
  require_array();
  return value_->size();
}

JsonView JsonView::operator[](std::size_t i) const {
  require_array();
  if (i >= value_->size())
    throw InputError(file_, child_path(i), fmt::format("an array of more than {} elements", i));
  return JsonView((*value_)[i], file_, child_path(i));
}

std::vector<JsonView> JsonView::elements() const {
  require_array();
  std::vector<JsonView> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], file_, child_path(i));
  return out;
}

std::int64_t JsonView::as_int() const {
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_unsigned()) {
    auto u = value_->get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(INT64_MAX)) return static_cast<std::int64_t>(u);
  }
  fail_got("an integer");
}

std::int64_t JsonView::as_int_at_least(std::int64_t min) const {
  if (!value_->is_number_integer() && !value_->is_number_unsigned())
    fail_got(min == 1 ? "a positive integer" : fmt::format("an integer >= {}", min));
  std::int64_t v = as_int();
  if (v < min) fail_got(min == 1 ? "a positive integer" : fmt::format("an integer >= {}", min));
  return v;
}

double JsonView::as_number() const {
  if (!value_->is_number()) fail_got("a number");
  double v = value_->get<double>();
  if (!std::isfinite(v)) fail_got("a finite number");
  return v;
}

double JsonView::as_number_in(double lo, double hi) const {
  double v = as_number();
  if (v < lo || v > hi) fail_got(fmt::format("a number in [{}, {}]", lo, hi));
  return v;
}

bool JsonView::as_bool() const {
  if (!value_->is_boolean()) fail_got("true or false");
  return value_->get<bool>();
}

std::string JsonView::as_string() const {
  if (!value_->is_string()) fail_got("a string");
  return value_->get<std::string>();
}

std::string JsonView::as_nonempty_string() const {
  std::string s = as_string();
  if (s.empty()) fail("a non-empty string");
  return s;
}

std::int64_t JsonView::as_bytes(bool allow_zero) const {
  std::int64_t v = 0;
  if (value_->is_string()) {
    auto parsed = parse_bytes(value_->get<std::string>());
    if (!parsed) fail_got("a size such as 4096, \"48KiB\" or \"2MiB\"");
    v = *parsed;
  } else if (value_->is_number_integer() || value_->is_number_unsigned()) {
    v = as_int();
  } else {
    fail_got("a size such as 4096, \"48KiB\" or \"2MiB\"");
  }
  if (v < 0 || (v == 0 && !allow_zero))
    fail_got(allow_zero ? "a size >= 0 bytes" : "a size > 0 bytes");
  return v;
}

std::vector<std::int64_t> JsonView::as_int_list() const {
  std::vector<std::int64_t> out;
  for (const auto& e : elements()) out.push_back(e.as_int());
  return out;
}

std::int64_t JsonView::get_int(std::string_view key, std::int64_t fallback) const {
  auto v = find(key);
  return v ? v->as_int() : fallback;
}
double JsonView::get_number(std::string_view key, double fallback) const {
  auto v = find(key);
  return v ? v->as_number() : fallback;
}
bool JsonView::get_bool(std::string_view key, bool fallback) const {
  auto v = find(key);
  return v ? v->as_bool() : fallback;
}
std::string JsonView::get_string(std::string_view key, const std::string& fallback) const {
  auto v = find(key);
  return v ? v->as_string() : fallback;
}

}  // namespace fusim
