#include "core/table.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace fusim {
namespace {
bool looks_numeric(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == 'e' || c == '%' || c == 'x' || c == ',' || c == ' '))
      return false;
  return true;
}
std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
}  // namespace

void Table::add_row(std::vector<std::string> cells) {
  FUSIM_ASSERT(cells.size() == headers_.size(), "table row width differs from its header");
  rows_.push_back(std::move(cells));
}

std::string Table::to_text() const {
  std::size_t n = headers_.size();
  std::vector<std::size_t> width(n);
  std::vector<bool> numeric(n, true);
  for (std::size_t c = 0; c < n; ++c) {
    width[c] = headers_[c].size();
    for (const auto& row : rows_) {
      width[c] = std::max(width[c], row[c].size());
      numeric[c] = numeric[c] && looks_numeric(row[c]);
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < n; ++c) {
      std::string pad(width[c] - cells[c].size(), ' ');
      out += (c ? "  " : "") + (numeric[c] ? pad + cells[c] : cells[c] + (c + 1 < n ? pad : ""));
    }
    return out + "\n";
  };
  std::string out = line(headers_);
  std::size_t total = 0;
  for (auto w : width) total += w;
  out += std::string(total + 2 * (n ? n - 1 : 0), '-') + "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string Table::to_csv() const {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + csv_cell(cells[c]);
    out += "\n";
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
  return out;
}

}  // namespace fusim
