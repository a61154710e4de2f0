#pragma once
// Everything `fusim trace validate` checks beyond the JSON structure (traces/SCHEMA.md):
// ids unique, inputs resolve, the layer graph is a DAG whose only sink is the one
// cross_entropy loss, every layer reachable from the model inputs, inputs' arity and
// dtypes, params and buffers matching the op, and each declared output equal to the shape
// the op's formula gives. The first violation throws InputError naming the file and the
// JSON path ("layers[12].attrs.stride").
#include <cstddef>
#include <string>

#include "workload/trace.h"

namespace fusim::workload {

// Validates `trace`, then puts `layers` in topological order (producers first; a file that
// is already in such an order keeps it) and fills Layer::output_requires_grad.
// Before: a Layer InputRef's index is a position in `layers` as given (file order), and
// messages say `layers[i]` for that position. After: positions in the sorted order.
// Generators that build traces in memory call this too (messages then name
// "<generated MODEL>" unless trace.file is set).
void validate_and_sort(Trace& trace);

// Checks one layer against its op (arity, input dtypes and shapes, attrs that depend on
// shapes, params, buffers) and returns the output shape and dtype its formula gives.
// `position` is used in messages (`layers[position]`). Its inputs must be valid indices.
struct InferredOutput {
  Shape shape;
  DType dtype = DType::Float32;
  std::string formula;  // how the shape was derived, for messages ("conv2d of [..] with ..")
};
InferredOutput check_layer(const Trace& trace, const Layer& layer, std::size_t position);

// The name messages use for the trace: its file, or "<generated MODEL>".
std::string trace_display_name(const Trace& trace);

}  // namespace fusim::workload
