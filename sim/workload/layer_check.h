#pragma once
// Internal to sim/workload: the per-op checks of one layer (layer_check.cpp: attributes and
// dispatch; layer_check_ops.cpp: the output-shape rule of each op family; layer_check_llm.cpp:
// those of the LLM ops). The public entry point is check_layer() in validate.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "workload/cost.h"
#include "workload/shape_rules.h"
#include "workload/validate.h"

namespace fusim::workload {

inline std::string pair_text(const std::vector<std::int64_t>& v) {
  return to_string(Shape(v));
}

inline bool name_has_role(const std::string& name, std::string_view role) {
  if (name == role) return true;
  return name.size() > role.size() &&
         name.compare(name.size() - role.size(), role.size(), role) == 0 &&
         name[name.size() - role.size() - 1] == '.';
}

class LayerCheck {
 public:
  LayerCheck(const Trace& trace, const Layer& layer, std::size_t position)
      : t_(trace), l_(layer), pos_(position), op_(to_string(layer.op)) {}

  [[noreturn]] void fail(std::string_view where, const std::string& expected) const {
    throw InputError(trace_display_name(t_),
                     fmt::format("layers[{}]{}{}", pos_, where.empty() ? "" : ".", where),
                     expected);
  }

  const Shape& in(std::size_t i) const { return input_shape(t_, l_.inputs[i]); }
  DType in_dtype(std::size_t i) const { return input_dtype(t_, l_.inputs[i]); }
  std::string in_where(std::size_t i) const { return fmt::format("inputs[{}]", i); }
  // "from layer 5" / "from model input "target"" for messages about an input.
  std::string origin(std::size_t i) const {
    const InputRef& r = l_.inputs[i];
    if (r.source == InputRef::Source::Layer)
      return fmt::format("from layer {}", t_.layers[static_cast<std::size_t>(r.index)].id);
    return fmt::format("from model input \"{}\"",
                       t_.inputs[static_cast<std::size_t>(r.index)].name);
  }

  void arity(std::size_t n) const {
    if (l_.inputs.size() != n)
      fail("inputs",
           fmt::format("{} input{} for {}, got {}", n, n == 1 ? "" : "s", op_, l_.inputs.size()));
  }
  void floating_input(std::size_t i) const {
    if (!is_floating(in_dtype(i)))
      fail(in_where(i), fmt::format("a floating-point tensor for {}, got {} {}", op_,
                                    to_string(in_dtype(i)), origin(i)));
  }
  void integer_input(std::size_t i, bool int32_ok) const {
    DType d = in_dtype(i);
    if (d != DType::Int64 && !(int32_ok && d == DType::Int32))
      fail(in_where(i),
           fmt::format("an {} tensor of class indices for {}, got {} {}",
                       int32_ok ? "int64 or int32" : "int64", op_, to_string(d), origin(i)));
  }
  void rank_at_least(std::size_t i, std::size_t min, std::string_view form) const {
    if (in(i).size() < min)
      fail(in_where(i),
           fmt::format("a tensor {} for {}, got {} {}", form, op_, to_string(in(i)), origin(i)));
  }
  void rank_exactly(std::size_t i, std::size_t rank, std::string_view form) const {
    if (in(i).size() != rank)
      fail(in_where(i),
           fmt::format("a tensor {} for {}, got {} {}", form, op_, to_string(in(i)), origin(i)));
  }

