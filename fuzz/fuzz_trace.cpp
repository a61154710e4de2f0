// libFuzzer target: layer traces (traces/SCHEMA.md) through the strict reader and validator,
// then the cost model, as `fusim trace show` and `fusim simulate` read them.
#include "fuzz/fuzz_common.h"
#include "workload/cost.h"
#include "workload/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  return fuzz::expect_input_error_or_success([&] {
    auto doc = parse_json_text(fuzz::as_text(data, size), fuzz::kFile);
    workload::Trace trace = workload::parse_trace(doc, fuzz::kFile);
    // A trace that passed validation must round-trip and cost without surprises.
    workload::parse_trace(workload::trace_to_json(trace), "round-trip");
    for (const auto& layer : trace.layers) (void)workload::layer_cost(trace, layer);
  });
}
