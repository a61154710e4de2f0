#include "backend/memory_guard.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <algorithm>
#include <fstream>
#include <new>
#include <string>

#include "core/error.h"
#ifdef FUSIM_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace fusim::backend {
namespace {

// "12.3 GiB", or "28.0 MiB" below a GiB (a need of a few MiB would read "0.0 GiB").
std::string size_text(std::int64_t bytes) {
  const double mib = double(bytes) / double(1 << 20);
  return mib < 1024 ? fmt::format("{:.1f} MiB", mib) : fmt::format("{:.1f} GiB", mib / 1024);
}

// MemAvailable of /proc/meminfo in bytes, -1 where unreadable.
std::int64_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  while (meminfo >> key) {
    if (key == "MemAvailable:") {
      std::int64_t kib = -1;
      meminfo >> kib;
      return kib < 0 ? -1 : kib * 1024;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  return -1;
}

// Free bytes of CUDA device 0 (the device the backend runs on, at::kCUDA), -1 where unknown.
std::int64_t cuda_free_bytes() {
#ifdef FUSIM_TORCH_CUDA
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky error for libtorch's next call
    return -1;
  }
  // Segments libtorch's caching allocator reserved but does not use are this run's too
  // (a validate profiles, then runs, in one process): cudaMemGetInfo counts them as used.
  using namespace c10::cuda::CUDACachingAllocator;
  const auto stats = getDeviceStats(0);
  const auto all = static_cast<std::size_t>(StatType::AGGREGATE);
  return std::int64_t(free) + stats.reserved_bytes[all].current -
         stats.allocated_bytes[all].current;
#else
  return -1;  // check_device refuses cuda on a CPU libtorch before any of this
#endif
}

std::string device_memory_name(const std::string& device) {
  return device == "cuda" ? "CUDA device 0's free memory" : "this host's available memory";
}

// The first line of a libtorch message (c10::Error::what() appends a backtrace).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

[[noreturn]] void throw_out_of_memory(const std::vector<schedule::Schedule>& schedules,
                                      const std::string& device, const std::string& what) {
  throw InputError(fmt::format(
      "--trace: expected a model whose training step fits {}, but it ran out of memory on "
      "--device {} (the {} schedule(s) run need {} at least): {}",
      device_memory_name(device), device, schedules.size(), size_text(run_memory_need(schedules)),
      first_line(what)));
}

}  // namespace

std::int64_t run_memory_need(const std::vector<schedule::Schedule>& schedules) {
  std::int64_t persistent = 0, largest_rest = 0;
  for (const auto& s : schedules) {
    // Weights and optimizer state persist: at the peak they are all live.
    const std::int64_t kept = s.peak.weights + s.peak.optimizer_state;
    persistent += kept;
    largest_rest = std::max(largest_rest, s.peak.total - kept);
  }
  return persistent + largest_rest;
}

void check_device_memory(const std::vector<schedule::Schedule>& schedules,
                         const std::string& device) {
  const std::int64_t free = device == "cuda" ? cuda_free_bytes() : host_available_bytes();
  const std::int64_t need = run_memory_need(schedules);
  if (free < 0 || need <= free) return;
  throw InputError(fmt::format(
      "--trace: expected a model whose training step fits {} ({}), but the {} schedule(s) "
      "run need {} at least (each one's weights and optimizer state, one step's gradients and "
      "activations)",
      device_memory_name(device), size_text(free), schedules.size(), size_text(need)));
}

void guard_out_of_memory(const std::vector<schedule::Schedule>& schedules,
                         const std::string& device, const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::OutOfMemoryError& e) {
    throw_out_of_memory(schedules, device, e.what_without_backtrace());
  } catch (const std::bad_alloc& e) {
    throw_out_of_memory(schedules, device, e.what());
  } catch (const c10::Error& e) {
    // DefaultCPUAllocator throws a plain c10::Error (c10/core/impl/alloc_cpu.cpp): "can't
    // allocate memory: you tried to allocate N bytes" in libtorch 1.13, "not enough memory:
    // you tried to allocate ..." later. Every other libtorch error is not ours to rename.
    const std::string what = e.what_without_backtrace();
    if (what.find("you tried to allocate") == std::string::npos) throw;
    throw_out_of_memory(schedules, device, what);
  }
}

}  // namespace fusim::backend
