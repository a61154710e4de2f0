#include "backend/memory_counter.h"

#include <c10/core/CPUAllocator.h>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.h"
#ifdef FUSIM_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace fusim::backend {
namespace {

// 64 B: c10::gAlignment (c10/core/alignment.h), the alignment of every CPU tensor. The size
// of a block is kept in the 64 B in front of the data, so that the deleter, a plain function
// of the data pointer (DataPtr's raw interface), can count it back.
constexpr std::size_t kAlign = 64;

struct Counts {
  std::atomic<std::int64_t> live{0}, peak{0};
  void add(std::int64_t n) {
    const std::int64_t now = live.fetch_add(n, std::memory_order_relaxed) + n;
    std::int64_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
  }
};

Counts& counts() {
  static Counts c;  // process-wide, like the allocator slot it serves (see the header)
  return c;
}

void counted_free(void* data) {
  if (!data) return;
  char* base = static_cast<char*>(data) - kAlign;
  std::int64_t n;
  std::memcpy(&n, base, sizeof n);
  counts().add(-n);
  std::free(base);
}

// allocate() is const before libtorch 2.3 and non-const after, where copy_data() became a
// pure virtual: both forms are declared, without `override`, so that one class builds
// against either.
struct CountingCpuAllocator final : c10::Allocator {
  c10::DataPtr allocate(std::size_t n) const {
    if (n == 0) return {nullptr, nullptr, &counted_free, c10::Device(c10::DeviceType::CPU)};
    void* base = nullptr;
    if (posix_memalign(&base, kAlign, n + kAlign) != 0) throw std::bad_alloc();
    const auto bytes = static_cast<std::int64_t>(n);
    std::memcpy(base, &bytes, sizeof bytes);
    counts().add(bytes);
    void* data = static_cast<char*>(base) + kAlign;
    return {data, data, &counted_free, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DataPtr allocate(std::size_t n) {
    return static_cast<const CountingCpuAllocator*>(this)->allocate(n);
  }
  c10::DeleterFnPtr raw_deleter() const override { return &counted_free; }
  void copy_data(void* dest, const void* src, std::size_t count) const {
    std::memcpy(dest, src, count);
  }
};

void install_counting_cpu_allocator() {
  static CountingCpuAllocator allocator;  // static lifetime: SetCPUAllocator keeps the pointer
  static const bool installed = [] {
    // Priority 1 wins over the default allocator's registration (priority 0).
    c10::SetCPUAllocator(&allocator, 1);
    return true;
  }();
  (void)installed;
}

}  // namespace

MemoryCounter::MemoryCounter(bool cuda) : cuda_(cuda) {
#ifndef FUSIM_TORCH_CUDA
  FUSIM_ASSERT(!cuda, "CUDA memory counters need a CUDA libtorch (check_device rejects this)");
#endif
  if (!cuda_) install_counting_cpu_allocator();
}

#ifdef FUSIM_TORCH_CUDA
namespace {
// allocated_bytes of every pool together (StatType::AGGREGATE), device 0.
c10::cuda::CUDACachingAllocator::Stat cuda_allocated() {
  using namespace c10::cuda::CUDACachingAllocator;
  return getDeviceStats(0).allocated_bytes[static_cast<std::size_t>(StatType::AGGREGATE)];
}
}  // namespace
#endif

std::int64_t MemoryCounter::allocated() const {
#ifdef FUSIM_TORCH_CUDA
  if (cuda_) return cuda_allocated().current;
#endif
  return counts().live.load(std::memory_order_relaxed);
}

void MemoryCounter::reset_peak() {
#ifdef FUSIM_TORCH_CUDA
  if (cuda_) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(0);
    return;
  }
#endif
  counts().peak.store(counts().live.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

std::int64_t MemoryCounter::peak() const {
#ifdef FUSIM_TORCH_CUDA
  if (cuda_) return cuda_allocated().peak;
#endif
  return counts().peak.load(std::memory_order_relaxed);
}

}  // namespace fusim::backend
