#pragma once
// The one JSON shape of a RunResult, shared by `fusim simulate`, `fusim run` and
// `fusim validate`: {"ordering","optimizer","impl","executor","step_time_ms",...,"per_op":[...]}.
#include <nlohmann/json.hpp>

#include "exec/run_result.h"

namespace fusim::exec {

// Times in the JSON are milliseconds (step) and microseconds (per op), as doubles; values
// the executor does not know are null.
nlohmann::json to_json(const RunResult& result, bool with_per_op = true);

}  // namespace fusim::exec
