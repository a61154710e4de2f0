// libFuzzer target: machine models (models/machines/SCHEMA.md) as `fusim simulate --machine`
// reads them: every section, the cache and DRAM ones included, is read by parse_machine.
#include "exec/machine.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  return fuzz::expect_input_error_or_success([&] {
    auto doc = parse_json_text(fuzz::as_text(data, size), fuzz::kFile);
    (void)exec::parse_machine(std::move(doc), fuzz::kFile);
  });
}
