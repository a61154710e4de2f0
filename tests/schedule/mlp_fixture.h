#pragma once
// The 3-layer MLP of the hand-computed tests: batch 8, 64 -> 64 -> 64 -> 10, float32.
//   fc1 (bias) relu1 fc2 (bias) relu2 fc3 (no bias) loss
// Bytes (every size is a multiple of the allocator's 512 B except where noted):
//   fc1.weight, fc2.weight 64*64*4 = 16384; fc1.bias, fc2.bias 256 -> 512;
//   fc3.weight 10*64*4 = 2560; weights 36352 in all.
//   input, fc1/relu1/fc2/relu2 outputs and their grads 8*64*4 = 2048;
//   fc3.out, its grad, log_probs 8*10*4 = 320 -> 512; target 64 -> 512; loss 4 -> 512.
#include <string>

#include "core/json_view.h"
#include "schedule/mixed.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

namespace fusim::schedule::testing {

inline workload::Trace mlp3() {
  const char* text = R"({"format":"fusim-trace","version":1,"model":"mlp3","batch":8,
   "dtype":"float32","source":"tests/schedule",
   "inputs":[{"name":"input","shape":[8,64]},{"name":"target","shape":[8],"dtype":"int64"}],
   "layers":[
    {"id":0,"name":"fc1","op":"linear","attrs":{"bias":true},"inputs":["input"],"output":[8,64],
     "params":[{"name":"fc1.weight","shape":[64,64]},{"name":"fc1.bias","shape":[64]}]},
    {"id":1,"name":"relu1","op":"relu","attrs":{},"inputs":[0],"output":[8,64]},
    {"id":2,"name":"fc2","op":"linear","attrs":{"bias":true},"inputs":[1],"output":[8,64],
     "params":[{"name":"fc2.weight","shape":[64,64]},{"name":"fc2.bias","shape":[64]}]},
    {"id":3,"name":"relu2","op":"relu","attrs":{},"inputs":[2],"output":[8,64]},
    {"id":4,"name":"fc3","op":"linear","attrs":{"bias":false},"inputs":[3],"output":[8,10],
     "params":[{"name":"fc3.weight","shape":[10,64]}]},
    {"id":5,"name":"loss","op":"cross_entropy","attrs":{},"inputs":[4,"target"],"output":[]}]})";
  return workload::parse_trace(parse_json_text(text, "mlp3"), "mlp3");
}

// "F:fc1 F:relu1 ... U:fc3@1" (step suffix only for steps > 0).
inline std::string op_order(const workload::Trace& trace, const Schedule& s) {
  std::string out;
  for (const auto& op : s.ops) {
    if (!out.empty()) out += ' ';
    out += std::string(to_string(op.kind)) + ":" + trace.layers[std::size_t(op.layer)].name;
    if (op.step > 0) out += "@" + std::to_string(op.step);
  }
  return out;
}

inline Schedule build(const workload::Trace& trace, Ordering ordering, const std::string& optimizer,
                      OptimizerImpl impl = OptimizerImpl::Foreach, int steps = 0) {
  ScheduleOptions o;
  o.ordering = ordering;
  o.optimizer = optimizer;
  o.impl = impl;
  o.steps = steps;
  return build_schedule(trace, o);
}

}  // namespace fusim::schedule::testing
