#pragma once
// Reading and writing trace JSON. Reading validates everything (validate.h) and throws
// InputError naming the file, the JSON path and the expectation on the first violation.
#include <nlohmann/json.hpp>
#include <string>

#include "workload/trace.h"

namespace fusim::workload {

Trace load_trace(const std::string& path);
// `name` stands for the file in messages.
Trace parse_trace(const nlohmann::json& document, const std::string& name);
nlohmann::json trace_to_json(const Trace& trace);
// The "attrs" object of one layer as trace_to_json writes it (every attr of its op).
nlohmann::json layer_attrs_json(const Layer& layer);
// Compact JSON (one layer per line) so bundled traces stay small and diffable.
void save_trace(const Trace& trace, const std::string& path);

}  // namespace fusim::workload
