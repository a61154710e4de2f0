// libFuzzer target: Dinero-style address traces (`fusim cache --trace`), replayed into a small
// two-level hierarchy as the command does.
#include <sstream>

#include "fuzz/fuzz_common.h"
#include "mem/cache/address_trace.h"
#include "mem/cache/cache_config.h"
#include "mem/cache/hierarchy.h"

namespace {
constexpr const char* kConfig = R"({"levels": [
  {"name": "L1", "size": "4KiB", "assoc": 4, "line": 64, "latency_cycles": 4},
  {"name": "L2", "size": "16KiB", "assoc": 8, "line": 64, "latency_cycles": 12, "shared": true}]})";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  static const auto config_doc = nlohmann::json::parse(kConfig);  // read-only after init
  return fuzz::expect_input_error_or_success([&] {
    cache::Hierarchy h(cache::parse_hierarchy_config(JsonView(config_doc, "config")),
                       cache::Fidelity::Line, 1);
    std::istringstream in{std::string(fuzz::as_text(data, size))};
    cache::read_address_trace(in, fuzz::kFile, [&](const cache::TraceAccess& a) {
      h.access_range(0, a.addr, a.bytes,
                     a.is_write ? cache::AccessKind::Write : cache::AccessKind::Read);
    });
  });
}
