#include "compute/op_signature.h"
#include "core/hash.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "workload/cost.h"
#include "workload/trace_io.h"

namespace fusim::compute {
namespace {

nlohmann::json tensor_json(const workload::Shape& shape, workload::DType dtype, bool grad) {
  return {shape, std::string(workload::to_string(dtype)), grad};
}
}  // namespace

OpSignature op_signature(const workload::Trace& trace, const schedule::Schedule& schedule,
                         const schedule::Op& op) {
  nlohmann::json j;
  j["kind"] = std::string(schedule::to_string(op.kind));
  j["kernels"] = op.kernels;
  std::string shapes;
  if (op.layer >= 0) {
    const auto& l = trace.layers.at(std::size_t(op.layer));
    j["op"] = std::string(workload::to_string(l.op));
    j["attrs"] = workload::layer_attrs_json(l);
    auto& in = j["inputs"] = nlohmann::json::array();
    for (const auto& ref : l.inputs) {
      in.push_back(tensor_json(workload::input_shape(trace, ref), workload::input_dtype(trace, ref),
                               workload::input_requires_grad(trace, ref)));
      shapes +=
          (shapes.empty() ? "" : ", ") + workload::to_string(workload::input_shape(trace, ref));
    }
    j["output"] = tensor_json(l.output, l.output_dtype, l.output_requires_grad);
    auto& params = j["params"] = nlohmann::json::array();
    for (const auto& p : l.params) params.push_back(tensor_json(p.shape, p.dtype, p.requires_grad));
    j["buffers"] = l.buffers.size();
    shapes += " -> " + workload::to_string(l.output);
  }
  if (op.kind == schedule::OpKind::Update) {
    j["optimizer"] = schedule.optimizer;
    j["impl"] = std::string(schedule::to_string(schedule.impl));
  }
  auto& passes = j["passes"] = nlohmann::json::array();
  for (const auto& pass : op.passes) {
    nlohmann::json accesses = nlohmann::json::array();
    for (const auto& a : pass.accesses)
      accesses.push_back({schedule.tensors.at(std::size_t(a.tensor)).bytes, int(a.mode)});
    passes.push_back({accesses, pass.flops});
  }
  OpSignature s;
  s.key = fmt::format("{:016x}", fnv1a(j.dump()));
  s.description = fmt::format("{} {} {}", j.value("op", std::string("-")),
                              schedule::to_string(op.kind), shapes);
  if (op.kind == schedule::OpKind::Update)
    s.description +=
        fmt::format(" ({} {})", schedule.optimizer, schedule::to_string(schedule.impl));
  return s;
}

}  // namespace fusim::compute
