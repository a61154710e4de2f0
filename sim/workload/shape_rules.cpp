#include "workload/shape_rules.h"

#include <algorithm>

#include "core/int_math.h"

namespace fusim::workload {
namespace {
// Integer division rounding toward -infinity (PyTorch's div_rtn).
std::int64_t div_floor(std::int64_t x, std::int64_t y) {
  std::int64_t q = x / y, r = x % y;
  return (r != 0 && ((r < 0) != (y < 0))) ? q - 1 : q;
}
}  // namespace

std::int64_t window_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad,
                                std::int64_t stride, std::int64_t dilation, bool ceil_mode) {
  std::int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  std::int64_t out = div_floor(span, stride) + 1;
  // Pool.h: "ensure that the last pooling starts inside the image"
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

std::int64_t adaptive_window_total(std::int64_t in, std::int64_t out) {
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < out; ++i) {
    std::int64_t start = (i * in) / out;
    std::int64_t end = ceil_div((i + 1) * in, out);
    total += end - start;
  }
  return total;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    std::int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[rank - 1 - i] = std::max(da, db);
  }
  return out;
}

std::optional<MatmulDims> matmul_dims(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return std::nullopt;  // torch.matmul rejects 0-d operands
  Shape pa = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape pb = b.size() == 1 ? Shape{b[0], 1} : b;
  MatmulDims d;
  d.n = pa[pa.size() - 2];
  d.k = pa[pa.size() - 1];
  d.m = pb[pb.size() - 1];
  if (pb[pb.size() - 2] != d.k) return std::nullopt;
  Shape batch_a(pa.begin(), pa.end() - 2), batch_b(pb.begin(), pb.end() - 2);
  auto batch = broadcast_shapes(batch_a, batch_b);
  if (!batch) return std::nullopt;
  d.batch = numel(*batch);
  d.out = *batch;
  if (a.size() > 1) d.out.push_back(d.n);
  if (b.size() > 1) d.out.push_back(d.m);
  return d;
}

std::optional<std::int64_t> normalize_dim(std::int64_t dim, std::size_t rank) {
  auto r = static_cast<std::int64_t>(std::max<std::size_t>(rank, 1));
  if (dim < -r || dim >= r) return std::nullopt;
  return dim < 0 ? dim + r : dim;
}

bool is_view(OpKind op) {
  return op == OpKind::Flatten || op == OpKind::Reshape || op == OpKind::Permute;
}

bool is_source(OpKind op) {
  return op == OpKind::Parameter || op == OpKind::GenericDataMovement;
}

}  // namespace fusim::workload
