#pragma once
// The layer trace of one training step (format "fusim-trace", version 1; traces/SCHEMA.md).
// A loaded Trace has passed every check of validate.h: shapes agree along edges, the layer
// graph is a connected DAG, and `layers` is in a topological order (inputs come first).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusim::workload {

enum class DType { Float32, Float16, BFloat16, Int64, Int32, Bool };
int dtype_bytes(DType dtype);
bool is_floating(DType dtype);  // float32, float16, bfloat16
std::string_view to_string(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);  // "float32", "int64", ...

using Shape = std::vector<std::int64_t>;
std::int64_t numel(const Shape& shape);  // 1 for a scalar []
// The most elements a shape of a trace may hold (the reader's limit, and the zoo's): element
// counts stay far below 2^63 so that FLOP and byte products cannot overflow.
inline constexpr std::int64_t kMaxShapeElements = std::int64_t{1} << 40;
std::string to_string(const Shape& shape);  // "[32, 3, 224, 224]"

// The closed set of layer ops; names in the file are the snake_case strings of to_string.
enum class OpKind {
  Linear,
  Conv2d,
  BatchNorm,
  LayerNorm,
  Relu,
  Relu6,
  Gelu,
  Silu,
  Sigmoid,
  Tanh,
  MaxPool2d,
  AvgPool2d,
  AdaptiveAvgPool2d,
  Add,
  Mul,
  Concat,
  Flatten,
  Reshape,
  Permute,
  Embedding,
  Matmul,
  Bmm,
  Softmax,
  Dropout,
  ScaledDotProductAttention,
  CrossEntropy,
  // --- LLM ops (issue 20: Llama-style blocks; traces/SCHEMA.md) ---
  RmsNorm,  // "rms_norm": x * rsqrt(mean(x^2) + eps) * weight (Zhang & Sennrich 2019)
  Rope,     // "rope": rotary position embedding of q or k, rotate-half form (Su et al. 2021)
  Swiglu,   // "swiglu": silu(x[..., :F]) * x[..., F:] of a fused gate+up projection (Shazeer 2020)
  // ---- ATen capture (scripts/fusim_capture): a view of one parameter or buffer, and the
  // generic kinds of ops with no dedicated kind (SCHEMA.md, "Generic layers").
  Parameter,
  GenericElementwise,
  GenericReduction,
  GenericDataMovement,
  GenericMatmul,
};
std::string_view to_string(OpKind op);
std::optional<OpKind> parse_op_kind(std::string_view name);
const std::vector<OpKind>& all_op_kinds();

// Attributes of every op kind in one flat struct; each op reads the fields it documents in
// SCHEMA.md and the reader rejects attributes an op does not take.
struct LayerAttrs {
  std::vector<std::int64_t> kernel, stride, padding, dilation;  // conv2d, pools (2 values)
  std::vector<std::int64_t> output_size;                        // adaptive_avg_pool2d
  std::vector<std::int64_t> normalized_shape;                   // layer_norm
  std::vector<std::int64_t> dims;                               // permute
  std::int64_t groups = 1;                                      // conv2d
  std::int64_t dim = -1;                                        // softmax, concat
  std::int64_t start_dim = 1, end_dim = -1;                     // flatten
  std::int64_t heads = 0;                            // scaled_dot_product_attention, rope
  std::int64_t padding_idx = -1;                     // embedding (-1: none)
  double eps = 1e-5;                                 // batch_norm, layer_norm
  double momentum = 0.1;                             // batch_norm
  double p = 0.0;                                    // dropout probability
  bool bias = false;                                 // linear, conv2d
  bool causal = false;                               // attention
  bool ceil_mode = false, count_include_pad = true;  // pools
  std::string approximate = "none";                  // gelu: "none" | "tanh"
  std::optional<double> scalar;  // add, mul: the other operand is this number (one input)
  // --- LLM attrs (issue 20) ---
  // scaled_dot_product_attention: key/value heads of grouped-query attention (Ainslie et al.
  // 2023); 0 (the form every reader and generator stores) when they equal `heads`.
  std::int64_t kv_heads = 0;
  double theta = 10000.0;  // rope: base of the rotation frequencies theta^(-2i/d)
  // ---- ATen capture: generic kinds
  std::string aten;                    // the ATen op it stands for (informative)
  std::int64_t flops_per_element = 1;  // generic_elementwise (per output), _reduction (per
                                       // combined input element)
  std::int64_t reduce = 1;             // generic_reduction: inputs combined per output
  std::int64_t contraction = 1;        // generic_matmul: multiply-adds per output element
};
bool operator==(const LayerAttrs& a, const LayerAttrs& b);
// Key/value heads of an attention layer: attrs.kv_heads, or heads when 0 (issue 20).
std::int64_t kv_heads_of(const LayerAttrs& a);

