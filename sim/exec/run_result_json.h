#pragma once
// The one JSON shape of a RunResult, shared by `fusim simulate`, `fusim run` and
// `fusim validate`: {"ordering","optimizer","impl","executor","step_time_ms",...,"per_op":[...]}.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/run_result.h"

namespace fusim::exec {

// Times in the JSON are milliseconds (step) and microseconds (per op), as doubles; values
// the executor does not know are null.
nlohmann::json to_json(const RunResult& result, bool with_per_op = true);

// The CSV columns of to_json's scalars (docs/output_schema.md), in the order the commands
// print them: identity, step times, then `after_times` (a command's own keys, such as
// speedup_vs_eager), traffic, hit rates and peak memory, and "hit_rates.<level>" for each
// level of `result` (the per-step and per-op lists are --json only).
std::vector<std::string> csv_columns(const RunResult& result,
                                     const std::vector<std::string>& after_times = {});

}  // namespace fusim::exec
