#pragma once
// The shape formulas of traces/SCHEMA.md as pure functions, shared by the validator (which
// checks a layer's declared output against them) and the cost model (which counts FLOPs).
#include <cstdint>
#include <optional>

#include "workload/trace.h"

namespace fusim::workload {

// Output length of a kernel sliding over one spatial dim. PyTorch's pooling_output_shape
// (aten/src/ATen/native/Pool.h), which conv2d also follows with ceil_mode = false:
//   out = floor_or_ceil((in + 2*pad - dilation*(kernel-1) - 1) / stride) + 1,
//   and with ceil_mode the last window must start inside the input or left padding.
// May return <= 0 when the kernel does not fit (the caller reports it).
std::int64_t window_output_size(std::int64_t in, std::int64_t kernel, std::int64_t pad,
                                std::int64_t stride, std::int64_t dilation, bool ceil_mode);

// Adaptive pooling windows (PyTorch AdaptiveAveragePooling.cpp): window i of `out` covers
// [floor(i*in/out), ceil((i+1)*in/out)). Returns the sum of all window lengths.
std::int64_t adaptive_window_total(std::int64_t in, std::int64_t out);

// NumPy/PyTorch broadcasting: dims aligned from the right, each pair equal or one of them 1.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// torch.matmul: 1-D operands are promoted ([k] -> [1, k] on the left, [k, 1] on the right)
// and the added dim removed from the result; leading (batch) dims broadcast.
struct MatmulDims {
  std::int64_t batch = 1;  // elements of the broadcast batch dims
  std::int64_t n = 1, k = 1, m = 1;
  Shape out;
};
std::optional<MatmulDims> matmul_dims(const Shape& a, const Shape& b);

// A dim index in [-rank, rank) made non-negative (rank 0 counts as 1, as PyTorch does for
// scalars); nullopt when out of range.
std::optional<std::int64_t> normalize_dim(std::int64_t dim, std::size_t rank);

// Views do not allocate: flatten/reshape/permute alias their input (fusim treats them as
// views; PyTorch copies only for reshape of a non-contiguous tensor).
bool is_view(OpKind op);

// Layers that may have no input: a parameter layer and a generic_data_movement that makes
// a tensor (ATen capture; traces/SCHEMA.md, "Generic layers").
bool is_source(OpKind op);

}  // namespace fusim::workload
