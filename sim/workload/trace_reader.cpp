// Reading trace JSON: the structure, types and attribute names of traces/SCHEMA.md, with
// every message naming the JSON path; then validate_and_sort checks the semantics.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json_view.h"
#include "workload/trace_io.h"
#include "workload/validate.h"

namespace fusim::workload {
namespace {

std::string short_dump(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

DType read_dtype(const JsonView& v) {
  if (!v.raw().is_string())
    v.fail_got("a dtype name (float32, float16, bfloat16, int64, int32, bool)");
  auto d = parse_dtype(v.raw().get<std::string>());
  if (!d) v.fail_got("a dtype (float32, float16, bfloat16, int64, int32, bool)");
  return *d;
}

// A shape: a list of dims >= 1 ([] is a scalar).
Shape read_shape(const JsonView& v) {
  if (!v.raw().is_array()) v.fail_got("a shape (a list of positive integers)");
  Shape s;
  constexpr std::int64_t kMaxElements = kMaxShapeElements;
  std::int64_t elements = 1;
  for (const auto& e : v.elements()) {
    std::int64_t d = e.as_int_at_least(1);
    if (d > kMaxElements || elements > kMaxElements / d)
      v.fail(fmt::format("a shape of at most 2^40 elements, got {}", short_dump(v.raw())));
    elements *= d;
    s.push_back(d);
  }
  return s;
}

// A list of integers (kernel, stride, dims, ...); values are checked by the validator,
// which also sees generator-built traces, so its messages cover both.
std::vector<std::int64_t> read_int_list(const JsonView& v, std::string_view form) {
  bool ok = v.raw().is_array();
  for (std::size_t i = 0; ok && i < v.raw().size(); ++i) ok = v.raw()[i].is_number_integer();
  if (!ok) v.fail(fmt::format("{}, got {}", form, short_dump(v.raw())));
  return v.as_int_list();
}

// `tied_to` (weight tying, issue 20) is a member of params only.
TensorSpec read_tensor_spec(const JsonView& v, DType default_dtype, bool default_grad,
                            bool param = false) {
  v.require_object();
  if (param)
    v.reject_unknown_keys({"name", "shape", "dtype", "requires_grad", "tied_to"});
  else
    v.reject_unknown_keys({"name", "shape", "dtype", "requires_grad"});
  TensorSpec t;
  t.name = v.at("name").as_nonempty_string();
  t.shape = read_shape(v.at("shape"));
  t.dtype = v.has("dtype") ? read_dtype(v.at("dtype")) : default_dtype;
  t.requires_grad = v.get_bool("requires_grad", default_grad);
  if (param && v.has("tied_to")) t.tied_to = v.at("tied_to").as_nonempty_string();
  return t;
}

std::vector<TensorSpec> read_specs(const JsonView& parent, std::string_view key, DType dtype,
                                   bool grad) {
  std::vector<TensorSpec> out;
  auto v = parent.find(key);
  if (!v) return out;
  if (!v->raw().is_array()) v->fail_got("an array of tensor specs");
  for (const auto& e : v->elements())
    out.push_back(read_tensor_spec(e, dtype, grad, key == "params"));
  return out;
}

// Attribute names each op takes (SCHEMA.md), and which of them are required.
struct AttrRule {
  std::vector<std::string_view> allowed, required;
};

AttrRule attr_rule(OpKind op) {
  switch (op) {
    case OpKind::Linear:
      return {{"bias"}, {}};
    case OpKind::Conv2d:
      return {{"kernel", "stride", "padding", "dilation", "groups", "bias"}, {"kernel"}};
    case OpKind::BatchNorm:
      return {{"eps", "momentum"}, {}};
    case OpKind::LayerNorm:
      return {{"normalized_shape", "eps"}, {"normalized_shape"}};
    case OpKind::Gelu:
      return {{"approximate"}, {}};
    case OpKind::Dropout:
      return {{"p"}, {}};
    case OpKind::MaxPool2d:
      return {{"kernel", "stride", "padding", "dilation", "ceil_mode"}, {"kernel"}};
    case OpKind::AvgPool2d:
      return {{"kernel", "stride", "padding", "ceil_mode", "count_include_pad"}, {"kernel"}};
    case OpKind::AdaptiveAvgPool2d:
      return {{"output_size"}, {"output_size"}};
    case OpKind::Add:
    case OpKind::Mul:
      return {{"scalar"}, {}};
    case OpKind::Concat:
      return {{"dim"}, {"dim"}};
    case OpKind::Flatten:
      return {{"start_dim", "end_dim"}, {}};
    case OpKind::Permute:
      return {{"dims"}, {"dims"}};
    case OpKind::Embedding:
      return {{"padding_idx"}, {}};
    case OpKind::Softmax:
      return {{"dim"}, {"dim"}};
    case OpKind::ScaledDotProductAttention:
      return {{"heads", "causal", "p", "kv_heads"}, {"heads"}};
    // LLM ops (issue 20)
    case OpKind::RmsNorm:
      return {{"normalized_shape", "eps"}, {"normalized_shape"}};
    case OpKind::Rope:
      return {{"heads", "theta"}, {"heads"}};
    // ATen capture: generic kinds
    case OpKind::GenericElementwise:
      return {{"aten", "flops_per_element"}, {}};
    case OpKind::GenericReduction:
      return {{"aten", "reduce", "flops_per_element"}, {"reduce"}};
    case OpKind::GenericDataMovement:
      return {{"aten"}, {}};
    case OpKind::GenericMatmul:
      return {{"aten", "contraction"}, {"contraction"}};
    default:
      return {{}, {}};
  }
}

LayerAttrs read_attrs(const JsonView& layer, OpKind op) {
  LayerAttrs a;
  // Defaults of SCHEMA.md; pools' stride defaults to the kernel below.
  a.stride = {1, 1};
  a.padding = {0, 0};
  a.dilation = {1, 1};
  auto found = layer.find("attrs");
  if (!found) {
    if (!attr_rule(op).required.empty()) layer.at("attrs");  // throws: missing member "attrs"
    if (op == OpKind::MaxPool2d || op == OpKind::AvgPool2d) a.stride = a.kernel;
    return a;
  }
  const JsonView& v = *found;
  v.require_object();
  AttrRule rule = attr_rule(op);
  for (const auto& key : v.keys()) {
    bool known = false;
    for (auto k : rule.allowed) known = known || k == key;
    if (!known) {
      std::string takes = rule.allowed.empty() ? std::string("none")
                                               : fmt::format("{}", fmt::join(rule.allowed, ", "));
      throw InputError(v.file(), v.path() + "." + key,
                       fmt::format("an attribute of {} ({} takes: {}), got unknown \"{}\"",
                                   to_string(op), to_string(op), takes, key));
    }
  }
  for (auto k : rule.required) v.at(k);  // throws naming the missing attribute
  const char* pair_form = "a list of 2 integers";
  bool is_pool = op == OpKind::MaxPool2d || op == OpKind::AvgPool2d;
  if (auto k = v.find("kernel")) a.kernel = read_int_list(*k, pair_form);
  if (auto k = v.find("stride"))
    a.stride = read_int_list(*k, pair_form);
  else if (is_pool)
    a.stride = a.kernel;  // torch: stride defaults to kernel_size
  if (auto k = v.find("padding")) a.padding = read_int_list(*k, pair_form);
  if (auto k = v.find("dilation")) a.dilation = read_int_list(*k, pair_form);
  if (auto k = v.find("output_size")) a.output_size = read_int_list(*k, pair_form);
  if (auto k = v.find("normalized_shape"))
    a.normalized_shape = read_int_list(*k, "a list of integers");
  if (auto k = v.find("dims")) a.dims = read_int_list(*k, "a list of integers");
  a.groups = v.get_int("groups", a.groups);
  a.dim = v.get_int("dim", a.dim);
  a.start_dim = v.get_int("start_dim", a.start_dim);
  a.end_dim = v.get_int("end_dim", a.end_dim);
  a.heads = v.get_int("heads", a.heads);
  a.padding_idx = v.get_int("padding_idx", a.padding_idx);
  a.eps = v.get_number("eps", a.eps);
  a.momentum = v.get_number("momentum", a.momentum);
  a.p = v.get_number("p", a.p);
  a.bias = v.get_bool("bias", a.bias);
  a.causal = v.get_bool("causal", a.causal);
  a.ceil_mode = v.get_bool("ceil_mode", a.ceil_mode);
  a.count_include_pad = v.get_bool("count_include_pad", a.count_include_pad);
  a.approximate = v.get_string("approximate", a.approximate);
  if (auto k = v.find("scalar")) a.scalar = k->as_number();
  // LLM attrs (issue 20)
  a.kv_heads = v.get_int("kv_heads", a.kv_heads);
  if (a.kv_heads == a.heads) a.kv_heads = 0;  // stored as 0: plain multi-head attention
  a.theta = v.get_number("theta", a.theta);
  // ATen capture: generic kinds (values checked by the validator)
  a.aten = v.get_string("aten", a.aten);
  a.flops_per_element = v.get_int("flops_per_element", a.flops_per_element);
  a.reduce = v.get_int("reduce", a.reduce);
  a.contraction = v.get_int("contraction", a.contraction);
  return a;
}

// The capture member: which path of scripts/capture_trace.py made the trace and how its
// control flow was captured.
CaptureInfo read_capture(const JsonView& v) {
  v.require_object();
  v.reject_unknown_keys({"path", "control_flow"});
  CaptureInfo c;
  auto path = v.at("path");
  c.path = path.as_string();
  if (c.path != "fx" && c.path != "aten") path.fail_got("\"fx\" or \"aten\"");
  auto flow = v.at("control_flow");
  c.control_flow = flow.as_string();
  if (c.control_flow != "symbolic" && c.control_flow != "as-run-shapes" &&
      c.control_flow != "as-run-values")
    flow.fail_got("\"symbolic\", \"as-run-shapes\" or \"as-run-values\"");
  return c;
}

// Layer ids and model input names, to resolve `inputs` entries.
struct NameTable {
  std::map<std::int64_t, std::size_t> layer_by_id;
  std::map<std::string, std::size_t> input_by_name;
  std::string input_names;  // for messages
};

InputRef resolve_input(const JsonView& v, const NameTable& names) {
  auto expected = [&] {
    return fmt::format("a layer id or a model input name ({}), got {}", names.input_names,
                       short_dump(v.raw()));
  };
  if (v.raw().is_number_integer()) {
    auto it = names.layer_by_id.find(v.raw().get<std::int64_t>());
    if (it == names.layer_by_id.end()) v.fail(expected() + " (no layer has this id)");
    return {InputRef::Source::Layer, static_cast<int>(it->second)};
  }
  if (v.raw().is_string()) {
    auto it = names.input_by_name.find(v.raw().get<std::string>());
    if (it == names.input_by_name.end()) v.fail(expected() + " (no model input has this name)");
    return {InputRef::Source::ModelInput, static_cast<int>(it->second)};
  }
  v.fail(expected());
}

Layer read_layer(const JsonView& v, const Trace& trace, const NameTable& names) {
  v.require_object();
  v.reject_unknown_keys(
      {"id", "name", "op", "attrs", "inputs", "output", "output_dtype", "params", "buffers"});
  Layer l;
  l.id = static_cast<int>(v.at("id").as_int_at_least(0));
  l.name = v.at("name").as_nonempty_string();
  auto opv = v.at("op");
  auto op = parse_op_kind(opv.as_string());
  if (!op) {
    std::vector<std::string_view> all;
    for (OpKind k : all_op_kinds()) all.push_back(to_string(k));
    opv.fail_got(fmt::format("an op name ({})", fmt::join(all, ", ")));
  }
  l.op = *op;
  l.attrs = read_attrs(v, l.op);
  auto inputs = v.at("inputs");
  inputs.require_array();
  for (const auto& e : inputs.elements()) l.inputs.push_back(resolve_input(e, names));
  l.output = read_shape(v.at("output"));
  l.output_dtype = v.has("output_dtype") ? read_dtype(v.at("output_dtype")) : trace.dtype;
  l.params = read_specs(v, "params", trace.dtype, true);
  l.buffers = read_specs(v, "buffers", trace.dtype, false);
  return l;
}

}  // namespace

Trace parse_trace(const nlohmann::json& document, const std::string& name) {
  JsonView root(document, name);
  root.require_object();
  root.reject_unknown_keys(
      {"format", "version", "model", "batch", "dtype", "source", "capture", "inputs", "layers"});
  auto format = root.at("format");
  if (!format.raw().is_string() || format.raw().get<std::string>() != "fusim-trace")
    format.fail_got("\"fusim-trace\"");
  auto version = root.at("version");
  if (!version.raw().is_number_integer() || version.raw().get<std::int64_t>() != 1)
    version.fail_got("1 (the trace format version this fusim reads)");

  Trace t;
  t.file = name;
  t.model = root.at("model").as_nonempty_string();
  t.batch = root.at("batch").as_positive_int();
  t.dtype = read_dtype(root.at("dtype"));
  if (!is_floating(t.dtype)) root.at("dtype").fail_got("a floating-point dtype for activations");
  t.source = root.at("source").as_string();
  if (auto c = root.find("capture")) t.capture = read_capture(*c);
  auto inputs = root.at("inputs");
  if (!inputs.raw().is_array()) inputs.fail_got("an array of tensor specs");
  for (const auto& e : inputs.elements()) t.inputs.push_back(read_tensor_spec(e, t.dtype, false));

  NameTable names;
  for (std::size_t k = 0; k < t.inputs.size(); ++k) {
    names.input_by_name.emplace(t.inputs[k].name, k);
    names.input_names += (k ? ", " : "") + t.inputs[k].name;
  }
  auto layers = root.at("layers");
  if (!layers.raw().is_array()) layers.fail_got("an array of layers");
  auto elements = layers.elements();
  // Ids first, so inputs can name layers that come later in the file.
  for (std::size_t i = 0; i < elements.size(); ++i) {
    elements[i].require_object();
    auto idv = elements[i].at("id");
    std::int64_t id = idv.as_int_at_least(0);
    if (id > INT32_MAX) idv.fail_got("a layer id below 2^31");
    auto [it, fresh] = names.layer_by_id.emplace(id, i);
    if (!fresh)
      idv.fail(fmt::format("a unique layer id, got {} (also layers[{}].id)", id, it->second));
  }
  for (const auto& e : elements) t.layers.push_back(read_layer(e, t, names));
  validate_and_sort(t);
  return t;
}

Trace load_trace(const std::string& path) {
  return parse_trace(load_json_file(path), path);
}

}  // namespace fusim::workload
