// Writing trace JSON: every attribute an op takes is written explicitly (defaults
// included), so a saved trace reads back equal and needs no knowledge of defaults.
#include <fmt/format.h>

#include "core/error.h"
#include "core/output_file.h"
#include "workload/trace_io.h"

namespace fusim::workload {
namespace {

nlohmann::json spec_json(const TensorSpec& t) {
  nlohmann::json j = {{"name", t.name},
                      {"shape", t.shape},
                      {"dtype", to_string(t.dtype)},
                      {"requires_grad", t.requires_grad}};
  if (!t.tied_to.empty()) j["tied_to"] = t.tied_to;  // weight tying (issue 20)
  return j;
}

nlohmann::json attrs_json(const Layer& l) {
  const LayerAttrs& a = l.attrs;
  nlohmann::json j = nlohmann::json::object();
  switch (l.op) {
    case OpKind::Linear:
      j["bias"] = a.bias;
      break;
    case OpKind::Conv2d:
      j = {{"kernel", a.kernel},     {"stride", a.stride}, {"padding", a.padding},
           {"dilation", a.dilation}, {"groups", a.groups}, {"bias", a.bias}};
      break;
    case OpKind::BatchNorm:
      j = {{"eps", a.eps}, {"momentum", a.momentum}};
      break;
    case OpKind::LayerNorm:
      j = {{"normalized_shape", a.normalized_shape}, {"eps", a.eps}};
      break;
    case OpKind::Gelu:
      j["approximate"] = a.approximate;
      break;
    case OpKind::Dropout:
      j["p"] = a.p;
      break;
    case OpKind::MaxPool2d:
      j = {{"kernel", a.kernel},
           {"stride", a.stride},
           {"padding", a.padding},
           {"dilation", a.dilation},
           {"ceil_mode", a.ceil_mode}};
      break;
    case OpKind::AvgPool2d:
      j = {{"kernel", a.kernel},
           {"stride", a.stride},
           {"padding", a.padding},
           {"ceil_mode", a.ceil_mode},
           {"count_include_pad", a.count_include_pad}};
      break;
    case OpKind::AdaptiveAvgPool2d:
      j["output_size"] = a.output_size;
      break;
    case OpKind::Add:
    case OpKind::Mul:
      if (a.scalar) j["scalar"] = *a.scalar;
      break;
    case OpKind::Concat:
    case OpKind::Softmax:
      j["dim"] = a.dim;
      break;
    case OpKind::Flatten:
      j = {{"start_dim", a.start_dim}, {"end_dim", a.end_dim}};
      break;
    case OpKind::Permute:
      j["dims"] = a.dims;
      break;
    case OpKind::Embedding:
      j["padding_idx"] = a.padding_idx;
      break;
    case OpKind::ScaledDotProductAttention:
      j = {{"heads", a.heads}, {"causal", a.causal}, {"p", a.p}};
      if (a.kv_heads != 0) j["kv_heads"] = a.kv_heads;  // GQA (issue 20); 0 = heads
      break;
    // LLM ops (issue 20)
    case OpKind::RmsNorm:
      j = {{"normalized_shape", a.normalized_shape}, {"eps", a.eps}};
      break;
    case OpKind::Rope:
      j = {{"heads", a.heads}, {"theta", a.theta}};
      break;
    // ATen capture: generic kinds
    case OpKind::GenericElementwise:
      j = {{"aten", a.aten}, {"flops_per_element", a.flops_per_element}};
      break;
    case OpKind::GenericReduction:
      j = {{"aten", a.aten}, {"reduce", a.reduce}, {"flops_per_element", a.flops_per_element}};
      break;
    case OpKind::GenericDataMovement:
      j["aten"] = a.aten;
      break;
    case OpKind::GenericMatmul:
      j = {{"aten", a.aten}, {"contraction", a.contraction}};
      break;
    default:
      break;
  }
  return j;
}

nlohmann::json layer_json(const Trace& trace, const Layer& l) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const InputRef& r : l.inputs) {
    auto i = static_cast<std::size_t>(r.index);
    if (r.source == InputRef::Source::Layer)
      inputs.push_back(trace.layers.at(i).id);
    else
      inputs.push_back(trace.inputs.at(i).name);
  }
  nlohmann::json j = {{"id", l.id},
                      {"name", l.name},
                      {"op", to_string(l.op)},
                      {"attrs", attrs_json(l)},
                      {"inputs", inputs},
                      {"output", l.output},
                      {"output_dtype", to_string(l.output_dtype)}};
  if (!l.params.empty()) {
    j["params"] = nlohmann::json::array();
    for (const auto& p : l.params) j["params"].push_back(spec_json(p));
  }
  if (!l.buffers.empty()) {
    j["buffers"] = nlohmann::json::array();
    for (const auto& b : l.buffers) j["buffers"].push_back(spec_json(b));
  }
  return j;
}

}  // namespace

nlohmann::json trace_to_json(const Trace& trace) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& t : trace.inputs) inputs.push_back(spec_json(t));
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : trace.layers) layers.push_back(layer_json(trace, l));
  nlohmann::json j = {{"format", "fusim-trace"},
                      {"version", 1},
                      {"model", trace.model},
                      {"batch", trace.batch},
                      {"dtype", to_string(trace.dtype)},
                      {"source", trace.source},
                      {"inputs", inputs},
                      {"layers", layers}};
  if (trace.capture)
    j["capture"] = {{"path", trace.capture->path}, {"control_flow", trace.capture->control_flow}};
  return j;
}

nlohmann::json layer_attrs_json(const Layer& layer) {
  return attrs_json(layer);
}

void save_trace(const Trace& trace, const std::string& path) {
  nlohmann::json j = trace_to_json(trace);
  // One layer per line: small files whose diffs show which layers changed.
  std::string text = "{";
  for (const char* key :
       {"format", "version", "model", "batch", "dtype", "source", "capture", "inputs"})
    if (j.contains(key)) text += fmt::format("\"{}\":{},\n", key, j[key].dump());
  text += "\"layers\":[\n";
  const auto& layers = j["layers"];
  for (std::size_t i = 0; i < layers.size(); ++i)
    text += layers[i].dump() + (i + 1 < layers.size() ? ",\n" : "\n");
  text += "]}\n";
  write_file_atomically(path, text, "-o");
}

}  // namespace fusim::workload
