#include "backend/host_allocator.h"

#include <malloc.h>

namespace fusim::backend {

void keep_freed_memory_in_heap() {
  // 32 MiB is glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

}  // namespace fusim::backend
