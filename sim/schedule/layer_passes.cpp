#include "schedule/layer_passes.h"

#include <map>
#include <set>

#include "core/error.h"
#include "workload/cost.h"
#include "workload/shape_rules.h"

namespace fusim::schedule {
namespace {
using workload::InputRef;
using workload::Layer;
using LK = workload::OpKind;

// What autograd saves from the forward of one layer, beyond its inputs/output.
struct SavedExtra {
  const char* suffix;
  std::int64_t bytes;
};

class LayerTensors {
 public:
  LayerTensors(const workload::Trace& trace, const std::vector<LayerRole>& roles,
               TensorRegistry& registry, const MemoryOptions& memory)
      : trace_(trace), roles_(roles), reg_(registry), memory_(memory) {}

  int model_input(int index, int step) {
    const auto& spec = trace_.inputs[std::size_t(index)];
    return reg_.get(spec.name, step, TensorCategory::Inputs, -1,
                    workload::numel(spec.shape) * workload::dtype_bytes(spec.dtype));
  }
  // The tensor behind a layer input (a view's output is its input's tensor).
  int input(const InputRef& ref, int step) {
    if (ref.source == InputRef::Source::ModelInput) return model_input(ref.index, step);
    return output(ref.index, step);
  }
  int output(int layer, int step) {
    const Layer& l = trace_.layers[std::size_t(layer)];
    // A parameter layer's output is its parameter (or buffer) itself.
    if (l.op == LK::Parameter) return l.params.empty() ? buffer(layer, 0) : param(layer, 0);
    if (roles_[std::size_t(layer)].is_view) return input(l.inputs.at(0), step);
    return reg_.get(l.name + ".out", step, TensorCategory::Activations, layer, out_bytes(l));
  }
  // Gradient of a layer's output (activation gradients are temporaries of the backward).
  int grad(int layer, int step) {
    const Layer& l = trace_.layers[std::size_t(layer)];
    // Consumers of a parameter layer accumulate straight into the parameter's gradient.
    if (l.op == LK::Parameter) return param_grad(layer, 0, step);
    if (roles_[std::size_t(layer)].is_view) return grad(l.inputs.at(0).index, step);
    return reg_.get(l.name + ".out.grad", step, TensorCategory::Temporaries, layer, out_bytes(l));
  }
  int extra(int layer, int step, const SavedExtra& e) {
    const Layer& l = trace_.layers[std::size_t(layer)];
    return reg_.get(l.name + "." + e.suffix, step, TensorCategory::Activations, layer, e.bytes);
  }
  // A tied param (issue 20) is its owner's tensor: the registry key is the owner's name.
  // (The tensor's layer and param index are those of whoever registers it first.)
  int param(int layer, int p) {
    const auto& spec = trace_.layers[std::size_t(layer)].params[std::size_t(p)];
    return reg_.get(key_of(spec), -1, TensorCategory::Weights, layer, spec_bytes(spec), p);
  }
  int buffer(int layer, int b) {
    const auto& spec = trace_.layers[std::size_t(layer)].buffers[std::size_t(b)];
    return reg_.get(spec.name, -1, TensorCategory::Weights, layer, spec_bytes(spec));
  }
  // Mixed precision keeps float32 main grads; a persistent grad buffer is one tensor for
  // every step (step -1), as Megatron's contiguous buffer is (memory_options.h).
  int param_grad(int layer, int p, int step) {
    const auto& spec = trace_.layers[std::size_t(layer)].params[std::size_t(p)];
    const std::int64_t bytes =
        workload::numel(spec.shape) * grad_element_bytes(memory_, spec.dtype);
    const bool persistent = memory_.grad_buffer == GradBuffer::Persistent;
    return reg_.get(key_of(spec) + ".grad", persistent ? -1 : step, TensorCategory::Grads, layer,
                    bytes, p);
  }
  static const std::string& key_of(const workload::TensorSpec& s) {
    return s.tied_to.empty() ? s.name : s.tied_to;
  }

  static std::int64_t spec_bytes(const workload::TensorSpec& s) {
    return workload::numel(s.shape) * workload::dtype_bytes(s.dtype);
  }
  static std::int64_t out_bytes(const Layer& l) {
    return workload::numel(l.output) * workload::dtype_bytes(l.output_dtype);
  }

