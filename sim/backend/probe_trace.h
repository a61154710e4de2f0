#pragma once
// The pieces of calibrate's probe traces (family_grid.cpp, switch_probe.cpp): small trace
// JSON documents whose last layers are a 4-class linear head and cross-entropy, so that
// every probe has a loss and a backward. No torch types here.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "workload/trace.h"

namespace fusim::backend {

// A float32 tensor entry of a trace ({"name", "shape"}).
nlohmann::json probe_tensor(const std::string& name, nlohmann::json shape);

// Appends "head" (linear, `features` -> 4, reading layer `input`) with id `id` and "loss"
// (cross-entropy against the target) with id `id + 1` to `layers`.
void append_head_and_loss(nlohmann::json& layers, int id, int input, std::int64_t batch,
                          std::int64_t features);

// The trace of `layers` with inputs "input" (`input_shape`) and "target" (batch int64
// labels), parsed as `fusim trace` reads a file (a malformed probe is a bug).
workload::Trace parse_probe_trace(const nlohmann::json& input_shape, const nlohmann::json& layers,
                                  const std::string& model, const std::string& what);

}  // namespace fusim::backend
