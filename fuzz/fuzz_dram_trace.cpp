// libFuzzer target: DRAMsim3-format request traces (`fusim dram --trace`), read from a file
// (the reader takes paths) and replayed on DDR4-3200 for a bounded number of cycles.
#include <sys/mman.h>
#include <unistd.h>
#include <cstdio>

#include "core/event_queue.h"
#include "fuzz/fuzz_common.h"
#include "mem/dram/dram_spec.h"
#include "mem/dram/dram_system.h"
#include "mem/dram/trace_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  static const dram::DramSpec spec = dram::load_dram_preset("ddr4-3200");  // read-only
  // An anonymous in-memory file: no disk traffic, nothing left behind.
  int fd = memfd_create("fuzz-dram-trace", 0);
  FUSIM_ASSERT(fd >= 0, "memfd_create failed");
  FUSIM_ASSERT(write(fd, data, size) == static_cast<ssize_t>(size), "memfd write failed");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  fuzz::expect_input_error_or_success([&] {
    auto trace = dram::read_dramsim3_trace(path);
    EventQueue queue;
    dram::DramSystem system(spec, queue, "ddr4-3200");
    dram::replay_trace(system, queue, trace, 2000);
  });
  close(fd);
  return 0;
}
