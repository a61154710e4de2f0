#include "backend/memory_probe.h"

#include <immintrin.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "core/int_math.h"

namespace fusim::backend::probe {
namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The calling thread's CPU time: single-threaded probes (clock, FMA, pointer chase) time
// with it so that other processes sharing the core while the calibration runs (a compile
// on a 2-core box) do not read as a slower clock or a longer load latency.
double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Page-aligned memory with transparent huge pages requested (2 MiB alignment).
struct HugeBuffer {
  explicit HugeBuffer(std::size_t bytes) : size(bytes) {
    constexpr std::size_t kAlign = 2u << 20;
    data = std::aligned_alloc(kAlign, round_up(bytes, kAlign));
    if (data) madvise(data, bytes, MADV_HUGEPAGE);
  }
  ~HugeBuffer() { std::free(data); }
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  void* data = nullptr;
  std::size_t size = 0;
};

// `cpus` (may be empty): thread t first pins itself to cpus[t % size]. New threads inherit
// the creator's affinity, and `run` has pinned its main thread to one core: unpinned, every
// probe thread would share that core.
void run_threads(int threads, const std::function<void(int)>& body,
                 const std::vector<int>& cpus = {}) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      if (!cpus.empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[std::size_t(t) % cpus.size()], &set);
        sched_setaffinity(0, sizeof(set), &set);  // best effort: a refusal only costs speed
      }
      body(t);
    });
  for (auto& th : pool) th.join();
}
// STREAM's three arrays of n doubles, each part first touched by the thread that will use
// it (NUMA placement as STREAM does).
struct StreamArrays {
  StreamArrays(std::size_t n, int threads, const std::vector<int>& cpus = {})
      : ba(n * sizeof(double)), bb(n * sizeof(double)), bc(n * sizeof(double)) {
    run_threads(
        threads,
        [&](int t) {
          const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
          for (std::size_t i = lo; i < hi; ++i) a()[i] = 1.0, b()[i] = 2.0, c()[i] = 0.5;
        },
        cpus);
  }
  double* a() const { return static_cast<double*>(ba.data); }
  double* b() const { return static_cast<double*>(bb.data); }
  double* c() const { return static_cast<double*>(bc.data); }
  HugeBuffer ba, bb, bc;
};
}  // namespace

namespace {
// Sattolo's algorithm: a uniformly random permutation of [0, n) that is a single cycle.
std::vector<std::uint32_t> random_cycle(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> next(n);
  std::iota(next.begin(), next.end(), 0u);
  std::mt19937_64 rng(seed);
  for (std::size_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(next[i], next[pick(rng)]);
  }
  return next;
}
}  // namespace

double pointer_chase_ns(std::int64_t bytes, std::uint64_t seed) {
  constexpr std::size_t kLine = 64;
  const std::size_t lines = std::max<std::size_t>(2, std::size_t(bytes) / kLine);
  HugeBuffer buffer(lines * kLine);
  auto* base = static_cast<char*>(buffer.data);
  const std::vector<std::uint32_t> next = random_cycle(lines, seed);
  for (std::size_t i = 0; i < lines; ++i)
    *reinterpret_cast<void**>(base + i * kLine) = base + std::size_t(next[i]) * kLine;
  // One lap, and at least 1 Mi loads (~1 ms when everything hits L1).
  const std::size_t loads = std::max<std::size_t>(lines, std::size_t(1) << 20);
  void* p = base;
  for (std::size_t i = 0; i < lines; ++i) p = *static_cast<void**>(p);  // warm (and TLB)
  const double t0 = thread_seconds();
  for (std::size_t i = 0; i < loads; ++i) p = *static_cast<void**>(p);
  const double s = thread_seconds() - t0;
  asm volatile("" : : "r"(p));  // keep the chain
  return s * 1e9 / double(loads);
}

