#pragma once
// glibc's malloc hands large blocks (over 128 KiB, adaptively up to 32 MiB) to mmap and
// gives them back on free, so a libtorch CPU step that allocates the same temporaries every
// step (Adam's denom, activations) pays page faults for every page, every step. In a VM
// that is slow and erratic: here it tripled eager MLP step times and spread them by 20-40%.
// A tuned trainer avoids it (jemalloc/tcmalloc, or these settings); so do measured runs.
namespace fusim::backend {

// Keeps freed blocks of up to 32 MiB in the heap and never trims it. Idempotent.
void keep_freed_memory_in_heap();

}  // namespace fusim::backend
