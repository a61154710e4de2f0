#pragma once
// glibc's malloc hands large blocks (over 128 KiB, adaptively up to 32 MiB) to mmap and
// gives them back on free, so a libtorch CPU step that allocates the same temporaries every
// step (Adam's denom, activations) pays page faults for every page, every step. In a VM
// that is slow and erratic: here it tripled eager MLP step times and spread them by 20-40%.
// A tuned trainer avoids it (jemalloc/tcmalloc, or these settings); so do measured runs.
#include <vector>

#include "schedule/schedule.h"

namespace fusim::backend {

// Keeps freed blocks of up to 32 MiB in the heap and never trims it. Idempotent.
void keep_freed_memory_in_heap();

// Refuses (InputError naming --trace) a CPU run whose persistent state alone, the weights
// and optimizer state of every schedule (each ordering holds its own copy at once), exceeds
// this host's available memory (MemAvailable of /proc/meminfo): a 2^40-parameter trace
// ended in an uncaught allocation error from libtorch. A lower bound of the need, so it
// never refuses a run that fits. Nothing is checked where /proc/meminfo is unreadable.
void check_host_memory(const std::vector<schedule::Schedule>& schedules);

}  // namespace fusim::backend
