// libFuzzer target: DRAM presets and machine "dram" sections (`fusim dram --config`), built
// into a DramSystem (mapping and scheduler are resolved there) and given a few requests.
#include "core/event_queue.h"
#include "fuzz/fuzz_common.h"
#include "mem/dram/dram_spec.h"
#include "mem/dram/dram_system.h"
#include "mem/dram/trace_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  return fuzz::expect_input_error_or_success([&] {
    auto doc = parse_json_text(fuzz::as_text(data, size), fuzz::kFile);
    dram::DramSpec spec = dram::load_dram_spec(JsonView(doc, fuzz::kFile));
    EventQueue queue;
    dram::DramSystem system(spec, queue, fuzz::kFile);
    std::vector<dram::TraceRequest> trace;
    for (std::uint64_t i = 0; i < 32; ++i)
      trace.push_back({i * 0x10040, i % 3 == 0, static_cast<dram::Cycle>(i)});
    // Bounded: a legal but slow config must not turn into a fuzzing timeout.
    dram::replay_trace(system, queue, trace, 2000);
  });
}
