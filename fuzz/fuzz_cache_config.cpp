// libFuzzer target: cache-hierarchy configs (`fusim cache --config`), built into a Hierarchy
// (geometry checks happen there) and exercised with a few accesses in both fidelities.
#include "fuzz/fuzz_common.h"
#include "mem/cache/cache_config.h"
#include "mem/cache/hierarchy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  return fuzz::expect_input_error_or_success([&] {
    auto doc = parse_json_text(fuzz::as_text(data, size), fuzz::kFile);
    cache::HierarchyConfig config = cache::parse_hierarchy_config(JsonView(doc, fuzz::kFile));
    // Accesses and the flush walk every line: only on small hierarchies, or a legal 60 MiB
    // LLC under ASan would read as a hang (> 1 s) of the harness, not of fusim.
    std::int64_t total = 0;
    for (const auto& level : config.levels) total += level.size_bytes;
    if (total > (std::int64_t{1} << 20)) {
      cache::Hierarchy h(config, cache::Fidelity::Block, 1);  // geometry checks only
      return;
    }
    for (cache::Fidelity f : {cache::Fidelity::Line, cache::Fidelity::Block}) {
      cache::Hierarchy h(config, f, 2);
      for (mem::Addr a : {0x0ULL, 0x40ULL, 0x1000ULL, 0xffffffffffffffc0ULL}) {
        h.access(0, a, cache::AccessKind::Read);
        h.access(1, a, cache::AccessKind::Write);
      }
      h.access_range(0, 0x100, 64 * 1024, cache::AccessKind::Read);
      h.flush();
    }
  });
}
