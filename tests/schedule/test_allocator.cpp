// The caching-allocator model: rounding, best fit, splitting, merging, reuse, streams.
#include <catch2/catch.hpp>

#include "schedule/allocator.h"

using fusim::schedule::CachingAllocator;

namespace {
constexpr std::uint64_t kBase = CachingAllocator::kBaseAddress;
constexpr std::int64_t MiB = 1 << 20;
}  // namespace

TEST_CASE("sizes round up to 512 B") {
  CHECK(CachingAllocator::round_size(1) == 512);
  CHECK(CachingAllocator::round_size(512) == 512);
  CHECK(CachingAllocator::round_size(513) == 1024);
}

TEST_CASE("small pool: a freed block is reused best-fit and split") {
  CachingAllocator a;
  auto x = a.allocate(1000, 0);  // 1024 B at the start of a new 2 MiB segment
  auto y = a.allocate(1000, 0);
  CHECK(x == kBase);
  CHECK(y == kBase + 1024);
  CHECK(a.reserved() == 2 * MiB);
  a.free(x);
  // Free now: [base, 1024) and the segment's tail; 512 B fits the 1024 hole best.
  CHECK(a.allocate(512, 0) == kBase);
  CHECK(a.allocate(512, 0) == kBase + 512);   // the 512 B left of the split
  CHECK(a.allocate(512, 0) == kBase + 2048);  // then the tail
  CHECK(a.reserved() == 2 * MiB);
}

TEST_CASE("large pool: 20 MiB segments, split only above 1 MiB, merged on free") {
  CachingAllocator a;
  auto x = a.allocate(3 * MiB, 0);
  CHECK(a.reserved() == 20 * MiB);
  CHECK(a.block_size(x) == 3 * MiB);
  a.free(x);                         // merges with the 17 MiB rest back into one 20 MiB block
  auto y = a.allocate(12 * MiB, 0);  // >= 10 MiB, but the cached 20 MiB block fits
  CHECK(y == x);
  CHECK(a.reserved() == 20 * MiB);
  // 19.5 MiB: a new segment rounded to 2 MiB (20 MiB); the 0.5 MiB rest is not split off.
  auto z = a.allocate(19 * MiB + MiB / 2, 0);
  CHECK(z == kBase + std::uint64_t(20 * MiB));
  CHECK(a.block_size(z) == 20 * MiB);
  CHECK(a.reserved() == 40 * MiB);
}

TEST_CASE("blocks are cached per stream") {
  CachingAllocator a;
  auto x = a.allocate(4096, 0);
  a.free(x);
  auto y = a.allocate(4096, 1);  // stream 1 may not take stream 0's cached block
  CHECK(y == kBase + std::uint64_t(2 * MiB));
  CHECK(a.allocate(4096, 0) == x);
}