  // Params must be exactly `roles`, in order, named "<module>.<role>", floating-point.
  void params(const std::vector<std::string_view>& roles, std::string_view why) const {
    if (l_.params.size() != roles.size())
      fail("params", fmt::format("{} param{} ({}) for {}{}, got {}", roles.size(),
                                 roles.size() == 1 ? "" : "s", fmt::join(roles, ", "), op_, why,
                                 l_.params.size()));
    for (std::size_t i = 0; i < roles.size(); ++i) {
      const TensorSpec& p = l_.params[i];
      if (!name_has_role(p.name, roles[i]))
        fail(fmt::format("params[{}].name", i),
             fmt::format("a name ending in \"{}\" ({} params in order: {}), got \"{}\"", roles[i],
                         op_, fmt::join(roles, ", "), p.name));
      if (!is_floating(p.dtype))
        fail(fmt::format("params[{}].dtype", i),
             fmt::format("a floating-point dtype for a trained param, got {}", to_string(p.dtype)));
    }
  }
  void param_shape(std::size_t i, const Shape& expected, std::string_view why) const {
    if (l_.params[i].shape != expected)
      fail(fmt::format("params[{}].shape", i),
           fmt::format("{} ({}), got {}", to_string(expected), why, to_string(l_.params[i].shape)));
  }
  void no_params() const {
    if (!l_.params.empty())
      fail("params", fmt::format("no params ({} has none), got {}", op_, l_.params.size()));
  }
  // Affine norms: weight and bias of `shape`, or none (affine=False).
  void affine_params(const Shape& shape, std::string_view why) const {
    if (l_.params.empty()) return;
    params({"weight", "bias"}, " (or none without affine)");
    param_shape(0, shape, why);
    param_shape(1, shape, why);
  }
  void buffers(const Shape& channels) const {
    if (l_.op == OpKind::Parameter) return;  // checked by parameter(): its one tensor
    if (l_.op != OpKind::BatchNorm) {
      if (!l_.buffers.empty())
        fail("buffers", fmt::format("no buffers ({} has none), got {}", op_, l_.buffers.size()));
      return;
    }
    for (std::size_t i = 0; i < l_.buffers.size(); ++i) {
      const TensorSpec& b = l_.buffers[i];
      auto where = fmt::format("buffers[{}]", i);
      if (name_has_role(b.name, "running_mean") || name_has_role(b.name, "running_var")) {
        if (b.shape != channels)
          fail(where + ".shape", fmt::format("{} (one per channel), got {}", to_string(channels),
                                             to_string(b.shape)));
      } else if (name_has_role(b.name, "num_batches_tracked")) {
        if (!b.shape.empty() || b.dtype != DType::Int64)
          fail(where, "num_batches_tracked as an int64 scalar (shape [])");
      } else {
        fail(where + ".name",
             fmt::format("a batch_norm buffer (running_mean, running_var, num_batches_tracked), "
                         "got \"{}\"",
                         b.name));
      }
    }
  }

  InferredOutput run() const;

 private:
  void check_attrs() const;
  void pair(std::string_view name, const std::vector<std::int64_t>& v, std::int64_t min) const {
    constexpr std::int64_t kMax = std::int64_t{1} << 31;  // keeps window arithmetic exact
    if (v.size() != 2 || v[0] < min || v[1] < min || v[0] > kMax || v[1] > kMax)
      fail(fmt::format("attrs.{}", name),
           fmt::format("a list of 2 {}, got {}",
                       min == 1 ? "positive integers" : "non-negative integers", pair_text(v)));
  }
  InferredOutput linear() const;
  InferredOutput conv2d() const;
  InferredOutput pool(bool is_max) const;
  InferredOutput elementwise_binary() const;
  InferredOutput concat() const;
  InferredOutput matmul(bool bmm) const;
  InferredOutput attention() const;
  InferredOutput cross_entropy() const;
  InferredOutput shape_op() const;
  InferredOutput unary_float() const;
  // LLM ops (issue 20): layer_check_llm.cpp
  InferredOutput rms_norm() const;
  InferredOutput rope() const;
  InferredOutput swiglu() const;
  // ATen capture (layer_check_ops.cpp, last block)
  InferredOutput parameter() const;
  InferredOutput generic() const;

  InferredOutput same_as_input() const { return {in(0), in_dtype(0), "same shape as its input"}; }

  const Trace& t_;
  const Layer& l_;
  std::size_t pos_;
  std::string_view op_;
};

}  // namespace fusim::workload
