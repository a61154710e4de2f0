// libFuzzer target: machine models (models/machines/SCHEMA.md) as `fusim simulate --machine`
// reads them, including the cache and DRAM sections handed to their own builders.
#include "exec/machine.h"
#include "fuzz/fuzz_common.h"
#include "mem/cache/cache_config.h"
#include "mem/dram/dram_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  return fuzz::expect_input_error_or_success([&] {
    auto doc = parse_json_text(fuzz::as_text(data, size), fuzz::kFile);
    exec::Machine m = exec::parse_machine(std::move(doc), fuzz::kFile);
    (void)cache::parse_hierarchy_config(m.caches());
    (void)dram::load_dram_spec(m.dram());
  });
}
