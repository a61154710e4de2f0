#include "cli/output_format.h"

#include <cstdio>

namespace fusim::cli {

void add_output_flags(CLI::App* command, OutputFormat& format, bool with_csv) {
  auto* json = command->add_flag("--json", format.json, "Print JSON instead of a table");
  if (with_csv) {
    auto* csv = command->add_flag("--csv", format.csv, "Print CSV instead of a table");
    json->excludes(csv);
  }
}

void print_result(const OutputFormat& format, const nlohmann::json& json, const Table& table) {
  // Names taken from the command line or file names may not be UTF-8; they are printed with
  // U+FFFD rather than letting dump() throw (json type_error 316) after the work is done.
  std::string text = format.json
                         ? json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                     : format.csv ? table.to_csv()
                                  : table.to_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace fusim::cli
