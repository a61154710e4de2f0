// Per-op-class throughput of this host through libtorch, for `fusim calibrate`. Operands
// are sized to stay in cache so that the rate is the compute rate the simulator's
// efficiency stands for (memory time is modelled separately); FLOPs are counted by
// workload::layer_cost, exactly as the simulator counts them.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <chrono>

#include "backend/calibration.h"
#include "backend/layer_ops.h"
#include "workload/cost.h"

namespace fusim::backend {
namespace {
using workload::Layer;
using workload::OpKind;
using Clock = std::chrono::steady_clock;

// A one-layer trace around `layer` fed by model inputs of the given shapes.
workload::Trace one_layer(Layer layer, const std::vector<workload::Shape>& inputs) {
  workload::Trace t;
  t.model = "probe";
  t.batch = inputs[0][0];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    t.inputs.push_back({"in" + std::to_string(i), inputs[i], workload::DType::Float32, false});
    layer.inputs.push_back({workload::InputRef::Source::ModelInput, int(i)});
  }
  t.layers.push_back(std::move(layer));
  return t;
}

// FLOP/s of the layer's forward: best of 5 timings of enough repetitions for ~20 ms.
double rate(const workload::Trace& trace, at::Generator& gen) {
  const Layer& layer = trace.layers[0];
  LayerTensors tensors = make_layer_tensors(layer, gen, at::TensorOptions());
  std::vector<at::Tensor> in;
  for (const auto& spec : trace.inputs) in.push_back(at::randn(spec.shape, gen));
  at::NoGradGuard no_grad;
  auto once = [&] { return layer_forward(layer, in, tensors, gen); };
  once();
  auto t0 = Clock::now();
  once();
  const double single = std::chrono::duration<double>(Clock::now() - t0).count();
  const int reps = std::max(1, int(0.02 / std::max(single, 1e-7)));
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    t0 = Clock::now();
    for (int i = 0; i < reps; ++i) once();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / reps);
  }
  return double(workload::layer_cost(trace, layer).flops_fwd) / best;
}

Layer make(OpKind op, workload::Shape out, std::vector<workload::TensorSpec> params = {}) {
  Layer l;
  l.name = "probe";
  l.op = op;
  l.output = std::move(out);
  l.params = std::move(params);
  // Every attr explicit, as the trace reader fills them (layer_cost indexes them).
  l.attrs.stride = {1, 1};
  l.attrs.padding = {0, 0};
  l.attrs.dilation = {1, 1};
  return l;
}
}  // namespace

OpClassRates measure_op_classes(int threads) {
  at::set_num_threads(threads);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(1);
  OpClassRates r;
  {  // GEMM 256 x 512 x 512: 1.5 MiB of operands
    Layer l = make(OpKind::Linear, {256, 512}, {{"w", {512, 512}}});
    r.gemm = rate(one_layer(l, {{256, 512}}), gen);
  }
  {  // 3x3 convolution, 64 -> 64 channels on 28x28, batch 4 (ResNet stage-2 shape)
    Layer l = make(OpKind::Conv2d, {4, 64, 28, 28}, {{"w", {64, 64, 3, 3}}});
    l.attrs.kernel = {3, 3};
    l.attrs.padding = {1, 1};
    r.conv = rate(one_layer(l, {{4, 64, 28, 28}}), gen);
  }
  // Memory-light shapes: 64 Ki floats (256 KiB) stay in L2.
  r.elementwise = rate(one_layer(make(OpKind::Add, {64, 1024}), {{64, 1024}, {64, 1024}}), gen);
  {
    Layer l = make(OpKind::BatchNorm, {4, 64, 16, 16}, {{"bn.weight", {64}}, {"bn.bias", {64}}});
    l.buffers = {{"bn.running_mean", {64}, workload::DType::Float32, false},
                 {"bn.running_var", {64}, workload::DType::Float32, false}};
    r.norm = rate(one_layer(l, {{4, 64, 16, 16}}), gen);
  }
  {
    Layer l = make(OpKind::Softmax, {64, 1024});
    l.attrs.dim = -1;
    r.reduction = rate(one_layer(l, {{64, 1024}}), gen);
  }
  {
    Layer l = make(OpKind::MaxPool2d, {4, 64, 16, 16});
    l.attrs.kernel = {3, 3};
    l.attrs.stride = {2, 2};
    l.attrs.padding = {1, 1};
    l.output = {4, 64, 8, 8};
    r.pool = rate(one_layer(l, {{4, 64, 16, 16}}), gen);
  }
  {  // GPT-2-small-like attention: 12 heads of 64, sequence 128, batch 1
    Layer l = make(OpKind::ScaledDotProductAttention, {1, 128, 768});
    l.attrs.heads = 12;
    r.attention = rate(one_layer(l, {{1, 128, 768}, {1, 128, 768}, {1, 128, 768}}), gen);
  }
  {  // dispatch: a 1-element add, through the whole dispatcher, no real work
    auto a = at::ones({1}), b = at::ones({1});
    at::NoGradGuard no_grad;
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      for (int i = 0; i < 20000; ++i) a = at::add(a, b);
      best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / 20000);
    }
    r.dispatch_ns = best * 1e9;
  }
  return r;
}

}  // namespace fusim::backend
