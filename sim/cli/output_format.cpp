#include "cli/output_format.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/error.h"

namespace fusim::cli {
namespace {

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

std::string csv_quoted(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string scalar_text(const nlohmann::json& v, const std::string& column) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  FUSIM_ASSERT(v.is_primitive(), "CSV column " + column + " is not a scalar");
  // Doubles as sweep's -o files write them: the shortest text that reads back as the same
  // double ("12" for 12.0); integers and true/false as JSON writes them.
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return v.dump(-1, ' ', false, kReplace);
}

std::string cell_text(const nlohmann::json* v, const std::string& column) {
  if (v == nullptr) return "";
  if (!v->is_array()) return csv_quoted(scalar_text(*v, column));
  std::string out;
  for (const auto& e : *v) out += (out.empty() ? "" : " ") + scalar_text(e, column);
  return csv_quoted(out);
}

}  // namespace

void add_output_flags(CLI::App* command, OutputFormat& format, bool with_csv) {
  auto* json = command->add_flag("--json", format.json, "Print JSON instead of a table");
  if (with_csv) {
    auto* csv = command->add_flag(
        "--csv", format.csv,
        "Print CSV instead of a table: the --json records' keys as columns, full precision, "
        "empty for unknown (docs/output_schema.md)");
    json->excludes(csv);
  }
}

const nlohmann::json* find_path(const nlohmann::json& object, const std::string& path) {
  if (!object.is_object()) return nullptr;
  if (auto it = object.find(path); it != object.end()) return &*it;
  for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
    auto it = object.find(path.substr(0, dot));
    if (it == object.end() || !it->is_object()) continue;
    if (const auto* v = find_path(*it, path.substr(dot + 1))) return v;
  }
  return nullptr;
}

std::string records_csv(const CsvRecords& records) {
  std::string out;
  for (std::size_t c = 0; c < records.columns.size(); ++c)
    out += (c ? "," : "") + csv_quoted(records.columns[c]);
  out += "\n";
  for (const auto& row : records.rows) {
    for (std::size_t c = 0; c < records.columns.size(); ++c)
      out += (c ? "," : "") + cell_text(find_path(row, records.columns[c]), records.columns[c]);
    out += "\n";
  }
  return out;
}

void print_result(const OutputFormat& format, const nlohmann::json& json, const Table& table,
                  const std::vector<CsvRecords>& csv) {
  // Names taken from the command line or file names may not be UTF-8; they are printed with
  // U+FFFD rather than letting dump() throw (json type_error 316) after the work is done.
  std::string text;
  if (format.json) {
    text = json.dump(2, ' ', false, kReplace) + "\n";
  } else if (format.csv) {
    for (std::size_t b = 0; b < csv.size(); ++b) text += (b ? "\n" : "") + records_csv(csv[b]);
  } else {
    text = table.to_text();
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace fusim::cli
