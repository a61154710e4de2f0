#pragma once
// Resource guards of the real backend (issue 21, point 3): a run, validation or profile
// whose memory need exceeds what its device has is refused before allocating, and an
// allocation libtorch refuses anyway ends in one line naming the need (exit code 2), not
// in a std::terminate from an exception nothing catches.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "schedule/schedule.h"

namespace fusim::backend {

// The bytes executing `schedules` at once needs at least (run_schedules keeps every
// ordering's state alive while it interleaves them): each schedule's weights and optimizer
// state, plus the largest rest of one schedule's allocator peak (its gradients, activations
// and temporaries: one ordering runs at a time). From the schedules' own allocator model
// (schedule/allocator.h); libtorch adds its caching and workspace on top, so it is a lower
// bound and never refuses a run that fits.
std::int64_t run_memory_need(const std::vector<schedule::Schedule>& schedules);

// Refuses (InputError naming --trace) a run whose need exceeds what `device` has free:
// MemAvailable of /proc/meminfo on "cpu"; on "cuda" (a CUDA libtorch only) device 0's free
// memory (cudaMemGetInfo) plus what libtorch's caching allocator holds unused. Nothing is
// checked where the free memory cannot be read.
void check_device_memory(const std::vector<schedule::Schedule>& schedules,
                         const std::string& device);

// Runs `body`, the execution of `schedules` on `device`: libtorch's out-of-memory errors
// (c10::OutOfMemoryError from the CUDA caching allocator, the CPU allocators'
// std::bad_alloc and DefaultCPUAllocator's "you tried to allocate") become an InputError
// naming --trace, the device and the estimated need, with libtorch's own first line.
void guard_out_of_memory(const std::vector<schedule::Schedule>& schedules,
                         const std::string& device, const std::function<void()>& body);

}  // namespace fusim::backend
