#include "schedule/allocator.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/int_math.h"

namespace fusim::schedule {

std::int64_t CachingAllocator::round_size(std::int64_t bytes) {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  return round_up(bytes, kMinBlockSize);
}

std::uint64_t CachingAllocator::allocate(std::int64_t bytes, int stream) {
  const std::int64_t size = round_size(bytes);
  const bool small = size <= kSmallSize;
  auto& pool = small ? small_pool_ : large_pool_;
  auto it = pool.lower_bound({stream, size, 0});
  std::uint64_t address = 0;
  if (it != pool.end() && std::get<0>(*it) == stream) {
    address = std::get<2>(*it);
    pool.erase(it);
  } else {  // no cached block fits: a new segment (cudaMalloc)
    std::int64_t segment = small                   ? kSmallBuffer
                           : size < kMinLargeAlloc ? kLargeBuffer
                                                   : round_up(size, kRoundLarge);
    address = next_segment_;
    next_segment_ += std::uint64_t(segment);
    reserved_ += segment;
    blocks_[address] = Block{segment, stream, segments_++, small, true};
  }
  Block& block = blocks_.at(address);
  const std::int64_t rest = block.size - size;
  if (small ? rest >= kMinBlockSize : rest > kSmallSize) {  // should_split
    Block remainder{rest, stream, block.segment, small, true};
    block.size = size;
    blocks_[address + std::uint64_t(size)] = remainder;
    pool.insert({stream, rest, address + std::uint64_t(size)});
  }
  blocks_.at(address).free = false;
  return address;
}

void CachingAllocator::free(std::uint64_t address) {
  auto it = blocks_.find(address);
  FUSIM_ASSERT(it != blocks_.end() && !it->second.free, "free of an allocated block");
  auto& pool = it->second.small ? small_pool_ : large_pool_;
  it->second.free = true;
  // Merge with the next block, then with the previous one, inside the same segment.
  auto next = std::next(it);
  if (next != blocks_.end() && next->second.free && next->second.segment == it->second.segment) {
    pool.erase({next->second.stream, next->second.size, next->first});
    it->second.size += next->second.size;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.free && prev->second.segment == it->second.segment) {
      pool.erase({prev->second.stream, prev->second.size, prev->first});
      prev->second.size += it->second.size;
      blocks_.erase(it);
      it = prev;
    }
  }
  pool.insert({it->second.stream, it->second.size, it->first});
}

std::int64_t CachingAllocator::block_size(std::uint64_t address) const {
  return blocks_.at(address).size;
}

namespace {
struct Live {
  std::int64_t by_category[6] = {0, 0, 0, 0, 0, 0};
  std::int64_t total = 0;
  void add(TensorCategory c, std::int64_t bytes) {
    by_category[int(c)] += bytes;
    total += bytes;
  }
};

// The phase an op runs in: its step, except a forward-fused U that runs inside the next
// step's forward.
int phase(const Schedule& s, const Op& op) {
  if (op.kind == OpKind::Update && !s.layer_modes.empty() &&
      s.layer_modes[std::size_t(op.layer)] == LayerMode::Forward)
    return op.step + 1;
  return op.step;
}
}  // namespace

void assign_memory(Schedule& schedule) {
  const std::size_t n = schedule.tensors.size();
  // First and last access as (op, pass).
  std::vector<std::pair<int, int>> first(n, {-1, -1}), last(n, {-1, -1});
  for (const auto& op : schedule.ops)
    for (std::size_t p = 0; p < op.passes.size(); ++p)
      for (auto a : op.passes[p].accesses) {
        auto t = std::size_t(a.tensor);
        if (first[t].first < 0) first[t] = {op.id, int(p)};
        last[t] = {op.id, int(p)};
      }
  auto persistent = [&](const Tensor& t) { return t.step < 0; };

  CachingAllocator allocator;
  Live live;
  MemoryPeak peak;
  auto note_peak = [&] {
    peak.max_grads = std::max(peak.max_grads, live.by_category[int(TensorCategory::Grads)]);
    if (live.total <= peak.total) return;
    peak.total = live.total;
    peak.weights = live.by_category[int(TensorCategory::Weights)];
    peak.grads = live.by_category[int(TensorCategory::Grads)];
    peak.optimizer_state = live.by_category[int(TensorCategory::OptimizerState)];
    peak.activations = live.by_category[int(TensorCategory::Activations)];
    peak.temporaries = live.by_category[int(TensorCategory::Temporaries)];
    peak.inputs = live.by_category[int(TensorCategory::Inputs)];
  };
  auto alloc = [&](Tensor& t, int stream) {
    t.address = allocator.allocate(t.bytes, stream);
    t.alloc_bytes = allocator.block_size(t.address);
    live.add(t.category, t.alloc_bytes);
  };

  // Persistent state first, as a model and its optimizer state exist before the step.
  for (auto& t : schedule.tensors)
    if (persistent(t)) {
      t.alloc_op = -1;
      t.free_op = -1;
      alloc(t, 0);
    }
  note_peak();

  // Which per-step tensors start and end at each (op, pass).
  std::map<std::pair<int, int>, std::vector<int>> starts, ends;
  for (auto& t : schedule.tensors) {
    if (persistent(t)) continue;
    auto i = std::size_t(t.id);
    FUSIM_ASSERT(first[i].first >= 0, "every per-step tensor is accessed: " + t.name);
    t.alloc_op = first[i].first;
    t.free_op = last[i].first;
    starts[first[i]].push_back(t.id);
    // Autograd and Python drop a tensor when its last user op finishes; only an
    // optimizer's temporaries die mid-op (e.g. `denom` of one tensor before the next
    // tensor's), which is what lets loop reuse the same block for every tensor.
    const Op& last_op = schedule.ops[std::size_t(t.free_op)];
    bool mid_op = last_op.kind == OpKind::Update && t.category == TensorCategory::Temporaries;
    ends[mid_op ? last[i] : std::make_pair(t.free_op, int(last_op.passes.size()) - 1)].push_back(
        t.id);
  }
  bool boundary_seen = false;
  for (const auto& op : schedule.ops) {
    if (!boundary_seen && phase(schedule, op) >= 1) {
      boundary_seen = true;
      peak.grads_at_step_boundary = live.by_category[int(TensorCategory::Grads)];
    }
    for (std::size_t p = 0; p < op.passes.size(); ++p) {
      if (auto it = starts.find({op.id, int(p)}); it != starts.end())
        for (int id : it->second) alloc(schedule.tensors[std::size_t(id)], op.stream);
      note_peak();
      if (auto it = ends.find({op.id, int(p)}); it != ends.end())
        for (int id : it->second) {
          auto& t = schedule.tensors[std::size_t(id)];
          allocator.free(t.address);
          live.add(t.category, -t.alloc_bytes);
        }
    }
  }
  peak.reserved = allocator.reserved();
  schedule.peak = peak;
}

}  // namespace fusim::schedule
