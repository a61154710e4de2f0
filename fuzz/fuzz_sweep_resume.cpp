// libFuzzer target: the results file `fusim sweep -o FILE --resume` reads back (what an
// interrupted run, a foreign study or a corrupted disk left there). The first byte picks CSV
// or JSON; the rest is the file. A file is either refused (InputError naming it and the line)
// or resumed, and then what is kept must be a prefix of the file made of whole units.
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/fuzz_common.h"
#include "sweep/result_file.h"
#include "sweep/study.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fusim;
  using namespace fusim::sweep;
  if (size == 0) return 0;
  // 2 traces x 2 L2 sizes x 2 optimizers = 8 units of 2 rows, with hit-rate columns: the
  // shape of the README's sweeps, small enough that a fuzzed file can hold all of it.
  static const Study study = [] {
    Study s(Grid({"mlp", "t.json"}, {parse_axis("caches.L2.size=1MiB,2MiB")}),
            {"eager", "backward-fused"}, {"sgd", "adam"});
    s.set_cache_levels({"L1", "L2"});
    return s;
  }();
  const RowFormat format(data[0] % 2 ? FileFormat::Json : FileFormat::Csv, study.columns());
  int fd = memfd_create("fuzz-sweep-resume", 0);
  FUSIM_ASSERT(fd >= 0, "memfd_create failed");
  FUSIM_ASSERT(write(fd, data + 1, size - 1) == static_cast<ssize_t>(size - 1),
               "memfd write failed");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  fuzz::expect_input_error_or_success([&] {
    const ResumeState state = scan_for_resume(path, format, study);
    FUSIM_ASSERT(state.keep_bytes <= size - 1, "resume keeps more bytes than the file has");
    FUSIM_ASSERT(state.rows_done == state.units_done * study.rows_per_unit(),
                 "resume keeps part of a unit");
    FUSIM_ASSERT(state.units_done <= study.units(), "resume counts more units than the study");
    FUSIM_ASSERT(state.units_done == 0 || state.keep_bytes > 0, "units kept in zero bytes");
  });
  close(fd);
  return 0;
}