double core_to_core_ns(const std::vector<int>& cpus) {
  if (cpus.size() < 2) return 0;
  constexpr std::size_t kLine = 64, lines = std::size_t(kCoreToCoreBytes) / kLine;
  const std::vector<std::uint32_t> next = random_cycle(lines, 7);  // no prefetch to follow
  HugeBuffer buffer(lines * kLine);
  auto* base = static_cast<char*>(buffer.data);
  std::atomic<int> turn{0};  // 0: the writer's lap, 1: the reader's
  std::vector<double> ns;
  run_threads(2,
              [&](int t) {
                for (int lap = 0; lap < kCoreToCoreLaps; ++lap) {
                  while (turn.load(std::memory_order_acquire) != t) {
                  }
                  if (t == 0) {
                    for (std::size_t i = 0; i < lines; ++i)
                      *reinterpret_cast<void**>(base + i * kLine) =
                          base + std::size_t(next[i]) * kLine;
                  } else {
                    void* q = base;
                    const auto t0 = Clock::now();
                    for (std::size_t i = 0; i < lines; ++i) q = *static_cast<void**>(q);
                    ns.push_back(seconds_since(t0) * 1e9 / double(lines));
                    asm volatile("" : : "r"(q));
                  }
                  turn.store(1 - t, std::memory_order_release);
                }
              },
              {cpus[0], cpus[1]});
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

Bandwidth stream_bandwidth(std::int64_t bytes, int threads, int repeats) {
  const std::size_t n = std::size_t(bytes) / sizeof(double);
  StreamArrays arrays(n, threads);
  double *a = arrays.a(), *b = arrays.b(), *c = arrays.c();
  std::vector<double> sums(std::size_t(threads) * 8, 0.0);  // one cache line per thread
  auto best = [&](auto kernel) {
    double t_best = 1e30;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = Clock::now();
      run_threads(threads, [&](int t) { kernel(n * t / threads, n * (t + 1) / threads, t); });
      t_best = std::min(t_best, seconds_since(t0));
    }
    return t_best;
  };
  Bandwidth bw;
  const double elems = double(n);
  bw.read = 8 * elems / best([&](std::size_t lo, std::size_t hi, int t) {
              double s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // independent chains: not latency bound
              std::size_t i = lo;
              for (; i + 4 <= hi; i += 4)
                s0 += a[i], s1 += a[i + 1], s2 += a[i + 2], s3 += a[i + 3];
              for (; i < hi; ++i) s0 += a[i];
              sums[std::size_t(t) * 8] += s0 + s1 + s2 + s3;
            }) /
            1e9;
  bw.copy = 16 * elems / best([&](std::size_t lo, std::size_t hi, int) {
              for (std::size_t i = lo; i < hi; ++i) c[i] = a[i];
            }) /
            1e9;
  bw.triad = 24 * elems / best([&](std::size_t lo, std::size_t hi, int) {
               for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0 * c[i];
             }) /
             1e9;
  asm volatile("" : : "r"(sums.data()) : "memory");
  return bw;
}

namespace {
double triad_gbs_on(std::int64_t footprint, int threads, const std::vector<int>& cpus);
}

double triad_gbs(std::int64_t footprint, int threads) {
  return triad_gbs_on(footprint, threads, {});
}

double dram_probe_gbs(int threads, const std::vector<int>& cpus) {
  return triad_gbs_on(kDramProbeBytes, std::max(1, threads), cpus);
}

namespace {
double triad_gbs_on(std::int64_t footprint, int threads, const std::vector<int>& cpus) {
  // Three arrays of footprint / 3 bytes; each thread repeats the triad over its own slice
  // `inner` times per timed run, so that thread start-up is amortised (>= ~256 MiB moved
  // per run) and a footprint that fits stays in the caches between passes.
  const std::size_t n = std::max<std::size_t>(64, std::size_t(footprint) / 3 / sizeof(double));
  StreamArrays arrays(n, threads, cpus);
  double *a = arrays.a(), *b = arrays.b(), *c = arrays.c();
  const int inner = int(std::max<std::int64_t>(1, (std::int64_t(256) << 20) / footprint));
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run_threads(
        threads,
        [&](int t) {
          const std::size_t lo = n * t / threads, hi = n * (t + 1) / threads;
          for (int k = 0; k < inner; ++k) {
            for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0 * c[i];
            asm volatile("" : : "r"(a) : "memory");
          }
        },
        cpus);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 24.0 * double(n) * inner / best / 1e9;
}
}  // namespace

