#pragma once
// Small traces written as JSON text for the workload tests.
#include <string>

#include "core/json_view.h"
#include "workload/trace_io.h"

namespace fusim::test {

inline const char* kHead =
    R"("format":"fusim-trace","version":1,"model":"m","batch":2,"dtype":"float32","source":"test")";

// A whole trace from its `inputs` and `layers` arrays (JSON text).
inline std::string trace_json(const std::string& inputs, const std::string& layers,
                              const std::string& head = kHead) {
  return "{" + head + R"(,"inputs":)" + inputs + R"(,"layers":)" + layers + "}";
}

inline workload::Trace parse(const std::string& text, const std::string& name = "t.json") {
  return workload::parse_trace(parse_json_text(text, name), name);
}

inline const workload::Layer& layer_named(const workload::Trace& t, const std::string& name) {
  for (const auto& l : t.layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

}  // namespace fusim::test