 private:
  const workload::Trace& trace_;
  const std::vector<LayerRole>& roles_;
  TensorRegistry& reg_;
  const MemoryOptions& memory_;
};

// Extra tensors autograd saves (beyond inputs and output), by op.
std::vector<SavedExtra> saved_extras(const workload::Trace& trace, const Layer& l,
                                     AttentionMemory attention) {
  std::int64_t n = workload::numel(l.output);
  switch (l.op) {
    case LK::Dropout:
      if (l.attrs.p == 0) return {};  // returns its input (layer_roles)
      return {{"mask", n}};           // bool mask, 1 byte per element
    case LK::MaxPool2d:
      return {{"indices", n * 8}};  // int64 argmax per output element
    case LK::BatchNorm:             // save_mean, save_invstd: float32 [C] each
      return {{"stats", 2 * l.output.at(1) * 4}};
    case LK::LayerNorm: {  // mean, rstd: float32, one per normalized row
      std::int64_t rows = n / std::max<std::int64_t>(1, workload::numel(l.attrs.normalized_shape));
      return {{"stats", 2 * rows * 4}};
    }
    case LK::ScaledDotProductAttention: {
      const std::int64_t rows = l.output.at(0) * l.attrs.heads * l.output.at(1);
      if (attention == AttentionMemory::Flash)  // logsumexp [N, heads, L] float32
        return {{"logsumexp", rows * 4}};
      // Materialized (memory_options.h): softmax output [N, heads, L, S]; with dropout the
      // bool mask and the dropped probabilities the product with V saves (issue 20).
      const std::int64_t scores = rows * workload::input_shape(trace, l.inputs.at(1)).at(1);
      const std::int64_t b = workload::dtype_bytes(l.output_dtype);
      if (l.attrs.p > 0)
        return {{"probs", scores * b}, {"dropout_mask", scores}, {"dropped_probs", scores * b}};
      return {{"probs", scores * b}};
    }
    // LLM ops (issue 20)
    case LK::RmsNorm: {  // rstd: float32, one per normalized row
      std::int64_t rows = n / std::max<std::int64_t>(1, workload::numel(l.attrs.normalized_shape));
      return {{"stats", rows * 4}};
    }
    default:
      break;
  }
  return {};
}

// Which of its own tensors a layer's backward reads (derivatives.yaml): inputs (by
// position), the output, the extras. for_weight: the weight-gradient part.
struct SavedUse {
  std::vector<int> inputs;
  bool output = false, extras = false, weight = false;
};
SavedUse backward_reads(const workload::Trace& trace, const Layer& l, bool for_weight) {
  switch (l.op) {
    case LK::Linear:
    case LK::Conv2d:  // grad_input = grad_out * W;  grad_W = grad_out^T * x
      return for_weight ? SavedUse{{0}, false, false, false} : SavedUse{{}, false, false, true};
    case LK::BatchNorm:
    case LK::LayerNorm:  // both read x and the saved statistics; grad_input also gamma
    case LK::RmsNorm:    // (issue 20) x, rstd and the weight, as layer_norm
      return {{0}, false, true, !for_weight};
    case LK::Swiglu:  // (issue 20) Megatron-core SwiGLUFunction saves its input only
      return {{0}, false, false, false};
    case LK::Embedding:
      return {{0}, false, false, false};  // index scatter of grad rows
    case LK::Relu:
    case LK::Sigmoid:
    case LK::Tanh:
    case LK::Softmax:
      return {{}, true, false, false};  // derivative from the result
    case LK::Relu6:                     // hardtanh_backward(grad, self)
    case LK::Gelu:
    case LK::Silu:
      return {{0}, false, false, false};
    case LK::Dropout:
    case LK::MaxPool2d:
      return {{}, false, true, false};  // mask / indices
    case LK::Mul:
    case LK::Matmul:
    case LK::Bmm:
      return {{0, 1}, false, false, false};
    case LK::ScaledDotProductAttention:
      return {{0, 1, 2}, true, true, false};
    // ATen capture: generic kinds read what their cost rule saves (cost.cpp, generic()).
    case LK::GenericElementwise:
    case LK::GenericReduction:
    case LK::GenericDataMovement: {
      SavedUse use;
      for (std::size_t k = 0; k < l.inputs.size(); ++k)
        if (l.op != LK::GenericDataMovement ||
            !workload::is_floating(workload::input_dtype(trace, l.inputs[k])))
          use.inputs.push_back(int(k));
      return use;
    }
    case LK::GenericMatmul:
      return {{0, 1}, false, false, false};
    default:
      return {};  // add, concat, pools by averaging, views: only the output grad
  }
}
}  // namespace

std::vector<LayerRole> layer_roles(const workload::Trace& trace) {
  std::vector<LayerRole> roles(trace.layers.size());
  for (std::size_t i = 0; i < trace.layers.size(); ++i) {
    const Layer& l = trace.layers[i];
    LayerRole& r = roles[i];
    r.is_loss = l.op == LK::CrossEntropy;
    // Dropout with p = 0 returns its input (aten/src/ATen/native/Dropout.cpp: `if (p == 0 ||
    // !train || input.numel() == 0) return input;`): no kernel, no mask. Swin-T's ATen
    // capture has twelve of them; costed as a dropout, each was predicted at 7x its time.
    r.is_view = workload::is_view(l.op) || (l.op == LK::Dropout && l.attrs.p == 0);
    r.is_parameter = l.op == LK::Parameter;
    for (std::size_t p = 0; p < l.params.size(); ++p)
      if (l.params[p].requires_grad) {
        r.trained_params.push_back(int(p));
        if (l.params[p].tied_to.empty()) r.updated_params.push_back(int(p));
      }
    // No gradient reaches it (Layer::output_requires_grad): no Bw, and its params no update.
    r.has_bw = !r.trained_params.empty() && l.output_requires_grad;
    r.has_update = r.has_bw && !r.updated_params.empty();
    bool grad_input = false;
    for (const auto& in : l.inputs) {
      if (in.source != InputRef::Source::Layer) continue;
      FUSIM_ASSERT(std::size_t(in.index) < i, "trace layers are in topological order");
      roles[std::size_t(in.index)].consumers.push_back(int(i));
      grad_input = grad_input || roles[std::size_t(in.index)].requires_grad;
    }
    // Integer and bool outputs (a comparison's), and outputs no gradient reaches, carry none
    // (Layer::output_requires_grad).
    r.requires_grad = (r.has_bw || grad_input) && l.output_requires_grad;
    r.has_bx = !r.is_loss && grad_input && r.requires_grad;
  }
  // Weight tying (issue 20): who shares whose param.
  std::map<std::string, int> owner;
  for (std::size_t i = 0; i < trace.layers.size(); ++i)
    for (const auto& p : trace.layers[i].params)
      if (p.tied_to.empty()) owner[p.name] = int(i);
  for (std::size_t i = 0; i < trace.layers.size(); ++i)
    for (const auto& p : trace.layers[i].params) {
      if (p.tied_to.empty() || !p.requires_grad) continue;
      const int o = owner.at(p.tied_to);
      roles[i].tied_owners.push_back(o);
      roles[std::size_t(o)].tied_users.push_back(int(i));
    }
  return roles;
}

void attach_layer_passes(const workload::Trace& trace, const std::vector<LayerRole>& roles,
                         TensorRegistry& registry, Schedule& schedule) {
  LayerTensors t(trace, roles, registry, schedule.memory);
  std::set<int> written;  // gradient tensors written so far (accumulate after the first)
  auto grad_write = [&](int tensor) {
    return written.insert(tensor).second ? AccessMode::Write : AccessMode::ReadWrite;
  };
  for (auto& op : schedule.ops) {
    if (op.kind == OpKind::Update) continue;
    const int i = op.layer;
    const Layer& l = trace.layers[std::size_t(i)];
    const LayerRole& role = roles[std::size_t(i)];
    const int s = op.step;
    op.layer_op = l.op;
    op.passes.clear();
    // A view (and a parameter layer, a view of its parameter): metadata only, no kernel,
    // no memory traffic; a parameter layer's B is autograd's AccumulateGrad, which the
    // consumers' backward ops already did by writing into the parameter's gradient.
    if (role.is_view || role.is_parameter) {
      op.kernels = 0;
      op.flops = 0;
      continue;
    }
    const workload::LayerCost cost = workload::layer_cost(trace, l);
    op.kernels = 1;
    switch (op.kind) {
      case OpKind::Forward: {
        MemoryPass pass;
        for (const auto& in : l.inputs) pass.accesses.push_back({t.input(in, s), AccessMode::Read});
        for (std::size_t p = 0; p < l.params.size(); ++p)
          pass.accesses.push_back({t.param(i, int(p)), AccessMode::Read});
        // batch_norm in training updates running_mean/var in place.
        for (std::size_t b = 0; b < l.buffers.size(); ++b)
          pass.accesses.push_back({t.buffer(i, int(b)), AccessMode::ReadWrite});
        pass.accesses.push_back({t.output(i, s), AccessMode::Write});
        for (const auto& e : saved_extras(trace, l, schedule.memory.attention))
          pass.accesses.push_back({t.extra(i, s, e), AccessMode::Write});
        pass.flops = cost.flops_fwd;
        op.passes.push_back(pass);
        break;
      }
      case OpKind::Loss: {
        // cross_entropy = log_softmax + nll_loss; L runs the forward and seeds backward
        // (grad of the logits = softmax - one_hot(target), scaled by 1/M).
        FUSIM_ASSERT(l.inputs.size() == 2, "cross_entropy has logits and target");
        const int logits = t.input(l.inputs[0], s), target = t.input(l.inputs[1], s);
        const int log_probs = registry.get(l.name + ".log_probs", s, TensorCategory::Activations, i,
                                           schedule.tensors[std::size_t(logits)].bytes);
        const int loss = registry.get(l.name + ".out", s, TensorCategory::Activations, i,
                                      LayerTensors::out_bytes(l));
        op.passes.push_back({{{logits, AccessMode::Read},
                              {target, AccessMode::Read},
                              {log_probs, AccessMode::Write},
                              {loss, AccessMode::Write}},
                             cost.flops_fwd});
        MemoryPass back{{{log_probs, AccessMode::Read}, {target, AccessMode::Read}},
                        cost.flops_bwd_input};
        if (l.inputs[0].source == InputRef::Source::Layer &&
            roles[std::size_t(l.inputs[0].index)].requires_grad) {
          int g = t.grad(l.inputs[0].index, s);
          back.accesses.push_back({g, grad_write(g)});
        }
        op.passes.push_back(back);
        break;
      }
      case OpKind::BackwardInput:
      case OpKind::BackwardWeight: {
        const bool weight = op.kind == OpKind::BackwardWeight;
        MemoryPass pass;
        pass.accesses.push_back({t.grad(i, s), AccessMode::Read});
        SavedUse use = backward_reads(trace, l, weight);
        for (int k : use.inputs)
          if (std::size_t(k) < l.inputs.size())
            pass.accesses.push_back({t.input(l.inputs[std::size_t(k)], s), AccessMode::Read});
        if (use.output) pass.accesses.push_back({t.output(i, s), AccessMode::Read});
        if (use.extras)
          for (const auto& e : saved_extras(trace, l, schedule.memory.attention))
            pass.accesses.push_back({t.extra(i, s, e), AccessMode::Read});
        if (use.weight && !l.params.empty())
          pass.accesses.push_back({t.param(i, 0), AccessMode::Read});
        if (weight) {
          for (int p : role.trained_params) {
            int g = t.param_grad(i, p, s);
            pass.accesses.push_back({g, grad_write(g)});
          }
          pass.flops = cost.flops_bwd_weight;
        } else {
          for (const auto& in : l.inputs) {
            if (in.source != InputRef::Source::Layer || !roles[std::size_t(in.index)].requires_grad)
              continue;
            int g = t.grad(in.index, s);
            pass.accesses.push_back({g, grad_write(g)});
          }
          pass.flops = cost.flops_bwd_input;
        }
        op.passes.push_back(pass);
        break;
      }
      case OpKind::Update:
        break;
    }
    op.flops = 0;
    for (const auto& p : op.passes) op.flops += p.flops;
  }
}

}  // namespace fusim::schedule
