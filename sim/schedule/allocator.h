#pragma once
// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), so
// tensors get realistic addresses and freed memory is reused by later allocations:
// - sizes round up to 512 B (kMinBlockSize);
// - requests <= 1 MiB (kSmallSize) come from the small pool, carved out of 2 MiB segments
//   (kSmallBuffer); larger ones from the large pool: 20 MiB segments (kLargeBuffer) for
//   requests < 10 MiB (kMinLargeAlloc), else a segment rounded up to 2 MiB (kRoundLarge);
// - best fit: the smallest free block of the pool and stream that is big enough, lowest
//   address on ties (the pool is a set ordered by (stream, size, address));
// - a block is split when the rest is >= 512 B (small pool) or > 1 MiB (large pool);
// - a freed block merges with free neighbours of its segment and returns to its pool;
//   segments are never given back (no empty_cache).
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "schedule/schedule.h"

namespace fusim::schedule {

class CachingAllocator {
 public:
  static constexpr std::int64_t kMinBlockSize = 512;
  static constexpr std::int64_t kSmallSize = 1 << 20;
  static constexpr std::int64_t kSmallBuffer = 2 << 20;
  static constexpr std::int64_t kLargeBuffer = 20 << 20;
  static constexpr std::int64_t kMinLargeAlloc = 10 << 20;
  static constexpr std::int64_t kRoundLarge = 2 << 20;
  static constexpr std::uint64_t kBaseAddress = 0x7f0000000000;  // first segment

  static std::int64_t round_size(std::int64_t bytes);

  // Returns the block's address; block_size(address) is what it occupies (>= rounded size
  // when the rest of a found block was too small to split off).
  std::uint64_t allocate(std::int64_t bytes, int stream);
  void free(std::uint64_t address);
  std::int64_t block_size(std::uint64_t address) const;
  std::int64_t reserved() const { return reserved_; }

 private:
  struct Block {
    std::int64_t size = 0;
    int stream = 0;
    int segment = 0;
    bool small = false;
    bool free = false;
  };
  using PoolKey = std::tuple<int, std::int64_t, std::uint64_t>;  // stream, size, address

  std::map<std::uint64_t, Block> blocks_;  // by address
  std::set<PoolKey> small_pool_, large_pool_;
  std::uint64_t next_segment_ = kBaseAddress;
  int segments_ = 0;
  std::int64_t reserved_ = 0;
};

// Lifetimes (alloc_op/free_op from the first and last access), addresses and peak memory
// of a schedule whose passes are complete. Weights (and buffers) and optimizer state live
// for the whole run; every per-step tensor is allocated right before the pass that first
// touches it and freed when the op that last touches it ends (an optimizer temporary:
// right after its last pass). Gradients follow set_to_none semantics (PyTorch 2.x
// zero_grad default, and the optimizer-in-backward tutorial's hook): freed after their U.
void assign_memory(Schedule& schedule);

}  // namespace fusim::schedule
