// The backend's stand-in for a generic data-movement layer (backend/layer_ops.cpp): the
// first elements of its input, zero-padded where the output is larger (the traffic of a
// pad), each input element reaching the output at most once, so its gradient is that of a
// copy (a cyclic gather, as before, read the input again and summed repeated gradients).
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "backend/layer_ops.h"
#include "workload/trace_io.h"

using namespace fusim;

namespace {
// input [2, 3] -> generic_data_movement -> [rows, cols] -> ... -> loss (only the generic
// layer is run here).
workload::Trace trace_to(int rows, int cols) {
  return workload::parse_trace(nlohmann::json::parse(fmt::format(R"(
 {{"format":"fusim-trace","version":1,"model":"g","batch":2,"dtype":"float32","source":"test",
  "inputs":[{{"name":"input","shape":[2,3]}},{{"name":"target","shape":[2],"dtype":"int64"}}],
  "layers":[
   {{"id":0,"name":"move","op":"generic_data_movement",
    "attrs":{{"aten":"aten.constant_pad_nd.default"}},"inputs":["input"],"output":[{},{}]}},
   {{"id":1,"name":"flat","op":"flatten","inputs":[0],"output":[2,{}]}},
   {{"id":2,"name":"loss","op":"cross_entropy","inputs":[1,"target"],"output":[]}}]}})",
                                                                 rows, cols, rows * cols / 2)),
                               "g.json");
}
}  // namespace

TEST_CASE("generic data movement: a larger output is the input zero-padded, a copy's gradient") {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(1);
  const auto x = at::arange(1, 7, at::kFloat).view({2, 3}).requires_grad_(true);
  for (auto [rows, cols] : std::vector<std::pair<int, int>>{{2, 5}, {2, 2}}) {
    INFO(rows << "x" << cols);
    const auto trace = trace_to(rows, cols);
    backend::LayerTensors tensors;
    const auto y = backend::layer_forward(trace.layers.at(0), {x}, tensors, gen);
    REQUIRE(y.sizes() == at::IntArrayRef({rows, cols}));
    const auto flat = y.reshape({-1});
    const std::int64_t n = flat.numel();
    for (std::int64_t i = 0; i < n; ++i)
      CHECK(flat[i].item<float>() == (i < 6 ? float(i + 1) : 0.0f));
    x.mutable_grad() = at::Tensor();
    y.sum().backward();
    const auto g = x.grad().reshape({-1});
    // Each input element reaches the output once (if at all): gradient 1, else 0.
    for (std::int64_t i = 0; i < 6; ++i) CHECK(g[i].item<float>() == (i < n ? 1.0f : 0.0f));
  }
}