double core_clock_mhz() {
  // A chain of dependent 64-bit multiplies: 3 cycles each on every x86-64 core of the last 15
  // years (Intel since Core 2, AMD since Zen: Agner Fog's instruction tables, IMUL r64,r64).
  // Not dependent adds: since Golden Cove the renamer folds chains of immediate adds, so an
  // add chain runs several "cycles" per cycle (it read 11.6 GHz on a ~3 GHz Xeon).
  constexpr std::uint64_t kIterations = 20'000'000;  // 8 multiplies each: ~0.16 s at 3 GHz
  constexpr double kImulLatency = 3;
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    std::uint64_t x = 3, n = kIterations;
    const std::uint64_t m = 1;  // in a register, so nothing can fold the multiplies away
    const double t0 = thread_seconds();
    asm volatile(
        "1:\n\t"
        "imul %2, %0\n\timul %2, %0\n\timul %2, %0\n\timul %2, %0\n\t"
        "imul %2, %0\n\timul %2, %0\n\timul %2, %0\n\timul %2, %0\n\t"
        "dec %1\n\tjnz 1b"
        : "+r"(x), "+r"(n)
        : "r"(m));
    best = std::min(best, thread_seconds() - t0);
  }
  return 8.0 * kImulLatency * double(kIterations) / best / 1e6;
}

namespace {
// 12 independent accumulators hide the FMA latency (4 cycles) on 2-3 FMA pipes.
__attribute__((target("avx512f"))) double fma_avx512(std::uint64_t iterations) {
  __m512 acc[12];
  for (auto& v : acc) v = _mm512_set1_ps(1.0f);
  const __m512 m = _mm512_set1_ps(0.999999f), k = _mm512_set1_ps(1e-7f);
  const double t0 = thread_seconds();
  for (std::uint64_t i = 0; i < iterations; ++i)
    for (auto& v : acc) v = _mm512_fmadd_ps(v, m, k);
  const double s = thread_seconds() - t0;
  alignas(64) float out[16];
  __m512 sum = acc[0];
  for (int j = 1; j < 12; ++j) sum = _mm512_add_ps(sum, acc[j]);
  _mm512_store_ps(out, sum);
  asm volatile("" : : "r"(out) : "memory");
  return double(iterations) * 12 * 16 * 2 / s;
}

__attribute__((target("avx2,fma"))) double fma_avx2(std::uint64_t iterations) {
  __m256 acc[12];
  for (auto& v : acc) v = _mm256_set1_ps(1.0f);
  const __m256 m = _mm256_set1_ps(0.999999f), k = _mm256_set1_ps(1e-7f);
  const double t0 = thread_seconds();
  for (std::uint64_t i = 0; i < iterations; ++i)
    for (auto& v : acc) v = _mm256_fmadd_ps(v, m, k);
  const double s = thread_seconds() - t0;
  alignas(32) float out[8];
  __m256 sum = acc[0];
  for (int j = 1; j < 12; ++j) sum = _mm256_add_ps(sum, acc[j]);
  _mm256_store_ps(out, sum);
  asm volatile("" : : "r"(out) : "memory");
  return double(iterations) * 12 * 8 * 2 / s;
}
}  // namespace

double vector_flops_per_cycle(double clock_mhz) {
  constexpr std::uint64_t kIterations = 4'000'000;
  double flops = 0;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    flops = fma_avx512(kIterations);
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    flops = fma_avx2(kIterations);
  else
    return 8;  // SSE: 4-wide add + 4-wide mul per cycle
  return flops / (clock_mhz * 1e6);
}

}  // namespace fusim::backend::probe
