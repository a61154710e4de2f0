// FLOPs and bytes per layer. Conventions (also in cost.h and traces/SCHEMA.md):
//  - a multiply-add is 2 FLOPs; add, mul, div, compare, max, exp, log, erf, tanh each 1;
//  - conv/linear/matmul/attention are exact; other ops use the per-element counts below,
//    read off PyTorch's CPU kernels (aten/src/ATen/native/cpu/*.cpp) and derivatives.yaml;
//  - backward work is only counted for tensors autograd tracks (requires_grad), as PyTorch
//    skips the rest: the first conv of a CNN computes no input gradient;
//  - saved_bytes are the activations autograd saves for backward (params, which live
//    anyway, are not counted), as derivatives.yaml lists them.
#include "workload/cost.h"

#include "core/error.h"
#include "workload/shape_rules.h"

namespace fusim::workload {

const Shape& input_shape(const Trace& trace, const InputRef& ref) {
  auto i = static_cast<std::size_t>(ref.index);
  if (ref.source == InputRef::Source::Layer) {
    FUSIM_ASSERT(i < trace.layers.size(), "layer input index out of range");
    return trace.layers[i].output;
  }
  FUSIM_ASSERT(i < trace.inputs.size(), "model input index out of range");
  return trace.inputs[i].shape;
}

DType input_dtype(const Trace& trace, const InputRef& ref) {
  auto i = static_cast<std::size_t>(ref.index);
  if (ref.source == InputRef::Source::Layer) return trace.layers.at(i).output_dtype;
  return trace.inputs.at(i).dtype;
}

bool input_requires_grad(const Trace& trace, const InputRef& ref) {
  auto i = static_cast<std::size_t>(ref.index);
  if (ref.source == InputRef::Source::Layer) return trace.layers.at(i).output_requires_grad;
  return trace.inputs.at(i).requires_grad;
}

namespace {

std::int64_t bytes_of(const Shape& shape, DType dtype) {
  return numel(shape) * dtype_bytes(dtype);
}

// Batch-norm statistics (save_mean, save_invstd) and layer-norm's mean/rstd are kept in
// float32 (the accumulation type) whatever the activation dtype.
constexpr std::int64_t kStatBytes = 4;

class CostModel {
 public:
  CostModel(const Trace& trace, const Layer& layer) : t_(trace), l_(layer) {
    for (const auto& p : l_.params) {
      c_.param_elements += numel(p.shape);
      c_.param_bytes += bytes_of(p.shape, p.dtype);
    }
    c_.output_bytes = bytes_of(l_.output, l_.output_dtype);
    for (std::size_t i = 0; i < l_.inputs.size(); ++i) c_.input_bytes += in_bytes(i);
  }

  LayerCost run();

 private:
  const Shape& in(std::size_t i) const { return input_shape(t_, l_.inputs.at(i)); }
  std::int64_t in_numel(std::size_t i) const { return numel(in(i)); }
  std::int64_t in_bytes(std::size_t i) const {
    return bytes_of(in(i), input_dtype(t_, l_.inputs.at(i)));
  }
  bool in_grad(std::size_t i) const { return input_requires_grad(t_, l_.inputs.at(i)); }
  bool param_grad(std::size_t i) const {
    return i < l_.params.size() && l_.params[i].requires_grad;
  }
  bool any_param_grad() const {
    for (const auto& p : l_.params)
      if (p.requires_grad) return true;
    return false;
  }
  // A GEMM-shaped layer (linear, conv2d): `macs` multiply-adds, bias adding `bias_adds`.
  void gemm_layer(std::int64_t macs, std::int64_t bias_adds);
  // Normalisations: 7 FLOPs/element forward (sum x and sum x^2: 3; (x - mean) * invstd * w
  // + b: 4); backward 5/element for the weight grads (recompute xhat: 2, sum dy*xhat: 2,
  // sum dy: 1) and 4/element for the input grad (dx = (dy - mean(dy) - xhat*mean(dy*xhat))
  // * invstd * w, with the sums shared); without trained weights the sums count as input work.
  void norm_layer(std::int64_t elements, std::int64_t stat_count);
  // Pointwise op with `fwd`/`bwd` FLOPs per element.
  void pointwise(std::int64_t fwd, std::int64_t bwd) {
    c_.flops_fwd = fwd * in_numel(0);
    if (in_grad(0)) c_.flops_bwd_input = bwd * in_numel(0);
  }
  void matmul_like();
  void attention();
  void generic();  // ATen capture: the generic kinds (below)

