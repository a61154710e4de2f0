// libFuzzer target: per-layer mixed-ordering files (`fusim schedule --ordering mixed --mixed`)
// against the bundled tiny MLP trace, then the schedule they describe is built and checked.
#include "fuzz/fuzz_common.h"
#include "schedule/mixed.h"
#include "schedule/schedule.h"
#include "workload/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  static const workload::Trace trace =
      workload::load_trace(FUSIM_SOURCE_DIR "/traces/examples/mlp_tiny.json");  // read-only
  return fuzz::expect_input_error_or_success([&] {
    auto doc = parse_json_text(fuzz::as_text(data, size), fuzz::kFile);
    schedule::ScheduleOptions options;
    options.ordering = schedule::Ordering::Mixed;
    options.mixed = schedule::parse_mixed_ordering(doc, fuzz::kFile, trace);
    auto s = schedule::build_schedule(trace, options);
    auto problems = schedule::check_schedule(trace, s);
    FUSIM_ASSERT(problems.empty(), "a mixed ordering broke a dependency: " + problems.front());
  });
}
