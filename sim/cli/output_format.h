#pragma once
// The shared --json / --csv flags: aligned tables for people by default, JSON or CSV for
// programs. One output schema (docs/output_schema.md): a command's CSV columns are the keys
// of its JSON records (snake_case, the unit in the name), its cells the JSON values at full
// precision, empty where the JSON says null; the human table may round and use MiB or ms.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/table.h"

namespace fusim::cli {

struct OutputFormat {
  bool json = false;
  bool csv = false;
};

void add_output_flags(CLI::App* command, OutputFormat& format, bool with_csv = true);

// A block of CSV: one line per object of `rows` (a JSON array of the command's records, as
// its --json prints them), one column per entry of `columns`: a key of those objects, or a
// dotted path into an object nested in them ("hit_rates.L1", "read_latency_ns.p99").
struct CsvRecords {
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::string> columns;
};

// The value at `path` in `object` (a key, else a dotted path as above); nullptr if none.
const nlohmann::json* find_path(const nlohmann::json& object, const std::string& path);

// The header line and one line per record (RFC 4180 quoting). Numbers at full precision
// (the shortest text that reads back as the same double, as the JSON has it), null or a
// missing key as an empty cell, an array of numbers or strings as its values joined by
// spaces (a shape "32 3 224 224", an op's deps "3 4").
std::string records_csv(const CsvRecords& records);

// --json: `json` (pretty, 2 spaces); --csv: the blocks of `csv`, a blank line between two;
// else the table as text.
void print_result(const OutputFormat& format, const nlohmann::json& json, const Table& table,
                  const std::vector<CsvRecords>& csv);

}  // namespace fusim::cli