  const Trace& t_;
  const Layer& l_;
  LayerCost c_;
};

void CostModel::gemm_layer(std::int64_t macs, std::int64_t bias_adds) {
  c_.flops_fwd = 2 * macs + (l_.attrs.bias ? bias_adds : 0);
  if (in_grad(0)) c_.flops_bwd_input = 2 * macs;  // dX = dY W (transposed conv for conv2d)
  if (param_grad(0)) {
    c_.flops_bwd_weight = 2 * macs;  // dW = dY^T X
    c_.saved_bytes = in_bytes(0);    // X is saved for dW
  }
  if (l_.attrs.bias && param_grad(1)) c_.flops_bwd_weight += bias_adds;  // db = sum of dY
}

void CostModel::norm_layer(std::int64_t elements, std::int64_t stat_count) {
  c_.flops_fwd = 7 * elements;
  bool weights = any_param_grad();
  if (weights) c_.flops_bwd_weight = 5 * elements;
  if (in_grad(0)) c_.flops_bwd_input = (weights ? 4 : 9) * elements;
  c_.saved_bytes = in_bytes(0) + 2 * stat_count * kStatBytes;
}

void CostModel::matmul_like() {
  auto d = matmul_dims(in(0), in(1));
  FUSIM_ASSERT(d.has_value(), "matmul shapes were validated");
  std::int64_t flops = 2 * d->batch * d->n * d->k * d->m;
  c_.flops_fwd = flops;
  // dA = dY B^T and dB = A^T dY, each as many multiply-adds as forward; an operand whose
  // batch dims were broadcast also sums its per-batch gradients (batch*rows*cols - numel).
  if (in_grad(0)) {
    c_.flops_bwd_input += flops + d->batch * d->n * d->k - in_numel(0);
    c_.saved_bytes += in_bytes(1);  // B is saved for dA
  }
  if (in_grad(1)) {
    c_.flops_bwd_input += flops + d->batch * d->k * d->m - in_numel(1);
    c_.saved_bytes += in_bytes(0);  // A is saved for dB
  }
}

// The math of F.scaled_dot_product_attention per head (Vaswani et al. 2017, and PyTorch's
// reference implementation): S = q k^T * scale (+ causal mask), P = softmax(S),
// P = dropout(P), out = P v. Scores have N*heads*L*S elements.
void CostModel::attention() {
  const Shape &q = in(0), &k = in(1), &v = in(2);
  // Ev: the output width, heads x the value head size (with grouped-query attention each
  // key/value head serves heads/kv query heads: the GEMMs run per query head).
  std::int64_t N = q[0], L = q[1], E = q[2], S = k[1], Ev = l_.output[2];
  std::int64_t scores = N * l_.attrs.heads * L * S;
  bool dropout = l_.attrs.p > 0;
  std::int64_t qk = 2 * N * L * S * E, pv = 2 * N * L * S * Ev;
  // scale 1, causal mask 1, softmax 5, dropout 2 per score element
  c_.flops_fwd = qk + pv + scores * (1 + (l_.attrs.causal ? 1 : 0) + 5 + (dropout ? 2 : 0));
  DType dt = input_dtype(t_, l_.inputs[0]);
  if (in_grad(2)) c_.flops_bwd_input += pv;  // dV = P^T dOut
  if (in_grad(0) || in_grad(1)) {
    // dP = dOut v^T, dropout backward 2, softmax backward 4, scale backward 1 per element
    c_.flops_bwd_input += pv + scores * (4 + 1 + (dropout ? 2 : 0));
    if (in_grad(0)) c_.flops_bwd_input += qk;  // dQ = dS K
    if (in_grad(1)) c_.flops_bwd_input += qk;  // dK = dS^T Q
  }
  // GQA (issue 20): the per-query-head dK and dV of one group are summed into their shared
  // key/value head: (heads/kv - 1) adds per key and value element.
  const std::int64_t group = l_.attrs.heads / kv_heads_of(l_.attrs);
  if (in_grad(1)) c_.flops_bwd_input += (group - 1) * numel(k);
  if (in_grad(2)) c_.flops_bwd_input += (group - 1) * numel(v);
  // q, k, v, the softmax output, and with dropout its bool mask and the dropped copy.
  c_.saved_bytes = in_bytes(0) + in_bytes(1) + in_bytes(2) + scores * dtype_bytes(dt) +
                   (dropout ? scores * (1 + dtype_bytes(dt)) : 0);
}

// ---- ATen capture: generic kinds (traces/SCHEMA.md, "Generic layers"). The rules are
// stated per family from shapes alone; the per-op numbers (flops_per_element, reduce,
// contraction) come from the capture's table (scripts/fusim_capture/aten_ops.py).
void CostModel::generic() {
  const LayerAttrs& a = l_.attrs;
  const std::int64_t O = numel(l_.output);
  for (std::size_t i = 0; i < l_.inputs.size(); ++i) {
    const bool tracked = in_grad(i) && is_floating(input_dtype(t_, l_.inputs[i]));
    switch (l_.op) {
      case OpKind::GenericElementwise:
        // Backward per tracked input: the derivative, taken as costly as the forward, times
        // dy (k per output element), plus the sum over broadcast dims (O - X_i adds).
        if (tracked) c_.flops_bwd_input += a.flops_per_element * O + (O - in_numel(i));
        c_.saved_bytes += in_bytes(i);  // the derivative may read any operand
        break;
      case OpKind::GenericReduction:
        // Backward per tracked input: dy spread back over the combined elements, one
        // operation each (mean: a divide, amax: a select, sum: a copy).
        if (tracked) c_.flops_bwd_input += a.reduce * O;
        c_.saved_bytes += in_bytes(i);
        break;
      case OpKind::GenericMatmul:
        // dA = dY B^T and dB = A^T dY: as many multiply-adds as forward, per tracked operand.
        if (tracked) c_.flops_bwd_input += 2 * a.contraction * O;
        c_.saved_bytes += in_bytes(1 - i);  // each operand's gradient reads the other
        break;
      default:
        // Data movement: copies and gathers forward, copies and scatters of dy backward; no
        // arithmetic. Integer inputs (gather/index indices) are kept for the backward.
        if (!is_floating(input_dtype(t_, l_.inputs[i]))) c_.saved_bytes += in_bytes(i);
        break;
    }
  }
  if (l_.op == OpKind::GenericElementwise) c_.flops_fwd = a.flops_per_element * O;
  if (l_.op == OpKind::GenericReduction) c_.flops_fwd = a.flops_per_element * a.reduce * O;
  if (l_.op == OpKind::GenericMatmul) c_.flops_fwd = 2 * a.contraction * O;
}

LayerCost CostModel::run() {
  const LayerAttrs& a = l_.attrs;
  const Shape& out = l_.output;
  std::int64_t O = numel(out);
  switch (l_.op) {
    case OpKind::Linear: {
      std::int64_t in_features = in(0).back(), rows = in_numel(0) / in_features;
      gemm_layer(rows * in_features * out.back(), rows * out.back());
      break;
    }
    case OpKind::Conv2d: {
      const Shape& w = l_.params[0].shape;  // [Cout, Cin/groups, kh, kw]
      gemm_layer(O * w[1] * w[2] * w[3], O);
      break;
    }
    case OpKind::BatchNorm:
      norm_layer(in_numel(0), in(0)[1]);
      break;
    case OpKind::LayerNorm: {
      std::int64_t d = numel(Shape(a.normalized_shape));
      norm_layer(in_numel(0), in_numel(0) / d);
      break;
    }
    case OpKind::Relu:  // max(x, 0); backward threshold_backward(dy, result): 1 select
      pointwise(1, 1);
      c_.saved_bytes = c_.output_bytes;
      break;
    case OpKind::Relu6:  // hardtanh(x, 0, 6): min and max; backward 2 compares on x
      pointwise(2, 2);
      c_.saved_bytes = in_bytes(0);
      break;
    case OpKind::Gelu:
      // none: x * 0.5 * (1 + erf(x / sqrt 2)) = 5; backward dy * (cdf + x * pdf) with
      // cdf 4 and pdf = exp(-x^2/2) / sqrt(2 pi) 4, plus 3 = 11 (GeluBackward kernel).
      // tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) = 9; its backward = 18.
      if (a.approximate == "tanh")
        pointwise(9, 18);
      else
        pointwise(5, 11);
      c_.saved_bytes = in_bytes(0);
      break;
    case OpKind::Silu:  // x * sigmoid(x) = 5; backward dy * s * (1 + x * (1 - s)) = 4 + 5
      pointwise(5, 9);
      c_.saved_bytes = in_bytes(0);
      break;
    case OpKind::Sigmoid:  // 1 / (1 + exp(-x)) = 4; backward dy * (1 - y) * y = 3
      pointwise(4, 3);
      c_.saved_bytes = c_.output_bytes;
      break;
    case OpKind::Tanh:  // tanh = 1; backward dy * (1 - y^2) = 3
      pointwise(1, 3);
      c_.saved_bytes = c_.output_bytes;
      break;
    case OpKind::Dropout:
      // p = 0 returns its input (aten dropout); else native_dropout: x * mask * 1/(1-p) = 2,
      // backward the same 2, saving the bool mask (1 byte per element).
      if (a.p > 0) {
        pointwise(2, 2);
        c_.saved_bytes = in_numel(0);
      }
      break;
    case OpKind::MaxPool2d:
      // kh*kw compares per output; backward scatters dy to the argmax: 1 add per output.
      // Saves the input and the int64 argmax indices (max_pool2d_with_indices).
      c_.flops_fwd = O * a.kernel[0] * a.kernel[1];
      if (in_grad(0)) c_.flops_bwd_input = O;
      c_.saved_bytes = in_bytes(0) + O * 8;
      break;
    case OpKind::AvgPool2d:
      // window sum (kh*kw - 1 adds) + 1 divide per output; backward 1 divide and kh*kw
      // accumulations per output. Windows clipped by padding are counted whole.
      c_.flops_fwd = O * a.kernel[0] * a.kernel[1];
      if (in_grad(0)) c_.flops_bwd_input = O * (a.kernel[0] * a.kernel[1] + 1);
      c_.saved_bytes = in_bytes(0);
      break;
    case OpKind::AdaptiveAvgPool2d: {
      // Windows are separable, so the elements summed over all windows of one plane are
      // (sum of row-window lengths) * (sum of column-window lengths); per window
      // length - 1 adds + 1 divide forward, 1 divide + length adds backward.
      const Shape& x = in(0);
      std::int64_t summed = x[0] * x[1] * adaptive_window_total(x[2], a.output_size[0]) *
                            adaptive_window_total(x[3], a.output_size[1]);
      c_.flops_fwd = summed;
      if (in_grad(0)) c_.flops_bwd_input = summed + O;
      c_.saved_bytes = in_bytes(0);
      break;
    }
    case OpKind::Add:
    case OpKind::Mul: {
      bool is_mul = l_.op == OpKind::Mul;
      c_.flops_fwd = O;
      for (std::size_t i = 0; i < l_.inputs.size(); ++i) {
        if (!in_grad(i)) continue;
        // add: dy passes through; mul: dy * other. A broadcast input sums its gradient.
        c_.flops_bwd_input += (is_mul ? O : 0) + (O - in_numel(i));
        if (is_mul && l_.inputs.size() == 2) c_.saved_bytes += in_bytes(1 - i);
      }
      break;
    }
    case OpKind::Concat:
    case OpKind::Flatten:
    case OpKind::Reshape:
    case OpKind::Permute:
      break;  // copies and views: no arithmetic, nothing saved (backward slices/reshapes dy)
    case OpKind::Embedding:
      // forward gathers rows; backward accumulates dy into the weight gradient (index_add):
      // one add per output element. Saves the indices.
      if (param_grad(0)) c_.flops_bwd_weight = O;
      c_.saved_bytes = in_bytes(0);
      break;
    case OpKind::Matmul:
    case OpKind::Bmm:
      matmul_like();
      break;
    case OpKind::Softmax:
      // max, x - max, exp, sum, divide = 5; backward y * (dy - sum(dy * y)) = 4.
      pointwise(5, 4);
      c_.saved_bytes = c_.output_bytes;
      break;
    case OpKind::ScaledDotProductAttention:
      attention();
      break;
    case OpKind::Parameter:
      break;  // a view of its parameter: the consumers' gradients add up in its .grad
    case OpKind::GenericElementwise:
    case OpKind::GenericReduction:
    case OpKind::GenericDataMovement:
    case OpKind::GenericMatmul:
      generic();
      break;
    case OpKind::CrossEntropy: {
      // log_softmax (5 per element) + one log per row, nll_loss sums M picks and divides
      // once: 5MC + 2M + 1. Backward: nll scatters -1/M (M + 1), log_softmax backward
      // dy - exp(y) * sum(dy) = 4 per element. Saves the log-probabilities and targets.
      std::int64_t M = in(0)[0], C = in(0)[1];
      c_.flops_fwd = 5 * M * C + 2 * M + 1;
      if (in_grad(0)) c_.flops_bwd_input = 4 * M * C + M + 1;
      c_.saved_bytes = in_bytes(0) + in_bytes(1);
      break;
    }
    // --- LLM ops (issue 20) ---
    case OpKind::RmsNorm: {
      // y = x * rsqrt(mean(x^2) + eps) * w: x^2 and its sum 2, scale by rstd 1, by w 1 = 4
      // per element. Backward (with r = rstd, g = w * dy): dw = sum(dy * x * r): 3;
      // dx = r * (g - x * r^2 * mean(g * x)): g 1, g*x 1, sum 1, x*c 1, subtract 1, * r 1 = 6
      // (5 without a weight: no g). Saves x and one float32 rstd per row.
      std::int64_t d = numel(Shape(a.normalized_shape)), X = in_numel(0);
      bool weights = any_param_grad();
      c_.flops_fwd = 4 * X;
      if (weights) c_.flops_bwd_weight = 3 * X;
      if (in_grad(0)) c_.flops_bwd_input = (l_.params.empty() ? 5 : 6) * X;
      c_.saved_bytes = in_bytes(0) + (X / d) * kStatBytes;
      break;
    }
    case OpKind::Rope:
      // x * cos + rotate_half(x) * sin: 2 multiplies and 1 add per element (the negation of
      // rotate_half folds into sin's sign); backward is the transposed rotation, the same 3.
      // cos/sin are functions of the positions only, shared by every layer: nothing saved.
      pointwise(3, 3);
      break;
    case OpKind::Swiglu:
      // Per output element: silu(a) = 5 (as silu) and * b 1 = 6. Backward: da = dy * b *
      // silu'(a) with silu' as silu's backward 9, + 1 = 10; db = dy * silu(a): recompute 5
      // + 1 = 6; 16 in all. Saves its input (Megatron-core SwiGLUFunction.save_for_backward).
      c_.flops_fwd = 6 * O;
      if (in_grad(0)) c_.flops_bwd_input = 16 * O;
      c_.saved_bytes = in_bytes(0);
      break;
  }
  return c_;
}

}  // namespace

LayerCost layer_cost(const Trace& trace, const Layer& layer) {
  CostModel model(trace, layer);
  LayerCost c = model.run();
  // A layer autograd does not track has no backward and saves nothing.
  if (!layer.output_requires_grad) {
    c.flops_bwd_input = c.flops_bwd_weight = 0;
    c.saved_bytes = 0;
  }
  return c;
}

}  // namespace fusim::workload
