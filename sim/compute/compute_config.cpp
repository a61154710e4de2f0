#include "compute/compute_config.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace fusim::compute {
namespace {
constexpr std::array<std::string_view, kOpClasses> kClassNames{
    "gemm", "conv", "elementwise", "norm", "reduction", "pool", "attention"};

FlopRates parse_rates(const JsonView& v) {
  v.require_object();
  v.reject_unknown_keys({"float32", "float16", "bfloat16"});
  FlopRates r;
  auto rate = [&](std::string_view key) {
    auto f = v.find(key);
    if (!f) return 0.0;
    double x = f->as_number();
    if (x < 0) f->fail_got("a FLOP/cycle rate >= 0");
    return x;
  };
  r.float32 = rate("float32");
  r.float16 = rate("float16");
  r.bfloat16 = rate("bfloat16");
  return r;
}

MemoryOverlap parse_overlap_name(const JsonView& v) {
  const std::string s = v.as_string();
  if (s == "double-buffered") return MemoryOverlap::DoubleBuffered;
  if (s == "serial") return MemoryOverlap::Serial;
  if (s == "serial-reads") return MemoryOverlap::SerialReads;
  v.fail_got("\"double-buffered\", \"serial\" or \"serial-reads\"");
}
}  // namespace

std::array<MemoryOverlap, kOpClasses> parse_memory_overlap(const JsonView& v) {
  std::array<MemoryOverlap, kOpClasses> out{};
  if (!v.raw().is_object()) {
    out.fill(parse_overlap_name(v));
    return out;
  }
  if (auto d = v.find("default")) out.fill(parse_overlap_name(*d));
  for (const auto& key : v.keys()) {
    if (key == "default") continue;
    std::size_t i = 0;
    while (i < kOpClasses && kClassNames[i] != key) ++i;
    if (i == kOpClasses)
      v.at(key).fail(fmt::format(
          "\"default\" or one of the op classes gemm, conv, elementwise, norm, reduction, "
          "pool, attention (unknown class \"{}\")",
          key));
    out[i] = parse_overlap_name(v.at(key));
  }
  return out;
}

std::string_view to_string(OpClass c) {
  return kClassNames[static_cast<std::size_t>(c)];
}

OpClass classify(workload::OpKind op) {
  using K = workload::OpKind;
  switch (op) {
    case K::Linear:
    case K::Matmul:
    case K::Bmm:
      return OpClass::Gemm;
    case K::Conv2d:
      return OpClass::Conv;
    case K::BatchNorm:
    case K::LayerNorm:
    case K::RmsNorm:  // LLM ops (issue 20): a per-row reduction like layer_norm
      return OpClass::Norm;
    case K::Softmax:
    case K::CrossEntropy:
      return OpClass::Reduction;
    case K::MaxPool2d:
    case K::AvgPool2d:
    case K::AdaptiveAvgPool2d:
      return OpClass::Pool;
    case K::ScaledDotProductAttention:
      return OpClass::Attention;
    // ATen capture: generic kinds by family (a parameter layer never runs a kernel)
    case K::GenericMatmul:
      return OpClass::Gemm;
    case K::GenericReduction:
      return OpClass::Reduction;
    default:
      return OpClass::Elementwise;  // activations, add/mul, copies, embedding gathers,
                                    // generic elementwise and data movement
  }
}

double FlopRates::of(workload::DType dtype) const {
  switch (dtype) {
    case workload::DType::Float16:
      return float16;
    case workload::DType::BFloat16:
      return bfloat16;
    default:
      return float32;  // integer/bool work is counted on the fp32 pipes
  }
}

double ComputeConfig::flops_per_second(OpClass op_class, workload::DType dtype, int n) const {
  return peak_flops_per_second(op_class, dtype, n) * efficiency[static_cast<std::size_t>(op_class)];
}

double ComputeConfig::peak_flops_per_second(OpClass op_class, workload::DType dtype, int n) const {
  double per_cycle = vector.of(dtype);
  bool matrix_class =
      op_class == OpClass::Gemm || op_class == OpClass::Conv || op_class == OpClass::Attention;
  if (matrix_class) {
    double m = matrix.of(dtype);
    if (dtype == workload::DType::Float32 && !matrix_for_float32) m = 0;
    if (m > per_cycle) per_cycle = m;
  }
  return per_cycle * clock_mhz * 1e6 * n;
}

namespace {

// The simulator keeps state per core / SM (lanes, private cache arrays, per-op splits), and
// an int holds the count: more than kMaxUnits is a typo or a what-if the model cannot run
// (the largest parts modelled have 144 SMs or 128 cores), refused before anything is built.
constexpr std::int64_t kMaxUnits = 65536;

int unit_count(const JsonView& v, const char* what) {
  const std::int64_t n = v.as_positive_int();
  if (n > kMaxUnits)
    v.fail_got(fmt::format("at most {} {} (one simulator lane each)", kMaxUnits, what));
  return static_cast<int>(n);
}

}  // namespace

