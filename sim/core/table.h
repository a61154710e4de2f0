#pragma once
// Aligned text tables and CSV from the same rows: the default human output of every command.
#include <string>
#include <vector>

namespace fusim {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells);
  // Right-aligns columns whose cells all look numeric; a rule under the header.
  std::string to_text() const;
  std::string to_csv() const;  // RFC 4180 quoting
  std::size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace fusim
