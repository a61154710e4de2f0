#include "backend/probe_trace.h"

#include "workload/trace_io.h"

namespace fusim::backend {

using nlohmann::json;

json probe_tensor(const std::string& name, json shape) {
  return {{"name", name}, {"shape", std::move(shape)}};
}

void append_head_and_loss(json& layers, int id, int input, std::int64_t batch,
                          std::int64_t features) {
  layers.push_back(
      {{"id", id},
       {"name", "head"},
       {"op", "linear"},
       {"attrs", {{"bias", true}}},
       {"inputs", {input}},
       {"output", {batch, 4}},
       {"params", {probe_tensor("head.weight", {4, features}), probe_tensor("head.bias", {4})}}});
  layers.push_back({{"id", id + 1},
                    {"name", "loss"},
                    {"op", "cross_entropy"},
                    {"inputs", {id, "target"}},
                    {"output", json::array()}});
}

workload::Trace parse_probe_trace(const json& input_shape, const json& layers,
                                  const std::string& model, const std::string& what) {
  const std::int64_t n = input_shape.at(0).get<std::int64_t>();
  const json doc{{"format", "fusim-trace"},
                 {"version", 1},
                 {"model", model},
                 {"batch", n},
                 {"dtype", "float32"},
                 {"source", "fusim calibrate"},
                 {"inputs",
                  {probe_tensor("input", input_shape),
                   {{"name", "target"}, {"shape", {n}}, {"dtype", "int64"}}}},
                 {"layers", layers}};
  return workload::parse_trace(doc, what);
}

}  // namespace fusim::backend
