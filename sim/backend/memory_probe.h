#pragma once
// Micro-benchmarks of the host's memory system and cores, for `fusim calibrate`.
// No torch here; plain C++ threads.
#include <cstdint>
#include <vector>

namespace fusim::backend::probe {

// Average load-to-use latency in ns of a dependent pointer chase through `bytes` of memory:
// one pointer per 64 B line, lines visited in one random cycle (Sattolo's algorithm), so
// that hardware prefetchers cannot follow. The buffer asks for transparent huge pages
// (madvise MADV_HUGEPAGE) so that TLB misses do not pollute the large footprints.
double pointer_chase_ns(std::int64_t bytes, std::uint64_t seed);

// STREAM kernels (McCalpin, https://www.cs.virginia.edu/stream/ref.html) on arrays of
// `bytes` each, split over `threads` threads; best of `repeats` in GB/s (1e9 B/s), bytes
// counted as STREAM does: read 8 B, copy 16 B, triad 24 B per element (no write-allocate).
struct Bandwidth {
  double read = 0, copy = 0, triad = 0;
};
Bandwidth stream_bandwidth(std::int64_t bytes, int threads, int repeats);

// GB/s of a triad (a = b + 3c, 24 B per element) over `footprint` bytes in all, repeated
// in place with `threads` threads: the streaming bandwidth of the level that holds it.
// Best of 3 runs.
double triad_gbs(std::int64_t footprint, int threads);

// The host's DRAM streaming bandwidth right now: triad_gbs over kDramProbeBytes with
// `threads` threads (~20-40 ms). `calibrate` records it (the machine file's
// "host.dram_triad_gbs") and `run` samples it once per round of blocks, so that a run can
// say how far the memory bandwidth it had was from the calibrated one: on a shared VM it
// moves by 2x within a minute (other tenants), and memory-bound ops' times move with it.
// 128 MiB: past the LLC of the hosts calibrate sees (8-60 MiB), yet cheap to allocate.
inline constexpr std::int64_t kDramProbeBytes = std::int64_t(128) << 20;
// cpus (may be empty): thread t runs on cpus[t], as `run` pins its intra-op threads.
double dram_probe_gbs(int threads, const std::vector<int>& cpus = {});

// Nanoseconds per 64 B line for the second of `cpus` to chase a random pointer cycle over
// kCoreToCoreBytes that the first has just written (median of kCoreToCoreLaps laps): how far
// apart the two cores are. On the 2-core EPYC VM it reads 13-14 ns while the two vCPUs share
// a chiplet's L3 and 67-70 ns while they do not, and the hypervisor moves them between the
// two within minutes; an op that reads what the other core just wrote (a backward-fused
// update right after its backward op) pays for it (README, Predict and validate). `run`
// samples it once per round of blocks. 0 with fewer than two cpus.
inline constexpr std::int64_t kCoreToCoreBytes = 64 << 10;  // inside either core's L2
inline constexpr int kCoreToCoreLaps = 64;
double core_to_core_ns(const std::vector<int>& cpus);

// Core clock in MHz from a chain of dependent 64-bit integer multiplies (IMUL r64 latency 3
// on Intel since Core 2 and AMD since Zen; memory_probe.cpp says why not adds).
double core_clock_mhz();

// FP32 FLOP per cycle of one core: many independent FMA chains at the widest vector width
// the CPU reports (AVX-512F, else AVX2+FMA, else SSE), measured against `clock_mhz`.
double vector_flops_per_cycle(double clock_mhz);

}  // namespace fusim::backend::probe
