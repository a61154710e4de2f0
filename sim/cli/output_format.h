#pragma once
// The shared --json / --csv flags: aligned tables by default, JSON or CSV for machines.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/table.h"

namespace fusim::cli {

struct OutputFormat {
  bool json = false;
  bool csv = false;
};

void add_output_flags(CLI::App* command, OutputFormat& format, bool with_csv = true);

// Prints json (pretty, 2 spaces) if --json, the table as CSV if --csv, else as text.
void print_result(const OutputFormat& format, const nlohmann::json& json, const Table& table);

}  // namespace fusim::cli