struct TensorSpec {
  TensorSpec() = default;
  // Brace initialisation {name, shape, dtype, requires_grad} as before tied_to existed.
  TensorSpec(std::string name_, Shape shape_, DType dtype_ = DType::Float32,
             bool requires_grad_ = true, std::string tied_to_ = {})
      : name(std::move(name_)),
        shape(std::move(shape_)),
        dtype(dtype_),
        requires_grad(requires_grad_),
        tied_to(std::move(tied_to_)) {}

  std::string name;
  Shape shape;
  DType dtype = DType::Float32;
  bool requires_grad = true;
  // Weight tying (issue 20; params only): the name of another layer's param whose tensor this
  // one is (a GPT LM head sharing the token embedding). "" for a param of its own.
  std::string tied_to;
};
bool operator==(const TensorSpec& a, const TensorSpec& b);

// Where a layer input comes from: another layer's output or one of the trace's inputs.
struct InputRef {
  enum class Source { Layer, ModelInput };
  Source source = Source::Layer;
  int index = 0;  // position in Trace::layers (after loading) or in Trace::inputs
};
bool operator==(const InputRef& a, const InputRef& b);

struct Layer {
  int id = 0;  // as written in the file; unique
  std::string name;
  OpKind op = OpKind::Relu;
  LayerAttrs attrs;
  std::vector<InputRef> inputs;
  Shape output;
  DType output_dtype = DType::Float32;
  std::vector<TensorSpec> params;   // trained by the optimizer
  std::vector<TensorSpec> buffers;  // state that is not trained (batch-norm running stats)
  // Derived when the trace is validated (not stored in the file): whether autograd tracks
  // the output, i.e. the layer or one of its ancestors has params with requires_grad (or
  // reads a model input with requires_grad), the output is floating-point, and a gradient
  // reaches it from the loss (some tracked layer reads it). Layers without it have no
  // backward and their params no update.
  bool output_requires_grad = false;
};
bool operator==(const Layer& a, const Layer& b);

// How a captured trace was made (the optional top-level "capture" member).
struct CaptureInfo {
  std::string path;          // "fx" | "aten"
  std::string control_flow;  // "symbolic" | "as-run-shapes" | "as-run-values"
};
bool operator==(const CaptureInfo& a, const CaptureInfo& b);

struct Trace {
  std::string model;
  std::int64_t batch = 0;
  DType dtype = DType::Float32;
  std::string source;  // how it was made (the command line)
  std::string file;    // path it was read from ("" when built in memory)
  std::optional<CaptureInfo> capture;
  std::vector<TensorSpec> inputs;  // model inputs: data and targets
  std::vector<Layer> layers;       // topological order

  std::int64_t param_count() const;  // elements of all params (a tied param counts once)
};
// Equal content; `file` (where it was read from) is not compared.
bool operator==(const Trace& a, const Trace& b);
inline bool operator!=(const Trace& a, const Trace& b) {
  return !(a == b);
}

}  // namespace fusim::workload