ComputeConfig with_compute_time_scaled(ComputeConfig c, double ratio) {
  FUSIM_ASSERT(ratio > 0, "compute time scaled by a non-positive ratio");
  auto scale = [ratio](Tick t) { return Tick(std::llround(double(t) * ratio)); };
  c.dispatch_overhead = scale(c.dispatch_overhead);
  c.launch_latency = scale(c.launch_latency);
  for (double& e : c.efficiency) e /= ratio;
  for (auto& [name, f] : c.op_costs.families) {
    f.fixed_ns *= ratio;
    f.per_kernel_ns *= ratio;
    f.per_channel_ns *= ratio;
    f.per_ragged_plane_ns *= ratio;
    f.per_mib_ns *= ratio;
    f.efficiency /= ratio;
  }
  c.model_context.base_ns *= ratio;
  c.model_context.cold_ns *= ratio;
  for (ColdPart& p : c.model_context.slower) p.cold_ns *= ratio;
  return c;
}

ComputeConfig parse_compute_config(const JsonView& v, UnitKind kind) {
  v.require_object();
  ComputeConfig c;
  c.kind = kind;
  if (kind == UnitKind::Cpu) {
    v.reject_unknown_keys({"cores", "clock_mhz", "vector_flops_per_cycle", "matrix_flops_per_cycle",
                           "matrix_for_float32", "efficiency", "dispatch_overhead_ns",
                           "threads_per_op", "op_costs", "model_context", "memory_overlap"});
    c.units = unit_count(v.at("cores"), "cores");
    c.threads_per_op = static_cast<int>(v.at("threads_per_op").as_positive_int());
    if (c.threads_per_op > c.units)
      v.at("threads_per_op")
          .fail(fmt::format("at most the {} cores, got {}", c.units, c.threads_per_op));
    c.max_concurrent_kernels = c.units / c.threads_per_op;
    if (auto o = v.find("memory_overlap")) c.memory_overlap = parse_memory_overlap(*o);
    if (auto o = v.find("model_context")) c.model_context = parse_model_context(*o);
  } else {
    v.reject_unknown_keys({"sms", "clock_mhz", "vector_flops_per_cycle", "matrix_flops_per_cycle",
                           "matrix_for_float32", "efficiency", "dispatch_overhead_ns",
                           "launch_latency_ns", "max_concurrent_kernels", "threads_per_block",
                           "elements_per_thread", "gemm_tile", "gemm_blocks_per_sm", "op_costs"});
    c.units = unit_count(v.at("sms"), "SMs");
    c.launch_latency = ns(v.at("launch_latency_ns").as_number_in(0, 1e6));
    c.max_concurrent_kernels = static_cast<int>(v.at("max_concurrent_kernels").as_positive_int());
    c.threads_per_block = static_cast<int>(v.at("threads_per_block").as_positive_int());
    c.elements_per_thread = static_cast<int>(v.at("elements_per_thread").as_positive_int());
    c.gemm_tile = static_cast<int>(v.at("gemm_tile").as_positive_int());
    if (auto b = v.find("gemm_blocks_per_sm")) {
      // CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": at
      // most 32 resident blocks per SM (cc 7.0-9.0).
      const std::int64_t n = b->as_positive_int();
      if (n > 32) b->fail_got("at most 32 resident blocks per SM");
      c.gemm_blocks_per_sm = static_cast<int>(n);
    }
  }
  c.clock_mhz = v.at("clock_mhz").as_number_in(1, 100000);
  c.vector = parse_rates(v.at("vector_flops_per_cycle"));
  if (c.vector.float32 <= 0) v.at("vector_flops_per_cycle").fail("a positive \"float32\" rate");
  if (auto m = v.find("matrix_flops_per_cycle")) c.matrix = parse_rates(*m);
  c.matrix_for_float32 = v.get_bool("matrix_for_float32", false);
  c.dispatch_overhead = ns(v.at("dispatch_overhead_ns").as_number_in(0, 1e6));

  JsonView eff = v.at("efficiency");
  eff.require_object();
  for (const auto& key : eff.keys()) {
    bool known = false;
    for (auto name : kClassNames) known = known || key == name;
    if (!known)
      eff.at(key).fail(
          fmt::format("one of the op classes gemm, conv, elementwise, norm, "
                      "reduction, pool, attention (unknown class \"{}\")",
                      key));
  }
  for (std::size_t i = 0; i < kOpClasses; ++i) {
    JsonView e = eff.at(kClassNames[i]);
    double x = e.as_number();
    if (!(x > 0 && x <= 1)) e.fail_got("a fraction of peak in (0, 1]");
    c.efficiency[i] = x;
  }
  if (auto costs = v.find("op_costs")) c.op_costs = parse_op_cost_model(*costs);
  return c;
}

}  // namespace fusim::compute
