#include "backend/host_allocator.h"

#include <fmt/format.h>
#include <malloc.h>
#include <fstream>
#include <string>

#include "core/error.h"

namespace fusim::backend {

void keep_freed_memory_in_heap() {
  // 32 MiB is glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

void check_host_memory(const std::vector<schedule::Schedule>& schedules) {
  std::int64_t need = 0;
  for (const auto& s : schedules)
    for (const auto& t : s.tensors)
      if (t.step < 0 && (t.category == schedule::TensorCategory::Weights ||
                         t.category == schedule::TensorCategory::OptimizerState))
        need += t.bytes;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = -1;
  while (meminfo >> key) {
    if (key == "MemAvailable:") {
      meminfo >> kib;
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  if (kib < 0 || need <= kib * 1024) return;
  throw InputError(fmt::format(
      "--trace: expected a model whose weights and optimizer state fit this host's available "
      "memory ({:.1f} GiB), but the {} schedule(s) run need {:.1f} GiB at least",
      double(kib) / (1 << 20), schedules.size(), double(need) / (1 << 30)));
}

}  // namespace fusim::backend
