#include "compute/access_program.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/int_math.h"
#include "workload/cost.h"

namespace fusim::compute {
namespace {
using schedule::AccessMode;
using schedule::OpKind;
using workload::Layer;

bool is_blocked_gemm(const schedule::Op& op) {
  return (op.layer_op == workload::OpKind::Linear || op.layer_op == workload::OpKind::Conv2d) &&
         (op.kind == OpKind::Forward || op.kind == OpKind::BackwardInput ||
          op.kind == OpKind::BackwardWeight);
}
}  // namespace

std::int64_t ProgramPass::streamed_bytes() const {
  std::int64_t b = 0;
  for (const auto& r : ranges) b += r.streamed_bytes();
  return b;
}
std::int64_t AccessProgram::flops() const {
  std::int64_t f = 0;
  for (const auto& p : passes) f += p.flops;
  return f;
}
std::int64_t AccessProgram::streamed_bytes() const {
  std::int64_t b = 0;
  for (const auto& p : passes) b += p.streamed_bytes();
  return b;
}

GemmDims gemm_dims(const workload::Trace& trace, const Layer& l) {
  GemmDims d;
  const workload::Shape& x = workload::input_shape(trace, l.inputs.at(0));
  if (l.op == workload::OpKind::Conv2d) {
    d.groups = l.attrs.groups;
    d.cin_g = x.at(1) / d.groups;
    d.cout_g = l.output.at(1) / d.groups;
    d.kc = d.cin_g * l.attrs.kernel.at(0) * l.attrs.kernel.at(1);
    d.rows_out = l.output.at(0) * l.output.at(2) * l.output.at(3);
    d.rows_in = x.at(0) * x.at(2) * x.at(3);
  } else {
    d.cin_g = x.back();
    d.cout_g = l.output.back();
    d.kc = d.cin_g;
    d.rows_out = workload::numel(l.output) / std::max<std::int64_t>(1, d.cout_g);
    d.rows_in = d.rows_out;
  }
  return d;
}

void set_compute_time(AccessProgram& p, Tick compute) {
  if (p.passes.empty()) return;
  std::vector<double> weight;
  double total = 0;
  for (const auto& pass : p.passes)
    weight.push_back(double(pass.flops)), total += double(pass.flops);
  if (total <= 0) {
    weight.clear();
    for (const auto& pass : p.passes)
      weight.push_back(double(pass.streamed_bytes())), total += double(pass.streamed_bytes());
  }
  if (total <= 0) weight.assign(p.passes.size(), 1.0), total = double(p.passes.size());
  Tick left = compute;
  double cumulative = 0;
  for (std::size_t i = 0; i < p.passes.size(); ++i) {
    cumulative += weight[i];
    // Cumulative rounding: the shares add up to `compute` exactly.
    const Tick upto = i + 1 == p.passes.size()
                          ? compute
                          : static_cast<Tick>(double(compute) * cumulative / total + 0.5);
    p.passes[i].compute = upto - (compute - left);
    left = compute - upto;
  }
}

std::int64_t gemm_tile_edge(const ComputeConfig& c, int elem_bytes) {
  if (c.kind == UnitKind::Gpu) return c.gemm_tile;
  auto t = static_cast<std::int64_t>(
      std::sqrt(static_cast<double>(c.blocking_bytes) / (3.0 * elem_bytes)));
  return std::max<std::int64_t>(8, t / 8 * 8);
}

GemmTraffic gemm_traffic(std::int64_t m, std::int64_t n, std::int64_t k, int e, std::int64_t tile,
                         std::int64_t resident_bytes) {
  GemmTraffic g;
  const std::int64_t a = m * k * e, b = k * n * e, c = m * n * e;
  g.reads_a = a > resident_bytes ? ceil_div(n, tile) : 1;
  g.reads_b = b > resident_bytes ? ceil_div(m, tile) : 1;
  g.compulsory = a + b + c;
  g.predicted = g.reads_a * a + g.reads_b * b + c;
  g.no_reuse = 2 * m * n * k * e + c;
  return g;
}

GemmWave gpu_gemm_wave(std::int64_t mt, std::int64_t nt, std::int64_t k, std::int64_t a,
                       std::int64_t b, std::int64_t tiles_in_flight, std::int64_t budget,
                       std::int64_t k_window) {
  GemmWave w;
  mt = std::max<std::int64_t>(1, mt);
  nt = std::max<std::int64_t>(1, nt);
  const std::int64_t wave = std::max<std::int64_t>(1, tiles_in_flight);
  w.dram_a = a * nt;  // no L2 reuse: the blocked model's per-tile re-reads
  w.dram_b = b * mt;
  if (a + b <= budget) {
    w.rows = mt, w.cols = nt, w.dram_a = a, w.dram_b = b, w.fits = true;
    return w;
  }
  // Live bytes of one panel: its k_window of the K elements.
  k = std::max<std::int64_t>(1, k);
  const std::int64_t live = std::clamp<std::int64_t>(k_window, 1, k);
  const std::int64_t panel_a = ceil_div(ceil_div(a, mt) * live, k);
  const std::int64_t panel_b = ceil_div(ceil_div(b, nt) * live, k);
  for (std::int64_t group : {1, 2, 4, 8}) {
    for (bool group_is_cols : {true, false}) {
      // One side of the rectangle is the swizzle's group; the other runs as far as the
      // tiles in flight and the L2 budget allow.
      const std::int64_t side = std::min(group, group_is_cols ? nt : mt);
      const std::int64_t side_panel = group_is_cols ? panel_b : panel_a;
      const std::int64_t other_panel = group_is_cols ? panel_a : panel_b;
      if (side * side_panel + other_panel > budget) continue;
      const std::int64_t other = std::min(
          {group_is_cols ? mt : nt, wave / side, (budget - side * side_panel) / other_panel});
      if (other < 1) continue;
      const std::int64_t rows = group_is_cols ? other : side, cols = group_is_cols ? side : other;
      const std::int64_t da = a * ceil_div(nt, cols), db = b * ceil_div(mt, rows);
      if (!w.fits || da + db < w.dram_a + w.dram_b)
        w.rows = rows, w.cols = cols, w.dram_a = da, w.dram_b = db, w.fits = true;
    }
  }
  return w;
}

AccessProgram build_access_program(const workload::Trace& trace, const schedule::Schedule& schedule,
                                   const schedule::Op& op, const ComputeConfig& compute) {
  AccessProgram p;
  p.dtype = trace.dtype;
  p.kernels = op.kernels;
  const int e = workload::dtype_bytes(trace.dtype);
  switch (op.kind) {
    case OpKind::Update:
      p.op_class = OpClass::Elementwise;
      break;
    case OpKind::Loss:
      p.op_class = OpClass::Reduction;
      break;
    default:
      p.op_class = classify(op.layer_op);
  }

  std::int64_t largest = 0;
  for (const auto& pass : op.passes) {
    ProgramPass out;
    out.flops = pass.flops;
    out.max_threads = pass.max_threads;
    for (const auto& access : pass.accesses) {
      const schedule::Tensor& t = schedule.tensors.at(static_cast<std::size_t>(access.tensor));
      if (t.bytes <= 0) continue;
      largest = std::max(largest, t.bytes);
      if (access.mode != AccessMode::Write) out.ranges.push_back({t.address, t.bytes, false, 1});
      if (access.mode != AccessMode::Read) out.ranges.push_back({t.address, t.bytes, true, 1});
    }
    p.passes.push_back(std::move(out));
  }
  // A schedule op without per-pass FLOPs (hand-built) spreads op.flops over its passes.
  if (p.flops() == 0 && op.flops > 0 && !p.passes.empty()) {
    std::int64_t left = op.flops;
    for (std::size_t i = 0; i < p.passes.size(); ++i) {
      std::int64_t share = op.flops / static_cast<std::int64_t>(p.passes.size());
      p.passes[i].flops = i + 1 == p.passes.size() ? left : share;
      left -= share;
    }
  }
  const std::int64_t lanes =
      static_cast<std::int64_t>(compute.threads_per_block) * compute.elements_per_thread;
  p.grid_blocks = std::max<std::int64_t>(1, ceil_div(largest / std::max(1, e), lanes));

  if (!is_blocked_gemm(op) || op.layer < 0 || p.passes.size() != 1) return p;
  const Layer& l = trace.layers.at(static_cast<std::size_t>(op.layer));
  const GemmDims d = gemm_dims(trace, l);
  const std::int64_t tile = gemm_tile_edge(compute, e);
  const std::int64_t resident = compute.blocking_bytes / 2;
  ProgramPass& pass = p.passes.front();
  // Re-read factors per operand, by the GEMM each op kind computes (see the header):
  //   F:  y[rows_out x cout]  = x * W^T      x re-read per cout tile, W per row tile
  //   Bx: dx[rows_in x cin]   = dy * W       dy re-read per cin tile, W per row tile
  //   Bw: dW[cout x kc]       = dy^T * x     dy re-read per kc tile, x per cout tile
  std::int64_t first_factor = 1, weight_factor = 1;
  if (op.kind == OpKind::Forward) {
    first_factor = ceil_div(d.cout_g, tile);
    weight_factor = ceil_div(d.rows_out, tile);
    p.grid_blocks = ceil_div(d.rows_out, tile) * ceil_div(d.cout_g, tile) * d.groups;
  } else if (op.kind == OpKind::BackwardInput) {
    first_factor = ceil_div(d.cin_g, tile);
    weight_factor = ceil_div(d.rows_in, tile);
    p.grid_blocks = ceil_div(d.rows_in, tile) * ceil_div(d.cin_g, tile) * d.groups;
  } else {
    first_factor = ceil_div(d.kc, tile);
    weight_factor = ceil_div(d.cout_g, tile);  // applies to x (second read) in Bw
    // cuDNN/cuBLAS split the reduction of weight gradients (split-K) to fill the GPU.
    p.grid_blocks = std::max<std::int64_t>(
        ceil_div(d.cout_g, tile) * ceil_div(d.kc, tile) * d.groups, compute.units);
  }
  // Reads in pass order: F: x, W, (bias); Bx: dy, W; Bw: dy, x (attach_layer_passes).
  // The first is the GEMM's A (m rows: re-read per tile column, first_factor = nt), the
  // second its B (re-read per tile row, weight_factor = mt).
  StreamRange* operand[2] = {nullptr, nullptr};
  int read_index = 0;
  for (auto& r : pass.ranges) {
    if (r.write) continue;
    std::int64_t factor = 1;
    if (read_index == 0) {
      factor = first_factor;
    } else if (read_index == 1) {
      factor = weight_factor;
    }
    if (r.bytes > resident) r.repeats = factor;
    if (read_index < 2) operand[read_index] = &r;
    ++read_index;
  }
  if (compute.kind != UnitKind::Gpu || !operand[0] || !operand[1]) return p;
  // The wave of one group's GEMM (grouped convolutions share the tiles in flight). Budget:
  // half the L2, as the residency rule of the re-reads (exec/gemm_rereads.cpp); on the
  // A100 it is also what one of the L2's two partitions holds ("each L2 partition
  // localizes and caches data for memory accesses from SMs in the GPCs directly connected
  // to the partition", A100 whitepaper, 2020), so data that every SM reads sits in both.
  const std::int64_t groups = std::max<std::int64_t>(1, d.groups);
  // K window: one tile edge of K, about what a block's mainloop has in flight (CUTLASS's
  // SM80 multistage kernels: 3 to 5 stages of 32 K elements).
  const std::int64_t k = op.kind == OpKind::Forward
                             ? d.kc
                             : (op.kind == OpKind::BackwardInput ? d.cout_g : d.rows_out);
  const GemmWave w = gpu_gemm_wave(
      weight_factor, first_factor, k, operand[0]->bytes / groups, operand[1]->bytes / groups,
      std::max<std::int64_t>(1, std::int64_t{compute.units} * compute.gemm_blocks_per_sm / groups),
      compute.shared_cache_bytes / 2, tile);
  const std::int64_t wave_reads[2] = {w.dram_a * groups, w.dram_b * groups};
  for (int i = 0; i < 2; ++i) {
    StreamRange& r = *operand[i];
    if (r.repeats <= 1) continue;
    // An operand within the budget alone keeps today's rule (its re-reads hit the L2);
    // the wave only ever removes DRAM re-reads.
    const std::int64_t blocked =
        r.bytes <= compute.shared_cache_bytes / 2 ? r.bytes : r.bytes * r.repeats;
    const std::int64_t dram = std::clamp(wave_reads[i], r.bytes, blocked);
    r.memory_rereads = dram - r.bytes;
  }
  return p;
}

}  // namespace fusim::compute
