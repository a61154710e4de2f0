#include "sweep/result_file.h"

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace fusim::sweep {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// RFC 4180: quote cells holding a comma, a quote or a line break.
std::string csv_cell(const nlohmann::json& value) {
  if (value.is_null()) return "";
  std::string text = value_text(value);
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string describe_keys(const std::vector<std::string>& columns, const Cells& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i)
    out += fmt::format("{}{}={}", i ? " " : "", columns[i], value_text(keys[i]));
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "a readable file to resume");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

FileFormat format_for_path(const std::string& path) {
  if (ends_with(path, ".csv")) return FileFormat::Csv;
  if (ends_with(path, ".json")) return FileFormat::Json;
  throw InputError("-o", "", fmt::format("a file name ending in .csv or .json, got {}", path));
}

RowFormat::RowFormat(FileFormat format, std::vector<std::string> columns)
    : format_(format), columns_(std::move(columns)) {}

std::string RowFormat::header() const {
  if (format_ == FileFormat::Json) return "[";
  std::string line;
  for (std::size_t i = 0; i < columns_.size(); ++i)
    line += (i ? "," : "") + csv_cell(nlohmann::json(columns_[i]));
  return line + "\n";
}

std::string RowFormat::row(const Cells& cells) const {
  FUSIM_ASSERT(cells.size() <= columns_.size(), "a sweep row has more cells than columns");
  if (format_ == FileFormat::Json) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();  // keeps column order
    for (std::size_t i = 0; i < cells.size(); ++i) object[columns_[i]] = cells[i];
    return object.dump();
  }
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + csv_cell(cells[i]);
  return line;
}

std::string RowFormat::separator(bool first_row) const {
  if (format_ == FileFormat::Json) return first_row ? "\n" : ",\n";
  return "";
}

std::string RowFormat::footer() const {
  return format_ == FileFormat::Json ? "\n]\n" : "";
}

std::string RowFormat::key_prefix(const Cells& key_cells) const {
  std::string text = row(key_cells);
  if (format_ == FileFormat::Json) text.pop_back();  // the closing '}'
  return text + ",";
}

ResumeState scan_for_resume(const std::string& path, const RowFormat& format, const Study& study) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  const std::string text = read_file(path);
  const std::string header = format.header();
  if (text.size() < header.size() && starts_with(header, text)) return {};  // cut in the header
  if (!starts_with(text, header)) {
    std::string first = text.substr(0, text.find('\n'));
    throw InputError(path, "line 1",
                     fmt::format("this sweep's header '{}' to resume, got '{}' (another study: "
                                 "give another -o or drop --resume)",
                                 header.substr(0, header.find('\n')), first));
  }
  const std::size_t per_unit = study.rows_per_unit();
  const std::size_t total_rows = study.units() * per_unit;
  const std::vector<std::string> columns = study.columns();
  ResumeState state;
  state.keep_bytes = header.size();
  std::size_t rows = 0, pos = header.size();
  std::size_t line_no = format.format() == FileFormat::Json ? 1 : 2;  // of the next row
  while (pos < text.size()) {
    std::string_view line, rest(text);
    std::size_t row_end = 0;
    if (format.format() == FileFormat::Csv) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) break;  // cut in the middle of a row
      line = rest.substr(pos, nl - pos);
      row_end = nl + 1;
    } else {
      std::string sep = format.separator(rows == 0);
      if (!starts_with(rest.substr(pos), sep)) break;  // the footer, or cut in a separator
      std::size_t start = pos + sep.size();
      std::size_t nl = text.find('\n', start);
      line = rest.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if (!line.empty() && line.back() == ',') line.remove_suffix(1);
      if (!nlohmann::json::accept(line)) break;  // cut in the middle of a row
      row_end = start + line.size();
      ++line_no;
    }
    if (rows == total_rows)
      throw InputError(path, fmt::format("line {}", line_no),
                       fmt::format("at most {} rows for this sweep (another study: give another "
                                   "-o or drop --resume)",
                                   total_rows));
    Cells keys = study.key_cells(rows / per_unit, rows % per_unit);
    if (!starts_with(line, format.key_prefix(keys)))
      throw InputError(path, fmt::format("line {}", line_no),
                       fmt::format("the row of {} (another study: give another -o or drop "
                                   "--resume)",
                                   describe_keys(columns, keys)));
    ++rows;
    if (format.format() == FileFormat::Csv) ++line_no;
    pos = row_end;
    if (rows % per_unit == 0) state.keep_bytes = row_end;
  }
  state.units_done = rows / per_unit;
  state.rows_done = state.units_done * per_unit;
  return state;
}

ResultWriter::ResultWriter(std::string path, RowFormat format, const ResumeState& resume)
    : path_(std::move(path)), format_(std::move(format)), rows_written_(resume.rows_done) {
  if (resume.keep_bytes == 0) {
    file_ = std::fopen(path_.c_str(), "wb");
  } else {
    std::error_code ec;
    std::filesystem::resize_file(path_, resume.keep_bytes, ec);
    if (!ec) file_ = std::fopen(path_.c_str(), "ab");
  }
  if (!file_)
    throw InputError(path_, "", fmt::format("a writable file ({})", std::strerror(errno)));
  if (resume.keep_bytes == 0) {
    std::string header = format_.header();
    std::fwrite(header.data(), 1, header.size(), file_);
    std::fflush(file_);
  }
}

ResultWriter::~ResultWriter() {
  if (file_) std::fclose(file_);
}

void ResultWriter::append(const UnitRows& rows) {
  std::string text;
  for (const Cells& cells : rows) {
    text += format_.separator(rows_written_ == 0) + format_.row(cells);
    if (format_.format() == FileFormat::Csv) text += "\n";
    ++rows_written_;
  }
  // One write per unit, flushed: a kill loses at most the unit being written.
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    throw InputError(path_, "", fmt::format("a writable file ({})", std::strerror(errno)));
}

void ResultWriter::finish() {
  std::string footer = format_.footer();
  std::fwrite(footer.data(), 1, footer.size(), file_);
  std::fclose(file_);
  file_ = nullptr;
}

}  // namespace fusim::sweep
